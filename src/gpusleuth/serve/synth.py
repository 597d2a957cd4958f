"""Model objects (parsed from tables, describes, logs) back into the API JSON a server would return.

A K8sObject parsed from JSON/YAML is served as it was. A pod only seen as a `kubectl get pods` row gets
container statuses chosen so that kubectl's printer rule (parsers/k8s_common.kubectl_status) prints the
same STATUS, READY and RESTARTS again: what the user saw is what a client of ``serve`` sees.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone
from functools import cache

from gpusleuth.knowledge import table
from gpusleuth.model.k8s import ContainerStatus, DaemonSet, Event, Node, Pod
from gpusleuth.parsers.timestamps import parse_age

_WAITING = {
    "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError", "CreateContainerError",
    "ContainerCreating", "PodInitializing", "InvalidImageName", "RunContainerError", "ErrImageNeverPull",
}
_POD_REASONS = {"Evicted", "UnexpectedAdmissionError", "NodeAffinity", "NodeLost", "Shutdown", "Terminated", "OutOfcpu", "OutOfmemory"}
_KINDS = {"pod": "Pod", "node": "Node", "daemonset": "DaemonSet", "deployment": "Deployment", "replicaset": "ReplicaSet",
          "job": "Job", "clusterpolicy": "ClusterPolicy", "nicclusterpolicy": "NicClusterPolicy", "nvidiadriver": "NVIDIADriver"}


def rfc3339(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@cache
def _operands() -> tuple[tuple[re.Pattern, tuple[str, ...], tuple[str, ...]], ...]:
    return tuple((re.compile("|".join(c["pod_name_patterns"])), tuple(c.get("containers", ())), tuple(c.get("init_containers", ())))
                 for c in table("operands").get("component", []) if c.get("pod_name_patterns"))


def container_names(pod: str, from_logs: dict[str, bool]) -> tuple[list[str], list[str]]:
    """(containers, init containers) of a pod seen only as a table row: the names its logs show first,
    then those knowledge/operands.toml lists for the operand the pod name belongs to."""
    known_apps, known_inits = next(((a, i) for pattern, a, i in _operands() if pattern.search(pod)), ((), ()))
    inits = [n for n, init in from_logs.items() if init or n in known_inits]
    apps = [n for n in from_logs if n not in inits]
    apps += [n for n in known_apps if n not in apps and n not in inits]
    inits += [n for n in known_inits if n not in inits]
    return apps, inits


def _uid(*parts) -> str:
    """A stable made-up UID (clients such as lightkube require one where the API always sets it)."""
    h = hashlib.sha1("/".join(str(p) for p in parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _ago(age: str | None, now: datetime) -> str | None:
    delta = parse_age(age)
    return rfc3339(now - delta) if delta is not None else None


def _state(c: ContainerStatus) -> dict:
    if c.state == "running":
        return {"running": {"startedAt": rfc3339(c.started_at)} if c.started_at else {}}
    if c.state == "terminated":
        t = {"exitCode": c.exit_code if c.exit_code is not None else (0 if c.reason == "Completed" else 1)}
        if c.reason:
            t["reason"] = c.reason
        if c.message:
            t["message"] = c.message
        if c.started_at:
            t["startedAt"] = rfc3339(c.started_at)
        if c.finished_at:
            t["finishedAt"] = rfc3339(c.finished_at)
        return {"terminated": t}
    if c.state == "waiting":
        w = {"reason": c.reason} if c.reason else {}
        if c.message:
            w["message"] = c.message
        return {"waiting": w}
    return {}


def container_status(c: ContainerStatus) -> dict:
    out = {"name": c.name, "ready": bool(c.ready), "restartCount": c.restarts or 0, "state": _state(c), "image": c.image or "unknown", "imageID": ""}
    if c.last_reason or c.last_exit_code is not None:
        last = {"exitCode": c.last_exit_code if c.last_exit_code is not None else 1}
        if c.last_reason:
            last["reason"] = c.last_reason
        if c.last_started_at:
            last["startedAt"] = rfc3339(c.last_started_at)
        if c.last_finished_at:
            last["finishedAt"] = rfc3339(c.last_finished_at)
        out["lastState"] = {"terminated": last}
    return out


def _statuses_from_row(pod: Pod, names: list[str], init_names: list[str]) -> tuple[str, list[ContainerStatus], list[ContainerStatus], str | None]:
    """(phase, init statuses, statuses, pod reason) that print as the row's STATUS / READY / RESTARTS."""
    status = pod.status or pod.phase or "Unknown"
    ready_n, total = 0, max(1, len(names))
    if pod.ready and "/" in pod.ready:
        a, _, b = pod.ready.partition("/")
        if a.isdigit() and b.isdigit():
            ready_n, total = int(a), max(int(b), 1)
    names = (names + [f"container-{i}" for i in range(len(names) + 1, total + 1)])[:total]
    restarts = pod.restarts or 0

    def app(state: str, reason: str | None = None, exit_code: int | None = None, ready_count: int = 0) -> list[ContainerStatus]:
        return [
            ContainerStatus(n, state="running" if i < ready_count else state, reason=None if i < ready_count else reason,
                            exit_code=None if i < ready_count else exit_code, ready=i < ready_count,
                            restarts=restarts if i == total - 1 else 0)
            for i, n in enumerate(names)
        ]

    if status.startswith("Init:"):
        rest = status[5:]
        m = re.fullmatch(r"(\d+)/(\d+)", rest)
        if m:
            done, n = int(m.group(1)), max(int(m.group(2)), 1)
            inames = (init_names + [f"init-{i}" for i in range(len(init_names) + 1, n + 1)])[:n]
            inits = [ContainerStatus(nm, init=True, state="terminated" if i < done else ("running" if i == done else "waiting"),
                                     reason="Completed" if i < done else (None if i == done else "PodInitializing"),
                                     exit_code=0 if i < done else None, restarts=restarts if i == done else 0)
                     for i, nm in enumerate(inames)]
        else:
            iname = init_names[0] if init_names else "init-1"
            code = re.fullmatch(r"ExitCode:(-?\d+)", rest)
            if code:
                first = ContainerStatus(iname, init=True, state="terminated", exit_code=int(code.group(1)), restarts=restarts)
            elif rest in _WAITING or rest.endswith("BackOff"):
                first = ContainerStatus(iname, init=True, state="waiting", reason=rest, restarts=restarts)
            else:
                first = ContainerStatus(iname, init=True, state="terminated", reason=rest, exit_code=1, restarts=restarts)
            inits = [first] + [ContainerStatus(n, init=True, state="waiting", reason="PodInitializing") for n in init_names[1:]]
        return "Pending", inits, app("waiting", "PodInitializing"), None
    inits = [ContainerStatus(n, init=True, state="terminated", reason="Completed", exit_code=0) for n in init_names]
    if status == "Running":
        return "Running", inits, app("running", ready_count=ready_n), None
    if status == "NotReady":
        return "Running", inits, app("running", ready_count=0), None
    if status == "Completed":
        return "Succeeded", inits, app("terminated", "Completed", 0), None
    if status in ("Error", "OOMKilled", "ContainerStatusUnknown", "StartError") or status.startswith("Signal:"):
        return "Failed", inits, app("terminated", status, 1 if status != "OOMKilled" else 137), None
    if status.startswith("ExitCode:"):
        return "Failed", inits, app("terminated", None, int(status.split(":", 1)[1] or 1)), None
    unstarted = [ContainerStatus(n) for n in names]  # in the spec, no status yet
    if status in ("Pending", "Unknown", "Succeeded", "Failed"):
        return status, ([] if status == "Pending" else inits), unstarted, None
    if status == "Terminating":
        return "Running", inits, app("running", ready_count=ready_n), None
    if status in _POD_REASONS or status.startswith("OutOf"):
        return "Failed", [], unstarted, status
    return "Running" if status in ("CrashLoopBackOff",) else "Pending", inits, app("waiting", status, ready_count=ready_n), None


def pod_json(pod: Pod, now: datetime, log_containers: dict[str, bool] | None = None) -> dict:
    """A Pod object for a model Pod; log_containers: container name -> is_init, from that pod's logs."""
    log_containers = log_containers or {}
    if pod.containers:
        inits = [c for c in pod.containers if c.init]
        apps = [c for c in pod.containers if not c.init]
        phase, reason = pod.phase or ("Running" if pod.status == "Running" else "Pending"), None
        if not any(c.state for c in pod.containers) and pod.status:
            phase, inits, apps, reason = _statuses_from_row(pod, [c.name for c in apps if c.name], [c.name for c in inits if c.name])
    elif pod.status is None and pod.phase is None and not log_containers:
        phase, inits, apps, reason = None, [], [], None
    else:
        phase, inits, apps, reason = _statuses_from_row(pod, *container_names(pod.name, log_containers))
        phase = pod.phase or phase
    images = list(pod.images)
    spec_containers = []
    for i, c in enumerate(apps):
        entry = {"name": c.name, "image": c.image or (images[i] if i < len(images) else "unknown")}
        if i == 0:
            requests = dict(pod.resource_requests) or ({"nvidia.com/gpu": str(pod.gpu_request)} if pod.gpu_request else {})
            if requests:
                entry["resources"] = {"requests": {k: str(v) for k, v in requests.items()}, "limits": {k: str(v) for k, v in requests.items()}}
            if pod.env:
                entry["env"] = [{"name": k, "value": str(v)} for k, v in pod.env.items()]
        spec_containers.append(entry)
    meta = {"name": pod.name, "namespace": pod.namespace or "default", "labels": dict(pod.labels), "uid": _uid(pod.namespace, "Pod", pod.name)}
    created = _ago(pod.age, now)
    if created:
        meta["creationTimestamp"] = created
    if pod.owner and "/" in pod.owner:
        kind, _, name = pod.owner.partition("/")
        meta["ownerReferences"] = [{"apiVersion": "apps/v1" if kind in ("DaemonSet", "ReplicaSet", "Deployment") else "v1", "kind": kind, "name": name,
                                    "uid": _uid(pod.namespace, kind, name), "controller": True}]
    if pod.status == "Terminating":
        meta["deletionTimestamp"] = rfc3339(now)
    spec: dict = {"containers": spec_containers}
    if inits:
        spec["initContainers"] = [{"name": c.name, "image": c.image or "unknown"} for c in inits]
    if pod.node:
        spec["nodeName"] = pod.node
    if pod.runtime_class:
        spec["runtimeClassName"] = pod.runtime_class
    if pod.node_selector:
        spec["nodeSelector"] = dict(pod.node_selector)
    if pod.tolerations:
        spec["tolerations"] = [dict(t) for t in pod.tolerations]
    status: dict = {"phase": phase} if phase else {}  # a pod only listed (describe node): nothing known
    if reason:
        status["reason"] = reason
    if inits:
        status["initContainerStatuses"] = [container_status(c) for c in inits]
    if apps and any(c.state for c in apps):
        status["containerStatuses"] = [container_status(c) for c in apps]
    if apps:
        ready = all(c.ready for c in apps)
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


# NodeSystemInfo's required fields: clients that validate (lightkube) reject a nodeInfo without them.
NODE_INFO = ("architecture", "bootID", "containerRuntimeVersion", "kernelVersion", "kubeProxyVersion", "kubeletVersion",
             "machineID", "operatingSystem", "osImage", "systemUUID")


def node_json(node: Node) -> dict:
    meta = {"name": node.name, "labels": dict(node.labels)}
    spec: dict = {}
    if node.taints:
        spec["taints"] = [{"key": t.key, "effect": t.effect, **({"value": t.value} if t.value else {})} for t in node.taints]
    if node.unschedulable:
        spec["unschedulable"] = True
    info = {**dict.fromkeys(NODE_INFO, ""), "operatingSystem": "linux"}
    info.update({k: v for k, v in (("kernelVersion", node.kernel_version), ("osImage", node.os_image),
                                   ("containerRuntimeVersion", node.container_runtime), ("kubeletVersion", node.kubelet_version)) if v})
    status = {
        "capacity": dict(node.capacity),
        "allocatable": dict(node.allocatable),
        "conditions": [{"type": c.type, "status": c.status, **({"reason": c.reason} if c.reason else {}), **({"message": c.message} if c.message else {})}
                       for c in node.conditions],
        "nodeInfo": info,
    }
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}


def event_json(ev: Event, now: datetime, index: int) -> dict:
    kind, name = "Pod", ev.object or ""
    if "/" in name:
        k, _, name = name.partition("/")
        kind = _KINDS.get(k.lower(), k[:1].upper() + k[1:])
    last = rfc3339(ev.time) if ev.time else _ago(ev.last_seen or ev.age, now) or rfc3339(now)
    first = _ago(ev.first_seen, now) or last
    component, _, host = (ev.source or "").partition(",")
    digest = hashlib.sha1(f"{ev.object}|{ev.reason}|{ev.message}|{index}".encode()).hexdigest()[:16]
    source = {"component": component.strip()} if component.strip() else {}
    if host.strip() or ev.node:
        source["host"] = host.strip() or ev.node
    involved = {"kind": kind, "name": name}
    if kind != "Node":
        involved["namespace"] = ev.namespace or "default"
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"{name or 'event'}.{digest}", "namespace": ev.namespace or "default"},
        "involvedObject": involved, "reason": ev.reason, "message": ev.message, "type": ev.type or "Normal",
        "count": ev.count or 1, "firstTimestamp": first, "lastTimestamp": last, "source": source,
    }


def daemonset_json(ds: DaemonSet, now: datetime) -> dict:
    selector = {}
    for part in (ds.node_selector or "").split(","):
        k, eq, v = part.strip().partition("=")
        if eq and k and k != "<none>":
            selector[k] = v
    meta = {"name": ds.name, "namespace": ds.namespace or "default"}
    created = _ago(ds.age, now)
    if created:
        meta["creationTimestamp"] = created
    status = {"desiredNumberScheduled": ds.desired or 0, "currentNumberScheduled": ds.current or 0, "numberReady": ds.ready or 0, "numberMisscheduled": 0}
    status.update({k: v for k, v in (("updatedNumberScheduled", ds.up_to_date), ("numberAvailable", ds.available)) if v is not None})
    labels = {"app": ds.name}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": ds.name, "image": "unknown"}], **({"nodeSelector": selector} if selector else {})}}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta, "spec": {"selector": {"matchLabels": labels}, "template": template}, "status": status}
