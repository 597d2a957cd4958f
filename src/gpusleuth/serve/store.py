"""The objects `serve` answers with, built from ANY source through the normal parsers.

A bundle's JSON lists come back as they were (K8sObject bodies); pods, nodes, events and DaemonSets only
seen in tables or describes are synthesised (serve/synth.py); container logs are grouped by pod, container
and instance; everything else (containerd configs, kernel logs, nvidia-smi, ...) belongs to a node and is
what an emulated node probe on that node prints. So `serve example:NAME` is a cluster whose `collect`
gives back the example's evidence.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from gpusleuth.analysis.engine import sniff, whole_documents
from gpusleuth.errors import NotApplicable, UnusableData
from gpusleuth.facts import Cluster, Facts
from gpusleuth.live.probe_format import Section
from gpusleuth.live.resources import BY_KIND, RESOURCES, Resource, resource_for
from gpusleuth.model.document import Document
from gpusleuth.model.k8s import DaemonSet, Event, K8sObject, Node, Pod
from gpusleuth.model.logs import ContainerLog
from gpusleuth.model.runtime import HelmRelease
from gpusleuth.parsers.base import WEAK
from gpusleuth.parsers.logs import parse_log
from gpusleuth.serve import infer, synth
from gpusleuth.sources import Source

_API_TYPES = (K8sObject, Pod, Node, Event, DaemonSet, HelmRelease)
_NODE_DIR = re.compile(r"(?:^|/)nodes/(?P<node>[^/]+)/")
_RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)\s")
DEFAULT_VERSION = {"major": "1", "minor": "31", "gitVersion": "v1.31.0+gpusleuth-serve", "platform": "linux/amd64"}


@dataclass
class LogLine:
    text: str
    time: datetime | None = None


@dataclass
class Store:
    """Objects by resource, logs by (namespace, pod, container, previous), node files by node.

    `now` is the snapshot's clock: a bundle's capture time, or the capture time the timeline infers for
    any other source (the real clock only when nothing says). Ages, Tables and the HTTP Date header use it.
    """

    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    version: dict = field(default_factory=lambda: dict(DEFAULT_VERSION))
    objects: dict[str, dict[tuple[str, str], dict]] = field(default_factory=dict)  # qualified -> {(ns, name): obj}
    resources: dict[str, Resource] = field(default_factory=lambda: {r.qualified: r for r in RESOURCES})
    logs: dict[tuple[str, str, str, bool], list[LogLine]] = field(default_factory=dict)
    node_files: dict[str, list[Section]] = field(default_factory=dict)
    node_artifacts: set[str] = field(default_factory=set)  # the source's artifacts served only as node files
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lock = threading.RLock()
        self.revision = 1

    # -- objects ----------------------------------------------------------------------------------

    def add(self, obj: dict) -> bool:
        """Add an API object (apiVersion, kind, metadata.name required); False when it cannot be placed."""
        kind, meta = obj.get("kind"), obj.get("metadata") or {}
        name = meta.get("name")
        if not kind or not name or kind.endswith("List"):
            return False
        ns = meta.get("namespace") or ""
        res = resource_for(obj.get("apiVersion"), kind)
        if res.kind not in BY_KIND and not ns:
            res = Resource(res.kind, res.group, res.version, res.plural, False)
        with self.lock:
            self.resources.setdefault(res.qualified, res)
            self.objects.setdefault(res.qualified, {})[(ns if res.namespaced else "", name)] = obj
            self.revision += 1
        return True

    def has(self, kind: str, namespace: str | None, name: str) -> bool:
        res = BY_KIND[kind]
        bucket = self.objects.get(res.qualified, {})
        if not res.namespaced:
            return ("", name) in bucket
        if namespace:
            return (namespace, name) in bucket
        return any(n == name for _, n in bucket)

    def items(self, res: Resource, namespace: str | None = None) -> list[dict]:
        with self.lock:
            bucket = self.objects.get(res.qualified, {})
            keys = sorted(k for k in bucket if not namespace or k[0] == namespace)
            return [bucket[k] for k in keys]

    def get(self, res: Resource, namespace: str | None, name: str) -> dict | None:
        with self.lock:
            return self.objects.get(res.qualified, {}).get(_key(res, namespace, name))

    def delete(self, res: Resource, namespace: str | None, name: str) -> dict | None:
        with self.lock:
            obj = self.objects.get(res.qualified, {}).pop(_key(res, namespace, name), None)
            if obj is not None:
                self.revision += 1
            return obj

    def namespaces(self) -> list[str]:
        with self.lock:
            seen = {ns for r, bucket in self.objects.items() if self.resources[r].namespaced for ns, _ in bucket}
        seen.update(ns for ns, _, _, _ in self.logs)
        return sorted(n for n in seen if n)

    def pod_nodes(self) -> list[str]:
        return sorted({(p.get("spec") or {}).get("nodeName") for p in self.items(BY_KIND["Pod"])} - {None})

    # -- logs -------------------------------------------------------------------------------------

    def log(self, namespace: str, pod: str, container: str, previous: bool) -> list[LogLine] | None:
        return self.logs.get((namespace, pod, container, previous))

    # -- building from a source -------------------------------------------------------------------

    @classmethod
    def from_source(cls, source: Source, now: datetime | None = None) -> "Store":
        store = cls(now=now or source.captured_at or datetime.now(timezone.utc))
        manifest_version = _manifest_version(source)
        if manifest_version:
            store.version = {**DEFAULT_VERSION, **manifest_version}
        facts = Facts(source.description)
        node_docs: list[Document] = []
        for doc in whole_documents(source.documents):  # a huge file's pieces as the one artifact they are
            score, p = sniff(doc)
            objs: list = []
            recognised = p is not None and score >= WEAK
            if recognised:
                try:
                    objs = list(p.parse(doc))
                    if any(isinstance(o, ContainerLog) and o.total_lines is not None for o in objs):
                        objs = [parse_log(doc, whole=True)]  # served as written, not as the lines a diagnosis keeps
                except UnusableData as exc:
                    store.notes.append(f"{doc.artifact}: {exc}")
                except Exception as exc:  # noqa: BLE001 - one bad document never stops serving the rest
                    store.notes.append(f"{doc.artifact}: parser {p.kind} failed: {type(exc).__name__}: {exc}")
            for o in objs:
                facts.add(o)
            served = [o for o in objs if isinstance(o, _API_TYPES) or (isinstance(o, ContainerLog) and o.kind in ("container", "operator"))]
            if not served and (objs or not recognised):  # node-level evidence, or text no parser knows: a probe shows it
                node_docs.append(doc)
        if now is None and source.captured_at is None:
            store.now = _capture_time(facts) or store.now
        store._add_objects(facts)
        store.notes += infer.complete(store)
        store._add_logs(facts)
        store._add_node_files(node_docs)
        return store

    def _add_objects(self, facts: Facts) -> None:
        for o in facts.all(K8sObject):
            body = dict(o.body)
            body.setdefault("kind", o.kind)
            if o.api_version:
                body.setdefault("apiVersion", o.api_version)
            meta = dict(body.get("metadata") or {})
            if o.name:
                meta.setdefault("name", o.name)
            if o.namespace:
                meta.setdefault("namespace", o.namespace)
            body["metadata"] = meta
            if not self.add(body):
                self.notes.append(f"{o.artifact}:{o.line}: {o.kind} without a name; not served")
        try:
            cluster = facts.get(Cluster)
        except (NotApplicable, UnusableData):
            return
        for node in cluster.nodes.values():
            if node.name and not self.has("Node", None, node.name):
                self.add(synth.node_json(node))
        pod_logs = self._pod_log_containers(facts)
        table_ns = _table_namespaces(facts, cluster)
        for pod in cluster.pods:
            if pod.name and pod.namespace is None and pod.evidence is not None and len(table_ns.get(pod.evidence.artifact, ())) == 1:
                pod = replace(pod, namespace=next(iter(table_ns[pod.evidence.artifact])))
            if pod.name and not self.has("Pod", pod.namespace, pod.name):
                self.add(synth.pod_json(pod, self.now, pod_logs.get(pod.name)))
        for ds in cluster.daemonsets:
            if ds.name and not self.has("DaemonSet", ds.namespace, ds.name):
                self.add(synth.daemonset_json(ds, self.now))
        self._add_helm(facts)
        events = self.items(BY_KIND["Event"])
        known = {(e.get("reason"), e.get("message"), (e.get("involvedObject") or {}).get("name")) for e in events}
        for i, ev in enumerate(cluster.events):
            obj = (ev.object or "").rsplit("/", 1)[-1]
            if (ev.reason, ev.message, obj) not in known:
                self.add(synth.event_json(ev, self.now, i))

    def _add_helm(self, facts: Facts) -> None:
        """Releases seen as values or decoded Secrets are served as the release Secret Helm keeps."""
        from gpusleuth.live.helm import encode_release

        stored = {((o.get("metadata") or {}).get("labels") or {}).get("name") for o in self.items(BY_KIND["Secret"])}
        for rel in facts.all(HelmRelease):
            if not rel.name or rel.name in stored or (rel.values is None and rel.user_values is None):
                continue
            ns, rev = rel.namespace or "gpu-operator", rel.revision or 1
            release = {
                "name": rel.name, "namespace": ns, "version": rev, "info": {"status": rel.status or "deployed"},
                "chart": {"metadata": {"name": rel.chart or "gpu-operator", "version": rel.chart_version, "appVersion": rel.app_version},
                          "values": rel.values or {}},
                "config": rel.user_values or {},
            }
            self.add({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
                      "metadata": {"name": f"sh.helm.release.v1.{rel.name}.v{rev}", "namespace": ns,
                                   "labels": {"owner": "helm", "name": rel.name, "status": rel.status or "deployed", "version": str(rev)}},
                      "data": {"release": encode_release(release)}})
            stored.add(rel.name)

    @staticmethod
    def _pod_log_containers(facts: Facts) -> dict[str, dict[str, bool]]:
        """pod name -> {container: is_init} as the logs name them (a table row does not)."""
        out: dict[str, dict[str, bool]] = {}
        for log in facts.all(ContainerLog):
            if log.kind not in ("container", "operator"):
                continue
            for ln in log.lines:  # in order of appearance: the result must not depend on hashing
                pod, ctr = ln.pod or log.pod, ln.container or log.container
                if pod and ctr:
                    out.setdefault(pod, {}).setdefault(ctr, False)
        return out

    def _add_logs(self, facts: Facts) -> None:
        pods = {}
        for p in self.items(BY_KIND["Pod"]):
            pods.setdefault(p["metadata"]["name"], p)
        for log in facts.all(ContainerLog):
            if log.kind not in ("container", "operator"):
                continue
            for ln in log.lines:
                pod = ln.pod or log.pod
                if not pod:
                    continue
                obj = pods.get(pod)
                ns = log.namespace or (obj["metadata"].get("namespace") if obj else None) or "default"
                container = ln.container or log.container or _only_container(obj) or "container-1"
                text = ln.raw
                prefix = f"[pod/{pod}/{container}] "
                if text.startswith(prefix):
                    text = text[len(prefix):]
                time = ln.time if ln.time is not None and ln.time.tzinfo is not None and ln.time.year > 1971 else None
                self.logs.setdefault((ns, pod, container, log.previous), []).append(LogLine(text, time))
        unplaced = sum(1 for log in facts.all(ContainerLog) if log.kind in ("container", "operator") and not log.pod and not any(ln.pod for ln in log.lines))
        if unplaced:
            self.notes.append(f"{unplaced} container log(s) name no pod; not served")

    def _add_node_files(self, docs: list[Document]) -> None:
        gpu_nodes = sorted(n["metadata"]["name"] for n in self.items(BY_KIND["Node"])
                           if any(k.startswith(("nvidia.com/gpu", "feature.node.kubernetes.io/pci-10de")) for k in (n["metadata"].get("labels") or {}))
                           or any(k.startswith("nvidia.com/") for k in ((n.get("status") or {}).get("capacity") or {})))
        fallback = (gpu_nodes or sorted(n["metadata"]["name"] for n in self.items(BY_KIND["Node"])) or self.pod_nodes() or ["node-1"])[0]
        guessed = 0
        for doc in docs:
            m = _NODE_DIR.search(doc.artifact)
            node = doc.meta.get("node") or (m.group("node") if m else None)
            if node is None:
                node, guessed = fallback, guessed + 1
            self.node_files.setdefault(node, []).append(_section(doc))
            self.node_artifacts.add(doc.artifact)
        if guessed:
            self.notes.append(f"{guessed} node-level artifact(s) name no node; served as {fallback}'s")


def _capture_time(facts: Facts) -> datetime | None:
    """When the source was captured, as the timeline infers it: the snapshot's clock, so that ages
    ("23m") become the same absolute times a real API server would have shown then."""
    from gpusleuth.facts import Timeline

    try:
        return facts.get(Timeline).capture
    except (NotApplicable, UnusableData):
        return None


def _table_namespaces(facts: Facts, cluster: Cluster) -> dict[str, set[str]]:
    """artifact -> namespaces its pods turned out to be in: a `get pods` table without a NAMESPACE column
    lists one namespace, so a row no other artifact places belongs to its neighbours' namespace."""
    known = {p.name: p.namespace for p in cluster.pods if p.namespace}
    out: dict[str, set[str]] = {}
    for p in facts.all(Pod):
        if p.evidence is not None and p.name in known:
            out.setdefault(p.evidence.artifact, set()).add(known[p.name])
    return out


def _key(res: Resource, namespace: str | None, name: str) -> tuple[str, str]:
    return (namespace or "", name) if res.namespaced else ("", name)


def _only_container(pod: dict | None) -> str | None:
    containers = ((pod or {}).get("spec") or {}).get("containers") or []
    return containers[0].get("name") if len(containers) == 1 else None


def _section(doc: Document) -> Section:
    """How a probe would have printed this document: a file by its host path, a command by its command."""
    lines = list(doc.lines)
    probe = doc.meta.get("probe") or {}
    if probe.get("kind") in ("file", "cmd", "proc", "other"):
        return Section(probe["kind"], probe["ref"], probe.get("command"), lines, 0)
    if doc.path_hint:
        return Section("file", doc.path_hint, None, lines, 0)
    name = re.sub(r"[^\w.-]+", "_", doc.artifact.rsplit("/", 1)[-1]) or "artifact"
    if doc.command:
        return Section("cmd", name, doc.command, lines, 0)
    return Section("other", name, None, lines, 0)


def _manifest_version(source: Source) -> dict:
    import json

    for name, data in source.metadata.items():
        if name.rsplit("/", 1)[-1] == "manifest.json":
            try:
                doc = json.loads(data)
            except ValueError:
                return {}
            version = (doc.get("cluster") or {}).get("version") if isinstance(doc, dict) else None
            return version if isinstance(version, dict) else {}
    return {}
