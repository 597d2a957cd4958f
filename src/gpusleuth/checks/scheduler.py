"""Scheduler layer: GPU pods that cannot be placed, and the lower layer that explains why."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.facts import Cluster, GpuInventory
from gpusleuth.facts.cluster import GPU_RESOURCE
from gpusleuth.facts.operands import OperandGraph
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import ComponentState, Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.k8s import Event

# `0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint {...}.`
_INSUFFICIENT = re.compile(r"(\d+) Insufficient (nvidia\.com/[\w.\-]+)")
_AVAILABLE = re.compile(r"(\d+)/(\d+) nodes are available")
_TAINT = re.compile(r"(\d+) node\(s\) had (?:untolerated )?taints? \{([^}]*)\}")


def _pod_name(e: Event) -> str | None:
    return e.object.rsplit("/", 1)[-1] if e.object else None


def _lower_layers(cluster: Cluster, graph: OperandGraph | None, inventory: GpuInventory | None) -> list[tuple[str, Evidence | None]]:
    """What below the scheduler explains missing GPUs: nodes advertising none while GPUs are present, and
    GPU operands that failed or are blocked."""
    out: list[tuple[str, Evidence | None]] = []
    for name, node in sorted(cluster.nodes.items()):
        alloc = node.allocatable.get(GPU_RESOURCE, node.capacity.get(GPU_RESOURCE))
        ng = inventory.for_node(name) if inventory else None
        seen = ng.visible.value if ng is not None and ng.visible is not None else None
        if (node.allocatable or node.capacity) and str(alloc or "0").strip() == "0" and seen:
            ev = node.evidence.get(f"allocatable:{GPU_RESOURCE}") or node.evidence.get(f"capacity:{GPU_RESOURCE}")
            out.append((f"{name} advertises {GPU_RESOURCE}: {alloc or 'none'} although {seen} GPU(s) are visible", ev))
    if graph is not None:
        for root in graph.roots():
            behind = graph.blocked_behind(root)
            where = f" on {root.node}" if root.node else ""
            out.append((f"{root.name}{where} failed ({root.status or root.reason}) and {len(behind)} operand(s) wait on it",
                        root.evidence[0] if root.evidence else None))
        plugins = [c for c in graph.components if c.name == "nvidia-device-plugin-daemonset" and c.state != ComponentState.OK]
        for p in plugins:
            if not any(p.name in text for text, _ in out):
                out.append((f"the device plugin {p.pod or ''} is {p.state.value} ({p.status or p.reason})".replace("  ", " "),
                            p.evidence[0] if p.evidence else None))
    return out


@check("SC001", "pods-pending-insufficient-gpu")
def pods_pending_insufficient_gpu(cluster: Cluster, graph: OperandGraph | None = None, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """GPU pods stay Pending because no node has a free nvidia.com/gpu.

    What it does: Finds FailedScheduling events saying `Insufficient nvidia.com/gpu` (or a MIG resource),
    groups them per pod, quotes the scheduler's count (`0/3 nodes are available: 1 Insufficient
    nvidia.com/gpu, 2 node(s) had untolerated taint ...`) and names the lower layer that explains it when
    the artifacts show one: a node advertising nvidia.com/gpu: 0 while its GPUs are visible, a failed or
    blocked device plugin, a failed GPU operand.
    Why it matters: Pending is where the problem is noticed, rarely where it is (seed 004: debug from the
    bottom up). The pods start by themselves once the layer below advertises GPUs again.
    How to fix: fix the lower-layer cause listed with it. When nothing below is broken, the GPUs are all
    requested: compare the pods' requests with the nodes' allocatable, free GPUs or add nodes, and check
    that GPU nodes' taints are tolerated.
    References: seed 004
    """
    events = [e for e in cluster.events if e.reason == "FailedScheduling" and _INSUFFICIENT.search(e.message or "")]
    by_pod: dict[tuple[str | None, str | None], list[Event]] = defaultdict(list)
    for e in events:
        by_pod[(e.namespace, _pod_name(e))].append(e)
    if not by_pod:
        return
    lower = _lower_layers(cluster, graph, inventory)
    for (ns, name), evs in by_pod.items():
        yield _pending_hit(cluster, ns, name, evs, lower)


def _pending_hit(cluster: Cluster, ns: str | None, name: str | None, evs: list[Event], lower) -> Hit:
    last = evs[-1]
    msg = last.message.strip()
    insufficient = _INSUFFICIENT.search(msg)
    resource = insufficient.group(2)
    avail = _AVAILABLE.search(msg)
    taints = _TAINT.findall(msg)
    pod = cluster.pod(name) if name else None
    evidence = [e.evidence for e in evs[-2:] if e.evidence]
    if pod is not None and pod.evidence:
        evidence.insert(0, pod.evidence)
    said = f"The scheduler says: \"{msg[:300]}\"" + (f" ({last.age})" if last.age else "") + "."
    if taints:
        said += " " + "; ".join(f"{n} node(s) are excluded by the taint {{{t.strip()}}} the pod does not tolerate" for n, t in taints) + "."
    if lower:
        why = " Below the scheduler: " + "; ".join(text for text, _ in lower) + "."
        evidence += [ev for _, ev in lower if ev]
    else:
        why = (" Nothing below the scheduler is visibly broken in the artifacts, so either every advertised GPU is requested "
               "already or the GPU nodes are excluded (taints, node selectors); add the nodes' descriptions and the device "
               "plugin's state to tell.")
    req = f" requesting {pod.gpu_request} {resource}" if pod is not None and pod.gpu_request else ""
    ns_flag = f" -n {ns}" if ns else ""
    return Hit(
        title=f"Pod {name or '(unnamed)'} is Pending: Insufficient {resource}"
        + (f" ({avail.group(1)}/{avail.group(2)} nodes available)" if avail else ""),
        explanation=f"{name}{req} cannot be scheduled. {said}{why}",
        severity=Severity.ERROR,
        # With a visible lower cause it is a symptom (the ranker links it to the lowest root cause); without one,
        # a low-confidence root cause that yields to any specific cause found elsewhere.
        role=Role.SYMPTOM if lower else Role.ROOT_CAUSE,
        evidence=tuple(dict.fromkeys(evidence)),
        fixes=(
            Fix(
                FixKind.IMMEDIATE,
                "Fix the lower-layer cause listed above; the pod is scheduled by itself once a node advertises a free "
                f"{resource}. To see what each node advertises and what is requested:",
                (f"kubectl describe pod {name}{ns_flag}" if name else "kubectl get events -A --field-selector reason=FailedScheduling",
                 f"kubectl get nodes -o custom-columns='NAME:.metadata.name,GPU:.status.allocatable.{resource.replace('.', chr(92) + '.')}'",
                 "kubectl describe nodes | grep -E '^Name:|nvidia.com/gpu'"),
            ),
        ),
        node=None,
        component=name,
        confidence=0.5,
        facts={"pod": name, "namespace": ns, "resource": resource, "events": len(evs),
               "nodes_available": int(avail.group(1)) if avail else None, "nodes_total": int(avail.group(2)) if avail else None,
               "explained_by": [text for text, _ in lower]},
    )
