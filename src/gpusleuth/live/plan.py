"""What is worth reading: which pods, nodes, namespaces and ConfigMaps a GPU diagnosis needs.

Pure predicates over API objects (dicts), driven by knowledge/live.toml, so that they can be tested
without a cluster and a reviewer can change the rules without reading the collector.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from gpusleuth.knowledge import table


@dataclass(frozen=True)
class Rules:
    default_namespaces: tuple[str, ...]
    labels: tuple[tuple[str, frozenset[str]], ...]
    owner_ds: re.Pattern
    resource_prefixes: tuple[str, ...]
    pod_names: re.Pattern
    gpu_labels: tuple[str, ...]
    capacity_prefixes: tuple[str, ...]
    strip_fields: tuple[str, ...]
    skip_configmaps: re.Pattern
    helm_charts: frozenset[str]
    tail_lines: int
    limit_bytes: int


@cache
def rules() -> Rules:
    t = table("live")
    return Rules(
        default_namespaces=tuple(t["namespaces"]["defaults"]),
        labels=tuple((row["key"], frozenset(row["values"])) for row in t["discovery"]["labels"]),
        owner_ds=re.compile("|".join(t["discovery"]["owner_daemonsets"])),
        resource_prefixes=tuple(t["pods"]["resource_prefixes"]),
        pod_names=re.compile("|".join(t["pods"]["name_patterns"])),
        gpu_labels=tuple(t["nodes"]["gpu_labels"]),
        capacity_prefixes=tuple(t["nodes"]["capacity_prefixes"]),
        strip_fields=tuple(t["nodes"]["strip_fields"]),
        skip_configmaps=re.compile("|".join(t["configmaps"]["skip_names"])),
        helm_charts=frozenset(t["helm"]["charts"]),
        tail_lines=int(t["logs"]["tail_lines"]),
        limit_bytes=int(t["logs"]["limit_bytes"]),
    )


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def is_operand(pod: dict) -> bool:
    """A pod of the GPU or Network Operator (or one of their operands): its namespace is an operator's."""
    r = rules()
    labels = _meta(pod).get("labels") or {}
    for key, values in r.labels:
        if key in labels and ("*" in values or labels[key] in values):
            return True
    return any(o.get("kind") == "DaemonSet" and r.owner_ds.search(o.get("name", "")) for o in _meta(pod).get("ownerReferences") or ())


def requests_accelerators(pod: dict) -> bool:
    """Any container (init included) asks for an nvidia.com/*, rdma/*, ... extended resource."""
    prefixes = rules().resource_prefixes
    spec = pod.get("spec") or {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        res = c.get("resources") or {}
        for section in ("requests", "limits"):
            if any(k.startswith(prefixes) for k in res.get(section) or {}):
                return True
    return False


def is_gpu_related(pod: dict, namespaces: set[str]) -> bool:
    if _meta(pod).get("namespace") in namespaces:
        return True
    return requests_accelerators(pod) or is_operand(pod) or bool(rules().pod_names.search(_meta(pod).get("name", "")))


def is_gpu_node(node: dict) -> bool:
    r = rules()
    labels = _meta(node).get("labels") or {}
    if any(labels.get(k, "false") != "false" for k in r.gpu_labels):
        return True
    cap = (node.get("status") or {}).get("capacity") or {}
    return any(k.startswith(r.capacity_prefixes) for k in cap)


def strip(obj: dict) -> dict:
    """Drop the fields that are large and never evidence (managedFields, node image lists)."""
    for dotted in rules().strip_fields:
        *parents, leaf = dotted.split(".")
        cur = obj
        for p in parents:
            cur = cur.get(p) if isinstance(cur, dict) else None
            if cur is None:
                break
        if isinstance(cur, dict):
            cur.pop(leaf, None)
    return obj


def keep_configmap(cm: dict) -> bool:
    return not rules().skip_configmaps.search(_meta(cm).get("name", ""))


def chart_wanted(release: dict) -> bool:
    """A decoded Helm release of one of the operators' charts (by chart name, whatever the release is called)."""
    return ((release.get("chart") or {}).get("metadata") or {}).get("name") in rules().helm_charts


def log_targets(pod: dict) -> list[tuple[str, bool, bool]]:
    """(container, init, previous) for every log the pod has: current logs of containers that started,
    previous logs where the status records a terminated previous instance (the kubelet sets lastState on
    every restart). Containers that never ran have none (the API would answer 400)."""
    status = pod.get("status") or {}
    out: list[tuple[str, bool, bool]] = []
    for key, init in (("initContainerStatuses", True), ("containerStatuses", False)):
        for cs in status.get(key) or []:
            name = cs.get("name")
            if not name:
                continue
            state = cs.get("state") or {}
            last = cs.get("lastState") or {}
            if "running" in state or "terminated" in state or (cs.get("restartCount") or 0) > 0:
                out.append((name, init, False))
            if "terminated" in last:
                out.append((name, init, True))
    return out
