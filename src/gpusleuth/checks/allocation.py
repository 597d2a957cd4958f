"""Device-plugin layer: what the plugin offers Kubernetes, against what the node has and what pods ask
for: GPUs missing from allocatable, and resource names that do not match the MIG strategy. (Sharing
configs the plugin ignores or rejects are checks/gpu_sharing.py's DP150.)"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.facts import Cluster, GpuInventory, Logs
from gpusleuth.facts.cluster import GPU_RESOURCE
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.k8s import Node

MIG_PREFIX = "nvidia.com/mig-"
STRATEGY_LABEL = "nvidia.com/mig.strategy"
REPLICAS_LABEL = "nvidia.com/gpu.replicas"


def _int(value) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _node_ev(node: Node, key: str) -> Evidence:
    return node.evidence.get(key) or Evidence(node.artifact or "", None, f"node {node.name} {key}")


# ------------------------------------------------------------------------------------------------ DP101


@check("DP101", "allocatable-fewer-than-gpus")
def allocatable_fewer_than_gpus(cluster: Cluster, inventory: GpuInventory | None = None, logs: Logs | None = None) -> Iterable[Hit]:
    """A node offers fewer nvidia.com/gpu than it has GPUs (allocatable below capacity or below what nvidia-smi sees).

    What it does: For every node advertising at least one nvidia.com/gpu, compares allocatable with capacity
    (the gap is devices the plugin reported unhealthy), and with the GPUs nvidia-smi/NVML show on the node
    when neither MIG nor time-slicing changes the count; cites the device plugin's `device marked
    unhealthy` / `XidCriticalError` lines for the missing GPUs. (A node with none at all is DP001's.)
    Why it matters: pods that fit on paper do not fit in practice; a GPU once marked unhealthy stays out of
    allocation until the plugin restarts, even after a transient Xid, so capacity silently shrinks.
    How to fix: find the Xid or the lost GPU behind it (kernel log, nvidia-smi); repair or reset the GPU,
    then restart the device plugin pod so it re-offers the GPU.
    References: https://github.com/NVIDIA/k8s-device-plugin/issues/75; https://github.com/NVIDIA/k8s-device-plugin/issues/234; https://github.com/kubernetes/kubernetes/issues/92592
    """
    unhealthy = defaultdict(list)
    if logs is not None:
        for m in logs.matches("device-plugin.device-unhealthy"):
            unhealthy[m.log.node or _pod_node(cluster, m.line.pod or m.log.pod)].append(m.line.evidence())
    for name, node in sorted(cluster.nodes.items()):
        alloc, cap = _int(node.allocatable.get(GPU_RESOURCE)), _int(node.capacity.get(GPU_RESOURCE))
        if not alloc:
            continue
        ng = inventory.for_node(name) if inventory else None
        visible = ng.visible if ng is not None else None
        shared = _int(node.labels.get(REPLICAS_LABEL)) not in (None, 1) or any(k.startswith(MIG_PREFIX) for k in node.allocatable)
        mig = ng is not None and any(g.mig_current for g in ng.gpus)
        evidence = [_node_ev(node, f"allocatable:{GPU_RESOURCE}")]
        if cap is not None and alloc < cap:
            missing, against = cap - alloc, f"capacity {cap}"
            evidence.append(_node_ev(node, f"capacity:{GPU_RESOURCE}"))
        elif visible is not None and visible.value and alloc < visible.value and not shared and not mig:
            missing, against = visible.value - alloc, f"{visible.value} GPUs seen by {visible.source}"
            evidence.append(visible.evidence)
        else:
            continue
        lines = unhealthy.get(name) or unhealthy.get(None) or []
        evidence += lines[-3:]
        yield Hit(
            title=f"{name} offers {alloc} nvidia.com/gpu against {against}: {missing} GPU(s) out of allocation",
            explanation=(f"Node {name} advertises allocatable {GPU_RESOURCE}: {alloc}, below its {against}."
                         + (" The device plugin marked GPUs unhealthy (cited), which removes them from allocatable until it restarts."
                            if lines else " The device plugin does not offer the missing GPU(s): marked unhealthy after an Xid, lost from the "
                                          "driver, or excluded by its config; its log says which.")),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(
                Fix(FixKind.IMMEDIATE, "Find the Xid or lost GPU behind it on the node.",
                    (f"kubectl debug node/{name} -it --image=busybox -- chroot /host sh -c 'nvidia-smi -L; dmesg -T | grep -i xid | tail'",)),
                Fix(FixKind.WORKAROUND, "Once the GPU is healthy again, restart the device plugin on the node so it re-offers it.",
                    (f"kubectl delete pod -A -l app=nvidia-device-plugin-daemonset --field-selector spec.nodeName={name}",)),
            ),
            node=name,
            component="nvidia-device-plugin-daemonset",
            confidence=0.8 if lines else 0.65,
            facts={"allocatable": alloc, "capacity": cap, "visible": visible.value if visible else None, "missing": missing},
        )


def _pod_node(cluster: Cluster, pod: str | None) -> str | None:
    p = cluster.pod(pod) if pod else None
    return p.node if p is not None else None


# ------------------------------------------------------------------------------------------------ DP104


@check("DP104", "mig-strategy-resource-mismatch")
def mig_strategy_resource_mismatch(cluster: Cluster) -> Iterable[Hit]:
    """Pods ask for a GPU resource name the MIG strategy does not offer (nvidia.com/gpu on `mixed`, mig-* on `single`).

    What it does: For each Pending pod that requests nvidia.com/gpu or nvidia.com/mig-<profile>, looks at the
    GPU nodes: with the `mixed` strategy MIG GPUs are offered only as nvidia.com/mig-<profile>
    (nvidia.com/gpu counts only non-MIG GPUs); with `single` every MIG device is offered as nvidia.com/gpu
    and no mig-<profile> resource exists. Fires when the name the pod asks for has no free count on any
    node while the other naming does, citing the node's allocatable lines, its nvidia.com/mig.strategy
    label and the pod's FailedScheduling event.
    Why it matters: the scheduler only says `Insufficient nvidia.com/gpu`; the GPUs are there under another
    name, so adding nodes or restarting plugins does not help.
    How to fix: request the resource name the strategy offers (nvidia.com/mig-1g.10gb on mixed,
    nvidia.com/gpu on single), or change the strategy (mig.strategy in the operator's values) to match the
    workloads.
    References: https://github.com/NVIDIA/gpu-operator/issues/637; https://github.com/NVIDIA/gpu-operator/issues/518; https://github.com/NVIDIA/gpu-operator/issues/1602; https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html
    """
    gpu_nodes = [n for n in cluster.nodes.values() if any(k == GPU_RESOURCE or k.startswith(MIG_PREFIX) for k in (*n.allocatable, *n.capacity))
                 or STRATEGY_LABEL in n.labels]
    if not gpu_nodes:
        return
    offered: dict[str, list[tuple[Node, int]]] = defaultdict(list)
    for n in gpu_nodes:
        for k, v in n.allocatable.items():
            if (k == GPU_RESOURCE or k.startswith(MIG_PREFIX)) and (_int(v) or 0) > 0:
                offered[k].append((n, _int(v)))
    for pod in cluster.pods:
        if (pod.status or pod.phase) != "Pending":
            continue
        asks = {k: v for k, v in pod.resource_requests.items() if k == GPU_RESOURCE or k.startswith(MIG_PREFIX)}
        if not asks and pod.gpu_request:
            asks = {GPU_RESOURCE: pod.gpu_request}
        for res in asks:
            if offered.get(res):
                continue
            if res == GPU_RESOURCE:
                others = sorted(k for k in offered if k.startswith(MIG_PREFIX))
                if not others:
                    continue
                strategy = "mixed"
                said = f"the GPU nodes offer only MIG resources ({', '.join(others)}): the `mixed` strategy names MIG devices by profile"
                ask_instead = others[0]
            else:
                if not offered.get(GPU_RESOURCE) or any(k.startswith(MIG_PREFIX) for k in offered):
                    continue
                strategy = "single"
                said = (f"no node offers {res}, while nvidia.com/gpu is offered: with the `single` strategy every MIG device is "
                        "advertised as nvidia.com/gpu")
                ask_instead = GPU_RESOURCE
            nodes = [n for n, _ in offered.get(ask_instead, [])] or gpu_nodes
            labels = [n.evidence.get(f"label:{STRATEGY_LABEL}") for n in nodes if STRATEGY_LABEL in n.labels]
            shown = {n.labels[STRATEGY_LABEL] for n in nodes if STRATEGY_LABEL in n.labels}
            if shown and strategy not in shown:
                continue
            events = [e for e in cluster.events_for(pod.name) if e.reason == "FailedScheduling"]
            evidence = [pod.evidence, *(e.evidence for e in events[-1:]), *(_node_ev(n, f"allocatable:{ask_instead}") for n in nodes[:2]), *labels[:2]]
            ns = f" -n {pod.namespace}" if pod.namespace else ""
            yield Hit(
                title=f"{pod.name} asks for {res}, which the `{strategy}` MIG strategy does not offer (use {ask_instead})",
                explanation=f"Pod {pod.name} requests {res} and stays Pending: {said}.",
                severity=Severity.ERROR,
                role=Role.ROOT_CAUSE,
                evidence=tuple(dict.fromkeys(e for e in evidence if e)),
                fixes=(
                    Fix(FixKind.IMMEDIATE, f"Request {ask_instead} instead of {res} in the pod's resources.",
                        (f"kubectl get pod {pod.name}{ns} -o yaml",),
                        snippet=f"resources:\n  limits:\n    {ask_instead}: 1\n", snippet_language="yaml"),
                    Fix(FixKind.PERMANENT, f"Or change the MIG strategy (operator values mig.strategy: {'single' if strategy == 'mixed' else 'mixed'}) "
                        "to the naming your workloads use, and keep the two consistent across the cluster."),
                ),
                node=nodes[0].name if len(nodes) == 1 else None,
                component=pod.name,
                confidence=0.8,
                facts={"pod": pod.name, "requested": res, "strategy": strategy, "offered": sorted(offered)},
            )
