"""Server-side printing (meta.k8s.io/v1 Table), so `kubectl get` shows the columns a user expects.

kubectl asks for ``Accept: application/json;as=Table;...``; a server that answers with a Table decides the
columns. Pod STATUS and RESTARTS come from the same rule the parsers use (parsers/k8s_common), and ages are
measured from the snapshot's capture time, not from now: a bundle shows the cluster as it was.
"""

from __future__ import annotations

from datetime import datetime

from gpusleuth.model.k8s import ContainerStatus
from gpusleuth.parsers.k8s_common import kubectl_status, parse_time


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < 0:
        return "<invalid>"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    d = h // 24
    if d < 8:
        return f"{d}d{h % 24}h" if h % 24 else f"{d}d"
    if d < 365 * 2:
        return f"{d}d"
    y = d // 365
    return f"{y}y{d % 365}d" if y < 8 and d % 365 else f"{y}y"


def _age(obj: dict, now: datetime, field: str = "creationTimestamp") -> str:
    t = parse_time(((obj.get("metadata") or {}).get(field)) if field == "creationTimestamp" else obj.get(field))
    return human_duration((now - t).total_seconds()) if t else "<unknown>"


def _cs(d: dict, init: bool) -> ContainerStatus:
    state = d.get("state") or {}
    which = next((k for k in ("waiting", "terminated", "running") if k in state), None)
    st = state.get(which) or {}
    return ContainerStatus(d.get("name"), init=init, state=which, reason=st.get("reason"), exit_code=st.get("exitCode"),
                           ready=d.get("ready"), restarts=d.get("restartCount"))


def _pod(obj: dict, now: datetime) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    inits = [_cs(c, True) for c in status.get("initContainerStatuses") or []]
    apps = [_cs(c, False) for c in status.get("containerStatuses") or []]
    ready_cond = next((c.get("status") == "True" for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    st, restarts = kubectl_status(status.get("phase"), status.get("reason"), inits, apps, ready_cond,
                                  bool((obj.get("metadata") or {}).get("deletionTimestamp")), n_init=len(spec.get("initContainers") or []))
    n = len(spec.get("containers") or [])
    return [obj["metadata"]["name"], f"{sum(1 for c in apps if c.ready)}/{n}", st or "Unknown", restarts or 0, _age(obj, now),
            status.get("podIP") or "<none>", spec.get("nodeName") or "<none>"]


def _node(obj: dict, now: datetime) -> list:
    status, labels = obj.get("status") or {}, (obj.get("metadata") or {}).get("labels") or {}
    ready = next((c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    state = {"True": "Ready", "False": "NotReady"}.get(ready, "Unknown")
    if (obj.get("spec") or {}).get("unschedulable"):
        state += ",SchedulingDisabled"
    roles = ",".join(sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/"))) or "<none>"
    info = status.get("nodeInfo") or {}
    addr = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    return [obj["metadata"]["name"], state, roles, _age(obj, now), info.get("kubeletVersion", ""), addr.get("InternalIP", "<none>"),
            addr.get("ExternalIP", "<none>"), info.get("osImage", ""), info.get("kernelVersion", ""), info.get("containerRuntimeVersion", "")]


def _daemonset(obj: dict, now: datetime) -> list:
    s = obj.get("status") or {}
    sel = ((((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeSelector")) or {}
    return [obj["metadata"]["name"], s.get("desiredNumberScheduled", 0), s.get("currentNumberScheduled", 0), s.get("numberReady", 0),
            s.get("updatedNumberScheduled", 0), s.get("numberAvailable", 0), ",".join(f"{k}={v}" for k, v in sel.items()) or "<none>", _age(obj, now)]


def _deployment(obj: dict, now: datetime) -> list:
    s, want = obj.get("status") or {}, (obj.get("spec") or {}).get("replicas", 1)
    return [obj["metadata"]["name"], f"{s.get('readyReplicas', 0)}/{want}", s.get("updatedReplicas", 0), s.get("availableReplicas", 0), _age(obj, now)]


def _event(obj: dict, now: datetime) -> list:
    inv = obj.get("involvedObject") or {}
    last = obj.get("lastTimestamp") or obj.get("eventTime") or (obj.get("metadata") or {}).get("creationTimestamp")
    t = parse_time(last)
    return [human_duration((now - t).total_seconds()) if t else "<unknown>", obj.get("type", ""), obj.get("reason", ""),
            f"{(inv.get('kind') or '').lower()}/{inv.get('name', '')}", obj.get("message", "")]


def _default(obj: dict, now: datetime) -> list:
    return [obj["metadata"]["name"], _age(obj, now)]


_S, _I = "string", "integer"
PRINTERS = {
    "Pod": ([("Name", _S, 0), ("Ready", _S, 0), ("Status", _S, 0), ("Restarts", _I, 0), ("Age", _S, 0), ("IP", _S, 1), ("Node", _S, 1)], _pod),
    "Node": ([("Name", _S, 0), ("Status", _S, 0), ("Roles", _S, 0), ("Age", _S, 0), ("Version", _S, 0), ("Internal-IP", _S, 1),
              ("External-IP", _S, 1), ("OS-Image", _S, 1), ("Kernel-Version", _S, 1), ("Container-Runtime", _S, 1)], _node),
    "DaemonSet": ([("Name", _S, 0), ("Desired", _I, 0), ("Current", _I, 0), ("Ready", _I, 0), ("Up-to-date", _I, 0), ("Available", _I, 0),
                   ("Node Selector", _S, 0), ("Age", _S, 0)], _daemonset),
    "Deployment": ([("Name", _S, 0), ("Ready", _S, 0), ("Up-to-date", _I, 0), ("Available", _I, 0), ("Age", _S, 0)], _deployment),
    "Event": ([("Last Seen", _S, 0), ("Type", _S, 0), ("Reason", _S, 0), ("Object", _S, 0), ("Message", _S, 0)], _event),
}


def table(kind: str, items: list[dict], now: datetime, meta: dict) -> dict:
    columns, row = PRINTERS.get(kind, ([("Name", _S, 0), ("Age", _S, 0)], _default))
    return {
        "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
        "columnDefinitions": [{"name": n, "type": t, "format": "name" if n == "Name" else "", "description": n, "priority": p} for n, t, p in columns],
        "rows": [{"cells": row(o, now), "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o.get("metadata") or {}}}
                 for o in items],
    }
