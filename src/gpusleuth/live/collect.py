"""Collect what a GPU diagnosis needs from a live cluster: artifacts with provenance, gaps, a manifest.

Phases (each one concurrent inside, bounded by the Api's semaphore):

1. cluster: /version, nodes, pods in all namespaces (paginated and filtered page by page, so a 20k-pod
   cluster never sits in memory), ClusterPolicy / NVIDIADriver / NicClusterPolicy, RuntimeClasses;
2. namespaces: the operators' namespaces (given, or discovered from where operand pods run) get their
   DaemonSets, Deployments, ConfigMaps, events and Helm releases; other namespaces only the events of
   their GPU pods; nodes their events;
3. logs: every operand container's current log and, when it restarted, its previous one (tail-limited,
   with timestamps, init containers included);
4. node probes, only when asked (gpusleuth.live.probes).

Objects are stored as ``kubectl get -o json`` would print them (a ``List`` whose items carry apiVersion
and kind), so the same parsers read a bundle, a live run and a user's pasted JSON. Everything is redacted
before it becomes an Artifact. A request that fails for good (403, timeout, 5xx after retries) becomes a
gap naming the resource and the reason, and the rest goes on.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Awaitable, Callable, Protocol
from urllib.parse import urlencode

from gpusleuth import __version__
from gpusleuth.live import helm
from gpusleuth.live.api import Api, ApiFailure
from gpusleuth.live.plan import chart_wanted, is_gpu_node, is_gpu_related, is_operand, keep_configmap, log_targets, rules, strip
from gpusleuth.live.redact import Redactor
from gpusleuth.live.resources import BY_KIND, Resource
from gpusleuth.model.finding import Gap

SCHEMA = "gpusleuth/bundle/v1"
CHUNK = 500  # objects per artifact file: keeps every file far below the readers' per-file cap


def _iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_iso() -> str:
    return _iso(datetime.now(timezone.utc))


def dump_json(doc) -> bytes:
    """Pretty JSON (4 spaces, like kubectl): one key per line, so evidence can cite lines."""
    try:
        import msgspec  # a lightkube dependency: C-speed pretty printing on the live path

        return msgspec.json.format(msgspec.json.encode(doc), indent=4) + b"\n"
    except ImportError:  # pragma: no cover - lightkube always brings msgspec
        return (json.dumps(doc, indent=4, ensure_ascii=False) + "\n").encode()


@dataclass
class Artifact:
    name: str  # path inside the bundle
    data: bytes
    record: dict  # provenance, as written to manifest.json


@dataclass
class Options:
    namespaces: tuple[str, ...] = ()  # the operators' namespaces; empty: discover them
    logs: bool = True
    tail_lines: int | None = None  # None: knowledge/live.toml [logs]
    limit_bytes: int | None = None
    page_size: int = 500
    node_probes: bool = False
    max_workers: int = 8  # node probes in flight
    probe_namespace: str | None = None
    probe_image: str | None = None
    probe_timeout: float | None = None


class Progress(Protocol):
    def task(self, key: str, label: str, total: int | None = None) -> None: ...
    def advance(self, key: str, n: int = 1) -> None: ...
    def total(self, key: str, total: int) -> None: ...


class NullProgress:
    def task(self, key: str, label: str, total: int | None = None) -> None:
        pass

    def advance(self, key: str, n: int = 1) -> None:
        pass

    def total(self, key: str, total: int) -> None:
        pass


@dataclass
class Collection:
    artifacts: list[Artifact]
    manifest: dict

    @property
    def gaps(self) -> list[Gap]:
        return [Gap(g["what"], g["why"], g.get("artifact")) for g in self.manifest.get("gaps", [])]


def _query(path: str, params: dict | None) -> str:
    params = {k: v for k, v in (params or {}).items() if v is not None}
    return f"{path}?{urlencode(params)}" if params else path


@dataclass
class Collector:
    api: Api
    options: Options = field(default_factory=Options)
    progress: Progress = field(default_factory=NullProgress)

    def __post_init__(self) -> None:
        self.artifacts: list[Artifact] = []
        self.gaps: list[dict] = []
        self.requests: list[dict] = []  # notable requests that produced no artifact (404, empty logs)
        self.redactor = Redactor()
        self.nodes: dict[str, dict] = {}
        self.pods: dict[str, dict] = {}  # uid or ns/name -> pod
        self.operator_namespaces: list[str] = []
        self.discovered: dict[str, str] = {}  # namespace -> why it is an operator namespace
        self.probe_record: dict | None = None
        self.version: dict = {}
        self.server_time: datetime | None = None
        self._resources_done = 0
        self._all_nodes: dict[str, dict] = {}  # non-GPU nodes, until we know which ones run GPU pods
        self._nodes_record: dict | None = None  # None: the node list could not be read
        self._pods_record: dict = {"source": "api", "api": "/api/v1/pods"}
        r = rules()
        self.tail = self.options.tail_lines or r.tail_lines
        self.limit_bytes = self.options.limit_bytes or r.limit_bytes

    # -- plumbing ---------------------------------------------------------------------------------

    def gap(self, what: str, why: str, artifact: str | None = None) -> None:
        self.gaps.append({"what": what, "why": why, "artifact": artifact})

    def add_json(self, name: str, doc, record: dict, redacted: bool = False) -> None:
        if not redacted:
            doc = self.redactor.obj(doc, name)
        data = dump_json(doc)
        self.artifacts.append(Artifact(name, data, {"name": name, **record, "size": len(data)}))

    def add_text(self, name: str, text: str, record: dict) -> None:
        data = self.redactor.text(text, name).encode()
        self.artifacts.append(Artifact(name, data, {"name": name, **record, "size": len(data)}))

    async def list_all(self, res: Resource, namespace: str | None = None, params: dict | None = None, keep: Callable[[dict], bool] | None = None, what: str | None = None) -> tuple[list[dict], dict] | None:
        """Every item of a list (filtered page by page), or None with a gap when it cannot be read."""
        path = res.path(namespace)
        api_path = _query(path, params)
        items: list[dict] = []
        pages = requests = 0
        status = 0
        try:
            async for page, resp in self.api.list_pages(path, params, limit=self.options.page_size):
                pages += 1
                requests += resp.attempts
                status = resp.status
                for obj in page:
                    obj.setdefault("apiVersion", res.api_version)
                    obj.setdefault("kind", res.kind)
                    if keep is None or keep(obj):
                        items.append(strip(obj))
        except ApiFailure as exc:
            label = what or f"{res.qualified}" + (f" in namespace {namespace}" if namespace else "")
            if exc.status == 404 and not items:
                self.requests.append({"api": api_path, "status": 404, "time": now_iso(), "note": f"{res.qualified} not served (not installed)"})
                return None
            why = _why(exc) + (f"; only the first {len(items)} item(s) were read" if items else "")
            self.gap(f"{label} (GET {api_path})", why)
            if not items:
                return None
        record = {"source": "api", "api": api_path, "status": status, "time": now_iso(), "pages": pages, "requests": requests}
        return items, record

    def write_list(self, base: str, items: list[dict], record: dict, command: str) -> None:
        """`base`.json, then `base`-2.json ... with at most CHUNK objects each."""
        chunks = [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)] or [[]]
        for n, chunk in enumerate(chunks, 1):
            name = f"{base}.json" if n == 1 else f"{base}-{n}.json"
            doc = {"apiVersion": "v1", "kind": "List", "items": chunk, "metadata": {"resourceVersion": ""}}
            part = {"part": n, "parts": len(chunks)} if len(chunks) > 1 else {}
            self.add_json(name, doc, {**record, "command": command, "items": len(chunk), **part})

    async def guarded(self, what: str, job: Callable[..., Awaitable], *args) -> None:
        """Run one unit of collection, job(*args); a bug in it is a gap, never the end of the run.
        (The coroutine is made here, so a run cancelled before this starts leaves none un-awaited.)"""
        try:
            await job(*args)
        except ApiFailure as exc:
            self.gap(what, _why(exc))
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - isolate collector bugs to the resource they hit
            self.gap(what, f"internal error in gpusleuth: {type(exc).__name__}: {exc}")

    # -- phases -----------------------------------------------------------------------------------

    async def run(self) -> Collection:
        started = now_iso()
        self.progress.task("resources", "cluster resources", None)
        try:
            await self.guarded("cluster version (GET /version)", self.get_version)
            await self.phase_cluster()
            await self.phase_namespaces()
            if self.options.logs:
                await self.phase_logs()
            if self.options.node_probes:
                from gpusleuth.live.probes import run_probes

                await run_probes(self)
            else:
                self.gap("node files", "not read: the nodes' containerd/CRI-O configs, kernel log (Xids), lsmod, modinfo and "
                         "nvidia-smi are only reachable on the node; rerun with --node-probes (short-lived privileged pods, "
                         "deleted afterwards) or paste them")
        finally:
            self.manifest = self.build_manifest(started)
        return Collection(sorted(self.artifacts, key=lambda a: a.name), self.manifest)

    async def phase_cluster(self) -> None:
        wanted_ns = set(self.options.namespaces) or set(rules().default_namespaces)
        jobs = [
            self.guarded("nodes", self.get_nodes),
            self.guarded("pods", self.get_pods, wanted_ns),
            self.guarded("runtimeclasses", self.get_cluster_list, "RuntimeClass", "kubectl get runtimeclasses -o json"),
            self.guarded("clusterpolicies", self.get_cluster_list, "ClusterPolicy", "kubectl get clusterpolicies.nvidia.com -o json"),
            self.guarded("nvidiadrivers", self.get_cluster_list, "NVIDIADriver", "kubectl get nvidiadrivers.nvidia.com -o json"),
            self.guarded("nicclusterpolicies", self.get_cluster_list, "NicClusterPolicy", "kubectl get nicclusterpolicies.mellanox.com -o json"),
        ]
        if not self.options.namespaces:
            jobs.extend(self.guarded(f"namespace {ns}", self.probe_namespace, ns) for ns in rules().default_namespaces)
        self.progress.total("resources", len(jobs))
        await asyncio.gather(*jobs)
        self.progress.advance("resources", len(jobs))
        self._resources_done = len(jobs)
        # Namespaces found only now (operands outside the defaults): read all their pods too.
        if not self.options.namespaces:
            extra = sorted(set(self.discovered) - wanted_ns)
            await asyncio.gather(*(self.guarded(f"pods in namespace {ns}", self.get_pods_in, ns) for ns in extra))
            self.operator_namespaces = sorted(self.discovered)
        else:
            self.operator_namespaces = sorted(self.options.namespaces)
            for ns in self.operator_namespaces:
                self.discovered.setdefault(ns, "given with --namespace")
        # Nodes that run a kept pod are kept even without GPU labels (a GPU node whose NFD never ran).
        for name in {(p.get("spec") or {}).get("nodeName") for p in self.pods.values()} - set(self.nodes) - {None}:
            if name in self._all_nodes:
                self.nodes[name] = self._all_nodes[name]
        self._all_nodes.clear()
        self.write_pods()
        if self._nodes_record is not None:
            self.write_list("cluster/nodes", [self.nodes[n] for n in sorted(self.nodes)], self._nodes_record, "kubectl get nodes -o json")

    async def get_version(self) -> None:
        """Kept in the manifest, not as an artifact: it describes the source and is no evidence. Its Date
        header is the capture time: object timestamps are on the API server's clock, so ages measured
        from it are free of this machine's clock skew."""
        doc, resp = await self.api.get_json("/version")
        self.version = {k: v for k, v in doc.items() if isinstance(v, str)}
        self.server_time = resp.server_time()

    async def get_nodes(self) -> None:
        self.progress.task("nodes", "nodes", None)

        def keep(node: dict) -> bool:
            name = node["metadata"]["name"]
            self.progress.advance("nodes")
            if is_gpu_node(node):
                self.nodes[name] = node
                return True
            self._all_nodes[name] = strip(node)  # kept only until we know which nodes run GPU pods
            return False

        got = await self.list_all(BY_KIND["Node"], keep=keep)
        self.progress.total("nodes", len(self.nodes) + len(self._all_nodes))
        if got is not None:
            self._nodes_record = {**got[1], "filter": "GPU nodes and nodes running collected pods"}

    def _add_pod(self, pod: dict) -> None:
        meta = pod.get("metadata") or {}
        self.pods[meta.get("uid") or f"{meta.get('namespace')}/{meta.get('name')}"] = pod
        if is_operand(pod) and not self.options.namespaces:
            ns = meta.get("namespace")
            self.discovered.setdefault(ns, f"operand pod {meta.get('name')}")

    async def get_pods(self, namespaces: set[str]) -> None:
        self.progress.task("pods", "pods", None)
        seen = 0

        def keep(pod: dict) -> bool:
            nonlocal seen
            seen += 1
            self.progress.advance("pods")
            return is_gpu_related(pod, namespaces)

        got = await self.list_all(BY_KIND["Pod"], keep=keep, what="pods in all namespaces")
        self.progress.total("pods", seen)
        if got:
            for pod in got[0]:
                self._add_pod(pod)
            self._pods_record = {**got[1], "filter": "pods in the operators' namespaces, pods requesting nvidia.com/* (or rdma/*) resources, operand pods"}

    async def get_pods_in(self, namespace: str) -> None:
        got = await self.list_all(BY_KIND["Pod"], namespace)
        if got:
            for pod in got[0]:
                self._add_pod(pod)

    async def probe_namespace(self, namespace: str) -> None:
        try:
            await self.api.get_json(BY_KIND["Namespace"].path(name=namespace))
        except ApiFailure as exc:
            if exc.status in (404, 403):
                return  # absent, or we may not look: pods found there still make it an operator namespace
            raise
        self.discovered.setdefault(namespace, "default operator namespace (exists)")

    async def get_cluster_list(self, kind: str, command: str) -> None:
        res = BY_KIND[kind]
        got = await self.list_all(res)
        if got is not None:
            self.write_list(f"cluster/{res.qualified}", got[0], got[1], command)

    def write_pods(self) -> None:
        by_ns: dict[str, list[dict]] = {}
        for pod in self.pods.values():
            by_ns.setdefault(pod["metadata"].get("namespace", ""), []).append(pod)
        record = self._pods_record
        for ns, pods in sorted(by_ns.items()):
            pods.sort(key=lambda p: p["metadata"].get("name", ""))
            self.write_list(f"namespaces/{ns}/pods", pods, {**record, "namespace": ns}, f"kubectl get pods -n {ns} -o json")

    async def phase_namespaces(self) -> None:
        jobs = []
        for ns in self.operator_namespaces:
            for kind, command in (("DaemonSet", "daemonsets"), ("Deployment", "deployments"), ("ConfigMap", "configmaps"), ("Event", "events")):
                jobs.append(self.guarded(f"{command} in {ns}", self.get_namespaced, kind, ns, f"kubectl get {command} -n {ns} -o json"))
            jobs.append(self.guarded(f"Helm releases in {ns}", self.get_helm, ns))
        workload_ns = sorted({p["metadata"].get("namespace") for p in self.pods.values()} - set(self.operator_namespaces) - {None})
        jobs.extend(self.guarded(f"events in {ns}", self.get_pod_events, ns) for ns in workload_ns)
        jobs.append(self.guarded("node events", self.get_node_events))
        self.progress.total("resources", self._resources_done + len(jobs))
        await asyncio.gather(*jobs)
        self.progress.advance("resources", len(jobs))

    async def get_namespaced(self, kind: str, namespace: str, command: str) -> None:
        res = BY_KIND[kind]
        got = await self.list_all(res, namespace, keep=keep_configmap if kind == "ConfigMap" else None)
        if got is not None:
            self.write_list(f"namespaces/{namespace}/{res.qualified}", got[0], {**got[1], "namespace": namespace}, command)

    async def get_pod_events(self, namespace: str) -> None:
        names = {p["metadata"]["name"] for p in self.pods.values() if p["metadata"].get("namespace") == namespace}
        got = await self.list_all(
            BY_KIND["Event"], namespace, {"fieldSelector": "involvedObject.kind=Pod"},
            keep=lambda e: (e.get("involvedObject") or {}).get("name") in names, what=f"events of GPU pods in {namespace}",
        )
        if got is not None and got[0]:
            self.write_list(f"namespaces/{namespace}/events", got[0], {**got[1], "namespace": namespace, "filter": "events of collected pods"},
                            f"kubectl get events -n {namespace} --field-selector involvedObject.kind=Pod -o json")

    async def get_node_events(self) -> None:
        got = await self.list_all(
            BY_KIND["Event"], None, {"fieldSelector": "involvedObject.kind=Node"},
            keep=lambda e: (e.get("involvedObject") or {}).get("name") in self.nodes, what="events of GPU nodes",
        )
        if got is not None and got[0]:
            self.write_list("cluster/node-events", got[0], {**got[1], "filter": "events of collected nodes"},
                            "kubectl get events -A --field-selector involvedObject.kind=Node -o json")

    async def get_helm(self, namespace: str) -> None:
        got = await self.list_all(BY_KIND["Secret"], namespace, {"labelSelector": "owner=helm"}, what=f"Helm release secrets in {namespace}")
        if got is None:
            return
        for secret in helm.latest(got[0]):
            meta = secret.get("metadata") or {}
            sname = meta.get("name", "?")
            try:
                release = helm.decode_release((secret.get("data") or {}).get("release", ""))
            except helm.HelmDecodeError as exc:
                self.gap(f"Helm release secret {namespace}/{sname}", f"cannot decode: {exc}")
                continue
            if not chart_wanted(release):
                continue
            name = f"namespaces/{namespace}/helm/{release.get('name')}.v{release.get('version')}.json"
            kept = self.redactor.obj(helm.essentials(release), name)
            labels = {k: v for k, v in (meta.get("labels") or {}).items() if k in ("owner", "name", "status", "version")}
            out = {
                "apiVersion": "v1", "kind": "Secret", "type": secret.get("type", "helm.sh/release.v1"),
                "metadata": {"name": sname, "namespace": namespace, "labels": labels, "creationTimestamp": meta.get("creationTimestamp")},
                "data": {"release": helm.encode_release(kept)},
            }
            doc = {"apiVersion": "v1", "kind": "List", "items": [out], "metadata": {"resourceVersion": ""}}
            self.add_json(name, doc, {
                **got[1], "namespace": namespace, "secret": sname, "command": f"kubectl get secret -n {namespace} {sname} -o json",
                "kept": "data.release re-encoded with only name, namespace, version, info, chart.metadata, chart.values, config (redacted)",
            }, redacted=True)

    # -- logs -------------------------------------------------------------------------------------

    async def phase_logs(self) -> None:
        targets = []
        for pod in sorted(self.pods.values(), key=lambda p: (p["metadata"].get("namespace", ""), p["metadata"].get("name", ""))):
            meta = pod["metadata"]
            if meta.get("namespace") not in self.operator_namespaces and not is_operand(pod) and not rules().pod_names.search(meta.get("name", "")):
                continue  # workloads: their state is collected, their logs are the user's business
            for container, init, previous in log_targets(pod):
                targets.append((pod, container, init, previous))
        self.progress.task("logs", "container logs", len(targets))
        await asyncio.gather(*(self._counted_log(t) for t in targets))

    async def _counted_log(self, target) -> None:
        pod, container, init, previous = target
        meta = pod["metadata"]
        what = f"logs of {meta.get('namespace')}/{meta.get('name')} container {container}" + (" (previous)" if previous else "")
        await self.guarded(what, self.get_log, pod, container, init, previous)
        self.progress.advance("logs")

    async def get_log(self, pod: dict, container: str, init: bool, previous: bool) -> None:
        meta = pod["metadata"]
        ns, name = meta.get("namespace"), meta.get("name")
        path = BY_KIND["Pod"].path(ns, name, "log")
        params = {"container": container, "timestamps": "true", "tailLines": self.tail, "limitBytes": self.limit_bytes}
        if previous:
            params["previous"] = "true"
        resp = await self.api.request("GET", path, params)
        text = resp.body.decode("utf-8", "replace")
        api_path = _query(path, params)
        command = f"kubectl logs -n {ns} {name} -c {container} --timestamps --tail={self.tail}" + (" --previous" if previous else "")
        where = {"namespace": ns, "pod": name, "container": container, "previous": previous}
        if not text:
            self.requests.append({"api": api_path, "status": resp.status, "time": now_iso(), "note": "empty log", **where})
            return
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        truncated = lines >= self.tail or len(resp.body) >= self.limit_bytes
        artifact = f"namespaces/{ns}/logs/{name}/{container}{'.previous' if previous else ''}.log"
        self.add_text(artifact, text, {
            "source": "api", "api": api_path, "status": resp.status, "time": now_iso(), "command": command,
            "kind": "container-log", **where, "init": init,
            "node": (pod.get("spec") or {}).get("nodeName"), "lines": lines, "truncated": truncated,
            **({"truncation": f"tail limited to {self.tail} lines / {self.limit_bytes} bytes"} if truncated else {}),
        })

    # -- manifest ---------------------------------------------------------------------------------

    def build_manifest(self, started: str) -> dict:
        return {
            "schema": SCHEMA,
            "tool": {"name": "gpusleuth", "version": __version__},
            "captured_at": _iso(self.server_time) if self.server_time else started,
            "clock": {"source": "the API server's Date header" if self.server_time else "this machine", "local_start": started},
            "finished_at": now_iso(),
            "cluster": self.redactor.obj({"server": self.api.server, "context": self.api.context, "version": self.version}, "manifest.json"),
            "options": {
                "namespaces": list(self.options.namespaces), "logs": self.options.logs, "tail_lines": self.tail,
                "limit_bytes": self.limit_bytes, "page_size": self.options.page_size, "node_probes": self.options.node_probes,
            },
            "operator_namespaces": {ns: self.discovered.get(ns, "") for ns in self.operator_namespaces},
            "counts": {"nodes": len(self.nodes), "pods": len(self.pods), "artifacts": len(self.artifacts), "api_requests": self.api.requests},
            "stripped_fields": list(rules().strip_fields),
            "artifacts": [a.record for a in sorted(self.artifacts, key=lambda a: a.name)],
            "requests": self.redactor.obj(self.requests, "manifest.json"),  # API messages are free text too
            "gaps": self.redactor.obj(self.gaps, "manifest.json"),
            "redaction": self.redactor.report(),
            **({"probes": self.probe_record} if self.probe_record else {}),
        }


def _why(exc: ApiFailure) -> str:
    if exc.status == 403:
        return "forbidden (HTTP 403): " + (exc.reason.split(": ", 1)[1] if ": " in exc.reason else exc.reason)
    return exc.reason
