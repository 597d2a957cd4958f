"""Kernel-driver layer: nvidia.ko and friends, nvidia-peermem against MOFED, the driver container's build."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import cache
from typing import Iterable

from gpusleuth.analysis.ordering import Ordering, Violation
from gpusleuth.checks.base import check
from gpusleuth.checks.operator import helm_set
from gpusleuth.errors import NotApplicable
from gpusleuth.facts import Cluster, Configuration, Logs
from gpusleuth.facts.configuration import truthy
from gpusleuth.facts.host import HostFacts, NodeHost
from gpusleuth.facts.logs import Match
from gpusleuth.facts.operands import OperandGraph, operand_table, spec_for
from gpusleuth.knowledge import table
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Component, Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.k8s import Pod
from gpusleuth.model.logs import ContainerLog, LogLine
from gpusleuth.checks.stated_common import stated_hits
from gpusleuth.facts.prose import Prose
from gpusleuth.model.layers import Layer

# knowledge/signatures.toml rows these checks read
SIG_PEERMEM_INSERT = ("kmod.peermem.invalid-argument", "kmod.insert-failed")  # the latter for any reason
SIG_PEERMEM_SYMVER = "kmod.symbol-version-mismatch"
SIG_PEERMEM_UNKNOWN = "kmod.unknown-symbol"
SIG_MOFED_UNSET = "mofed.driver-ready.unset"
SIG_MOFED_SET = "mofed.driver-ready.set"
SIG_WAIT_MOFED = "driver-manager.mofed-wait"
SIG_RDMA_ON = "driver-manager.gpudirect-rdma"
SIG_MOFED_SOURCES = "driver.mofed-sources"
SIG_PACKAGE_MISSING = "driver.package.file-missing"
SIG_MKPRECOMPILED = "driver.package.pack"
PEERMEM = "nvidia_peermem"
MOFED_READY = "/run/mellanox/drivers/.driver-ready"
DRIVER_CTR_READY = "/run/nvidia/validations/.driver-ctr-ready"

DRIVER = "nvidia-driver-daemonset"
MOFED = "mofed"
DRIVER_CTR = "nvidia-driver-ctr"
RDMA_OFF = '{"spec":{"driver":{"rdma":{"enabled":false}}}}'
RDMA_OFF_VALUES = "driver:\n  rdma:\n    enabled: false\n"
# The permanent fix: what nvidia-driver-ctr should do before `modprobe nvidia-peermem` (wait for MOFED's marker).
MOFED_WAIT = """\
# before `modprobe -a nvidia-peermem` in the driver container's _load_driver():
timeout=300; elapsed=0
until [ -f /run/mellanox/drivers/.driver-ready ]; do
    [ "$elapsed" -ge "$timeout" ] && { echo "ERROR: timeout waiting for MOFED"; exit 1; }
    echo "waiting for MOFED (/run/mellanox/drivers/.driver-ready)"; sleep 5; elapsed=$((elapsed + 5))
done
"""


@dataclass
class _Side:
    """What the artifacts show of one driver pod's peermem failure and of the MOFED next to it."""

    pod: str | None
    namespace: str | None
    node: str | None
    failures: list[Match]


def _nearby(log: ContainerLog, line: LogLine, needle: str, back: int = 3) -> LogLine | None:
    """The closest line above `line` (within `back`) whose message holds `needle`: the `+ modprobe` trace."""
    numbers = [ln.line for ln in log.lines]
    i = bisect_left(numbers, line.line)
    for ln in reversed(log.lines[max(0, i - back) : i]):
        if needle in ln.message:
            return ln
    return None


def _driver_component(graph: OperandGraph | None, pod: str | None) -> Component | None:
    return _Lookups(graph, None, None).driver(pod)


class _Lookups:
    """What the checks here ask about the whole cluster once per failing node (the driver component of a pod,
    whether any Network Operator pod or kube-system is shown, the race on a node), each answered from one pass
    over the components, pods or violations instead of a scan per node."""

    def __init__(self, graph: OperandGraph | None, cluster: Cluster | None, ordering: Ordering | None):
        self.graph, self.cluster, self.ordering = graph, cluster, ordering
        self._drivers: tuple | None = None
        self._network: bool | None = None
        self._all_ns: bool | None = None
        self._races: tuple | None = None
        self._indexes: dict = {}

    def driver(self, pod: str | None) -> Component | None:
        """The driver component of the pod (the first one listed), else the only driver component."""
        if self.graph is None:
            return None
        if self._drivers is None:
            drivers = [c for c in self.graph.components if c.name == DRIVER]
            by_pod: dict = {}
            for c in drivers:
                by_pod.setdefault(c.pod, c)
            self._drivers = (drivers, by_pod)
        drivers, by_pod = self._drivers
        return (by_pod.get(pod) if pod else None) or (drivers[0] if len(drivers) == 1 else None)

    def network_operator_seen(self) -> bool:
        if self._network is None:
            self._network = _network_operator_seen(self.graph)
        return self._network

    def all_namespaces(self) -> bool:
        if self._all_ns is None:
            self._all_ns = _all_namespaces(self.cluster)
        return self._all_ns

    def race(self, node: str | None) -> Violation | None:
        """_race(ordering, node), from the rule's violations indexed by node."""
        if self.ordering is None:
            return None
        if self._races is None:
            found = [v for v in self.ordering.violations() if v.rule.id == RACE_RULE]
            by_node: dict = defaultdict(list)
            for i, v in enumerate(found):
                by_node[v.node].append(i)
            self._races = (found, by_node)
        found, by_node = self._races
        if node is not None:  # v.node in (node, None), in the violations' order
            found = [found[i] for i in sorted(by_node.get(node, []) + by_node.get(None, []))]
        return max(found, key=lambda v: (v.certain, v.confidence), default=None)

    def on_node(self, name: str, matches: list[Match], node: str | None) -> list[Match]:
        """[m for m in matches if _same_node(m, node)], in their order; `name` names the list for the index."""
        if node is None:
            return list(matches)
        index = self._index(("node", name), matches, lambda m: m.log.node)
        return [matches[i] for i in sorted(index.get(node, []) + index.get(None, []))]

    def of_pod(self, name: str, matches: list[Match], pod: str | None) -> list[Match]:
        """[m for m in matches if (m.line.pod or m.log.pod) in (pod, None)], in their order."""
        index = self._index(("pod", name), matches, lambda m: m.line.pod or m.log.pod)
        return [matches[i] for i in sorted(index.get(pod, []) + (index.get(None, []) if pod is not None else []))]

    def peermem(self, logs: Logs, sig: str) -> list[Match]:
        """_peermem(logs, sig), sorted once."""
        if ("peermem", sig) not in self._indexes:
            self._indexes[("peermem", sig)] = _peermem(logs, sig)
        return self._indexes[("peermem", sig)]

    def _index(self, key: tuple, matches: list[Match], of) -> dict:
        if key not in self._indexes:
            index: dict = defaultdict(list)
            for i, m in enumerate(matches):
                index[of(m)].append(i)
            self._indexes[key] = index
        return self._indexes[key]


def _group_failures(logs: Logs, graph: OperandGraph | None, look: _Lookups | None = None) -> list[_Side]:
    look = look or _Lookups(graph, None, None)
    by_pod: dict[str | None, list[Match]] = defaultdict(list)
    seen: set[tuple[str, int]] = set()
    for m in _peermem(logs, *SIG_PEERMEM_INSERT):
        if (m.line.artifact, m.line.line) not in seen:
            seen.add((m.line.artifact, m.line.line))
            by_pod[m.line.pod or m.log.pod].append(m)
    sides = []
    for pod, ms in by_pod.items():
        comp = look.driver(pod)
        sides.append(_Side(pod or (comp.pod if comp else None), ms[-1].log.namespace or (comp.namespace if comp else None),
                           ms[-1].log.node or (comp.node if comp else None), ms))
    return sides


def _peermem(logs: Logs, *ids: str) -> list[Match]:
    """Matches of generic module-loader signatures that are about nvidia_peermem, in log order."""
    out = [m for i in ids for m in logs.matches(i) if PEERMEM in m.line.message]
    return sorted(out, key=lambda m: (m.line.artifact, m.line.line))


def _same_node(m: Match, node: str | None) -> bool:
    if node is None or m.log.node is None:
        return True
    return m.log.node == node


def _mofed(graph: OperandGraph | None, node: str | None) -> tuple[Component | None, Pod | None]:
    if graph is None:
        return None, None
    comp = graph.get(MOFED, node)
    return comp, (graph.pod_of(comp) if comp else None)


def _network_operator_seen(graph: OperandGraph | None) -> bool:
    if graph is None:
        return False
    specs, _ = operand_table()
    net = {s.name for s in specs if s.operator == "network-operator"}
    return any(c.name in net and c.pod for c in graph.components)


def _before(a: LogLine, b: LogLine) -> bool | None:
    """a happened before b, when both carry comparable times; None when that cannot be told here (the
    timeline's ordering rules infer what bare lines allow)."""
    if a.time is None or b.time is None or (a.time.tzinfo is None) != (b.time.tzinfo is None):
        return None
    return a.time < b.time


def _all_namespaces(cluster: Cluster | None) -> bool:
    """The pod listing covers the cluster (kube-system is in it), so a missing Network Operator is absent."""
    return cluster is not None and any(p.namespace == "kube-system" for p in cluster.pods)


@check("KD001", "nvidia-peermem-load-failed")
def peermem_load_failed(
    logs: Logs | None = None, graph: OperandGraph | None = None, cluster: Cluster | None = None, config: Configuration | None = None,
    ordering: Ordering | None = None, host: HostFacts | None = None,
) -> Iterable[Hit]:
    """The nvidia_peermem kernel module (GPUDirect RDMA) fails to load, crashing the driver container.

    What it does: Finds `could not insert 'nvidia_peermem'` in the driver container's logs and decides
    which of three known causes the rest of the artifacts show: (a) MOFED was not ready when the driver
    container loaded the module (the Network Operator's MOFED pod unset /run/mellanox/drivers/.driver-ready
    and set it again after the failure, or restarted around it: a race after a kernel upgrade); (b) the module
    was built against a different MOFED than the one loaded (dmesg: `nvidia_peermem: disagrees about version of
    symbol ib_register_peer_memory_client`); (c) GPUDirect RDMA is enabled (ClusterPolicy
    driver.rdma.enabled, GPU_DIRECT_RDMA_ENABLED=true) with no MOFED at all (no Network Operator, no
    /run/mellanox/drivers, useHostMofed off). It cites the failing line and both sides of the evidence, and
    what the node itself shows (lsmod: nvidia_peermem and ib_core loaded or not; the MOFED version; the
    .driver-ready marker). Without any failure line, a node whose lsmod lists nvidia but no nvidia_peermem
    while GPUDirect RDMA is enabled (driver.rdma.enabled, or GPU_DIRECT_RDMA_ENABLED: true in the driver
    container's .driver-ctr-ready) is reported too: the module was never loaded or was unloaded with MOFED's
    ib_core (a MOFED reload), and GPUDirect RDMA is off on that node without an error anywhere.
    Why it matters: nvidia-driver-ctr loads nvidia-peermem right after nvidia.ko and exits when it fails, so
    the driver pod crash-loops, never writes .driver-ctr-ready, and every GPU operand on the node stays blocked
    in Init (typically 1 failed, 7 blocked, 1 running with errors).
    How to fix: (a) once the MOFED pod is Running and /run/mellanox/drivers/.driver-ready exists, delete the
    driver pod; it reloads cleanly. (b) rebuild against the loaded MOFED (delete the driver pod after MOFED is
    ready; keep MOFED and driver upgrades in step). (c) deploy MOFED (Network Operator NicClusterPolicy
    ofedDriver, or driver.rdma.useHostMofed=true for a host MOFED) or turn driver.rdma.enabled off. Disabling
    RDMA is the workaround for all three, at the cost of GPUDirect RDMA.
    References: https://github.com/NVIDIA/gpu-operator/issues/2868; https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html
    """
    if logs is None and host is None:
        raise NotApplicable("no logs and no host facts (lsmod) in the artifacts")
    look = _Lookups(graph, cluster, ordering)
    sides = _group_failures(logs, graph, look) if logs is not None else []
    for side in sides:
        hit = _peermem_hit(side, logs, graph, cluster, config, look.race(side.node), look)
        yield _with_host(hit, host.for_node(side.node) if host else None) if host else hit
    failed = {s.node for s in sides}
    for h in host.nodes if host else []:
        if h.node not in failed and None not in failed:
            yield from _peermem_not_loaded(h, logs, graph, config)


RACE_RULE = "peermem-after-mofed-ready"  # knowledge/ordering.toml


def _race(ordering: Ordering | None, node: str | None) -> Violation | None:
    """The timeline's measurement of the peermem-vs-MOFED race on this node (OP101 reports it in full)."""
    if ordering is None:
        return None
    found = [v for v in ordering.violations() if v.rule.id == RACE_RULE and (node is None or v.node in (node, None))]
    return max(found, key=lambda v: (v.certain, v.confidence), default=None)


def _peermem_hit(side: _Side, logs: Logs, graph: OperandGraph | None, cluster: Cluster | None, config: Configuration | None,
                 race: Violation | None = None, look: _Lookups | None = None) -> Hit:
    look = look or _Lookups(graph, cluster, None)
    last = side.failures[-1]
    evidence: list[Evidence] = []
    trace = _nearby(last.log, last.line, "modprobe")
    if trace is not None and trace.line != last.line.line:
        evidence.append(trace.evidence())
    evidence.append(last.line.evidence())
    comp = look.driver(side.pod)
    if comp is not None and comp.evidence:
        evidence.append(comp.evidence[0])  # the pod's status line: CrashLoopBackOff, restarts
    facts: dict = {"failures": len(side.failures), "pod": side.pod, "namespace": side.namespace}

    symver = look.on_node("symver", look.peermem(logs, SIG_PEERMEM_SYMVER), side.node)
    unknown = look.on_node("unknown", look.peermem(logs, SIG_PEERMEM_UNKNOWN), side.node)
    unset = look.on_node("unset", logs.matches(SIG_MOFED_UNSET), side.node)
    ready = look.on_node("ready", logs.matches(SIG_MOFED_SET), side.node)
    waited = look.of_pod("waited", logs.matches(SIG_WAIT_MOFED), side.pod)
    sources = look.of_pod("sources", logs.matches(SIG_MOFED_SOURCES), side.pod)
    rdma_lines = look.of_pod("rdma", logs.matches(SIG_RDMA_ON), side.pod)
    mofed, mofed_pod = _mofed(graph, side.node)
    rdma = config.setting("driver.rdma.enabled") if config else None
    host = config.setting("driver.rdma.useHostMofed") if config else None
    rdma_on = rdma is not None and truthy(rdma.value) is True
    host_mofed = host is not None and truthy(host.value) is True
    mofed_seen = bool(mofed and mofed.pod) or bool(unset or ready) or look.network_operator_seen()

    if symver:
        kind = "symbol-mismatch"
        evidence += [m.line.evidence() for m in symver[-2:]]
        title = "nvidia_peermem was built against a different MOFED than the one loaded (symbol version mismatch)"
        explanation = (
            f"The kernel refused nvidia_peermem because its symbol versions for the InfiniBand peer-memory API do not "
            f"match the loaded ib_core ({symver[-1].line.message.strip()}); modprobe reports that as 'Invalid argument'. "
            "The module was compiled against MOFED sources (or a host /usr/src/ofa_kernel) of another MOFED build than the "
            "one now in the kernel, typically after MOFED was upgraded or reloaded without rebuilding the GPU driver."
        )
        confidence = 0.85
    elif mofed_seen:
        kind = "mofed-not-ready"
        title = "nvidia_peermem failed to load: MOFED was not ready when the driver container loaded it"
        confidence, explanation = _race_explanation(last.line, unset, ready, waited, mofed, mofed_pod, unknown, evidence, facts)
        if race is not None:
            explanation += f" On one clock across both operators' logs: {race.describe()} (OP101)."
            facts["race"] = {"certain": race.certain, "gap_s": list(race.gap) if race.gap else None}
            confidence = max(confidence, 0.9 if race.certain else 0.8)
    elif rdma_on or rdma_lines:
        kind = "no-mofed"
        title = "nvidia_peermem failed to load: GPUDirect RDMA is enabled but no MOFED driver is present"
        absent = []
        if graph is not None and look.all_namespaces():
            absent.append("no Network Operator / MOFED pod in the cluster's pod listing")
        elif graph is not None:
            absent.append("no Network Operator / MOFED pod in the pods shown (the listing may not cover every namespace)")
        if not sources:
            absent.append("the driver log never links /run/mellanox/drivers sources")
        if not host_mofed:
            absent.append("driver.rdma.useHostMofed is not true")
        if unknown:
            absent.append("the kernel has no peer-memory symbols (inbox ib_core)")
            evidence += [m.line.evidence() for m in unknown[-1:]]
        explanation = (
            "nvidia-peermem needs the MOFED ib_core peer-memory API (ib_register_peer_memory_client); GPUDirect RDMA is "
            f"enabled but nothing provides MOFED: {'; '.join(absent) or 'no MOFED evidence at all'}."
        )
        confidence = 0.8 if look.all_namespaces() else 0.65
    else:
        kind = "undetermined"
        title = "nvidia_peermem failed to load (Invalid argument); the artifacts do not show why"
        explanation = (
            "The driver container could not insert nvidia_peermem. No MOFED pod or log, no ClusterPolicy and no kernel log "
            "are in the artifacts, so the three known causes (MOFED not ready yet, MOFED symbol mismatch, no MOFED at all) "
            "cannot be told apart. Add `dmesg | grep -i peermem`, the Network Operator pods and the MOFED pod log."
        )
        confidence = 0.6
    if rdma is not None and rdma.evidence is not None:
        evidence.append(rdma.evidence)
    evidence += [m.line.evidence() for m in rdma_lines[-1:]]
    facts["cause"] = kind
    where = f" ({side.pod})" if side.pod else ""
    return Hit(
        title=title,
        explanation=explanation + f" nvidia-driver-ctr exits on this error{where}, so the driver pod crash-loops and never "
        "writes /run/nvidia/validations/.driver-ctr-ready; the operands that wait for it stay in Init.",
        severity=Severity.CRITICAL,
        role=Role.ROOT_CAUSE,
        evidence=tuple(dict.fromkeys(evidence)),
        fixes=_peermem_fixes(kind, side, mofed, mofed_pod, config),
        node=side.node,
        component=DRIVER,
        confidence=confidence,
        facts=facts,
    )


def _race_explanation(failure: LogLine, unset, ready, waited, mofed, mofed_pod, unknown, evidence: list, facts: dict):
    """Class (a): decide from what is visible, citing both sides; the timeline proves the ordering."""
    said = []
    confidence = 0.7
    mofed_side = ""
    if unset:
        evidence.append(unset[-1].line.evidence())
        mofed_side = f"the MOFED container unset /run/mellanox/drivers/.driver-ready ({unset[-1].line.evidence().cite()})"
    if ready:
        r = ready[-1].line
        evidence.append(r.evidence())
        order = _before(failure, r)
        if order:
            confidence = 0.9
            facts["ready_after_failure_s"] = round((r.time - failure.time).total_seconds())
            when = f"only at {r.time:%H:%M:%S} ({r.evidence().cite()}), after the failure at {failure.time:%H:%M:%S}"
        else:
            confidence = max(confidence, 0.75)
            when = (f"at {r.time:%H:%M:%S} ({r.evidence().cite()}); the failure line itself carries no time"
                    if r.time else f"later in its log ({r.evidence().cite()})")
        mofed_side = (f"{mofed_side}, then set it again {when}" if mofed_side
                      else f"the MOFED container set /run/mellanox/drivers/.driver-ready {when}")
    if mofed_side:
        said.append(mofed_side)
    if waited:
        evidence.append(waited[-1].line.evidence())
        said.append("k8s-driver-manager had been 'Waiting for MOFED to be installed', so MOFED was (re)installing while the driver started")
        confidence = max(confidence, 0.75)
    if mofed_pod is not None and mofed_pod.evidence:
        evidence.append(mofed_pod.evidence)
        if mofed_pod.restarts:
            said.append(f"the MOFED pod {mofed_pod.name} restarted {mofed_pod.restarts} time(s)")
    if unknown:
        evidence.append(unknown[-1].line.evidence())
        said.append("the kernel did not yet export the MOFED peer-memory symbols")
    state = f" (MOFED pod now {mofed.status})" if mofed is not None and mofed.status else ""
    text = (
        "nvidia-driver-ctr loads nvidia-peermem right after nvidia.ko without waiting for the Network Operator's MOFED driver "
        "to be ready (only the nvidia-peermem-ctr sidecar and k8s-driver-manager wait for it). "
        + ("Here " + "; ".join(said) + "." if said else "The MOFED driver is deployed next to it, but its readiness transition is not in the artifacts.")
        + f" The failure came in the window where MOFED was not loaded yet or was being reloaded{state}."
    )
    if not (unset or ready or waited):
        confidence = 0.6
    return confidence, text


def _ns(ns: str | None) -> str:
    return f" -n {ns}" if ns else " -A"


def _daemonset_of(pod: str | None) -> str | None:
    """DaemonSet pods are named <daemonset>-<5 characters>."""
    if pod and len(pod) > 6 and pod[-6] == "-":
        return pod[:-6]
    return None


def _disable_rdma(config: Configuration | None) -> tuple[tuple[str, ...], str]:
    """Commands that turn driver.rdma off: the ClusterPolicy now, and the Helm values so that the next
    `helm upgrade` does not turn it back on; names from the artifacts, looked up when they are not there."""
    cp = config.cluster_policy if config else None
    rel = config.release if config else None
    cmds = []
    note = ""
    if cp is not None and cp.name:
        cmds.append(f"kubectl patch clusterpolicy/{cp.name} --type merge -p '{RDMA_OFF}'")
    else:
        cmds.append(f"kubectl patch $(kubectl get clusterpolicy -o name) --type merge -p '{RDMA_OFF}'")
        note = " (the ClusterPolicy's name is not in the artifacts; the command looks it up)"
    if rel is not None and rel.name:
        ns = f" -n {rel.namespace}" if rel.namespace else ""
        cmds.append(f"helm upgrade {rel.name} nvidia/gpu-operator{ns} --reuse-values --set driver.rdma.enabled=false")
    return tuple(cmds), note


def _rdma_off(config: Configuration | None) -> Fix:
    disable, unnamed = _disable_rdma(config)
    return Fix(
        FixKind.WORKAROUND,
        "If GPUDirect RDMA is not needed, disable it so the driver container stops loading nvidia-peermem" + unnamed
        + ". Impact: no GPU-to-NIC peer-to-peer DMA on any node of the policy; NCCL and other RDMA traffic is staged through "
        "host memory, which cuts multi-node bandwidth. Set it back once the cause is fixed.",
        disable,
        RDMA_OFF_VALUES,
        "yaml",
    )


def _peermem_fixes(kind: str, side: _Side, mofed: Component | None, mofed_pod: Pod | None, config: Configuration | None) -> tuple[Fix, ...]:
    ns = side.namespace
    pod = side.pod
    ds = _daemonset_of(pod)
    net_ns = mofed_pod.namespace if mofed_pod is not None else None
    check_net = f"kubectl get pods -n {net_ns} -o wide" if net_ns else "kubectl get pods -A -o wide | grep -i -E 'mofed|doca'"
    delete = f"kubectl delete pod {pod}{_ns(ns)}" if pod else f"kubectl delete pod{_ns(ns)} -l app=nvidia-driver-daemonset"
    follow = f"kubectl logs -f daemonset/{ds}{_ns(ns)} -c {DRIVER_CTR}" if ds and ns else f"kubectl logs -f{_ns(ns)} -l app=nvidia-driver-daemonset -c {DRIVER_CTR}"
    where = f"on {side.node}" if side.node else "on the node"
    pod_note = "" if pod else " (the driver pod's name is not in the artifacts; the label selector finds it)"
    workaround = _rdma_off(config)
    if kind == "mofed-not-ready":
        ready_now = f" ({mofed_pod.name} shows {mofed.status})" if mofed is not None and mofed_pod is not None and mofed.status else ""
        return (
            Fix(
                FixKind.IMMEDIATE,
                f"Wait until the Network Operator's MOFED pod is Running and ready{ready_now} and "
                f"/run/mellanox/drivers/.driver-ready exists {where}, then delete the crash-looping driver pod{pod_note}; "
                f"the new pod loads nvidia_peermem against the finished MOFED. Follow its {DRIVER_CTR} log.",
                (check_net, "ls -l /run/mellanox/drivers/.driver-ready", delete, follow),
            ),
            workaround,
            Fix(
                FixKind.PERMANENT,
                "Make nvidia-peermem loading wait for MOFED: nvidia-driver-ctr must check /run/mellanox/drivers/.driver-ready "
                "before `modprobe nvidia-peermem`, as the nvidia-peermem-ctr sidecar already does; until the "
                "driver container does, sequence kernel upgrades so the MOFED driver pod is ready before the GPU driver pod "
                "starts (an init container that waits for the marker, or upgrading the Network Operator's driver first). No "
                "driver-container release that adds this wait was found; check the GPU Operator release notes' known issues.",
                (),
                MOFED_WAIT,
                "bash",
            ),
        )
    if kind == "symbol-mismatch":
        return (
            Fix(
                FixKind.IMMEDIATE,
                f"Check which MOFED is loaded, then delete the driver pod{pod_note} so nvidia-peermem is rebuilt against the "
                "loaded MOFED's sources (/run/mellanox/drivers/usr/src/ofa_kernel).",
                (check_net, "modinfo ib_core | grep -E '^(version|srcversion)'", delete, follow),
            ),
            workaround,
            Fix(
                FixKind.PERMANENT,
                "Keep MOFED and the GPU driver in step: upgrade or reload the Network Operator's MOFED and the GPU driver "
                "together, and with driver.rdma.useHostMofed=true make sure the host's /usr/src/ofa_kernel matches the loaded "
                "modules (ofed_info -s). A precompiled driver image cannot carry an nvidia-peermem matching every MOFED.",
            ),
        )
    if kind == "no-mofed":
        return (
            Fix(
                FixKind.IMMEDIATE,
                "Confirm that no MOFED driver exists for this node (no Network Operator, no NicClusterPolicy, no host MOFED); "
                "if GPUDirect RDMA is not required, disable it as below and the driver pod recovers.",
                ("kubectl get nicclusterpolicy -A", "kubectl get pods -A -o wide | grep -i -E 'mofed|doca|network-operator'",
                 "ls /run/mellanox/drivers"),
            ),
            workaround,
            Fix(
                FixKind.PERMANENT,
                "Provide MOFED before enabling GPUDirect RDMA: deploy the Network Operator with a NicClusterPolicy ofedDriver, "
                "or, when MOFED is installed on the host, set driver.rdma.useHostMofed=true.",
                (),
                "driver:\n  rdma:\n    enabled: true\n    useHostMofed: true   # only when MOFED is installed on the host\n",
                "yaml",
            ),
        )
    return (
        Fix(
            FixKind.IMMEDIATE,
            "Collect what tells the causes apart: the kernel log of the node, the Network Operator pods and the MOFED pod's log.",
            ("dmesg -T | grep -i -E 'peermem|ib_core|peer_mem'", check_net,
             f"kubectl logs --previous {pod}{_ns(ns)} -c {DRIVER_CTR}" if pod else f"kubectl logs --previous{_ns(ns)} -l app=nvidia-driver-daemonset -c {DRIVER_CTR}"),
        ),
        workaround,
    )


def _host_side(h: NodeHost) -> tuple[list[Evidence], list[str], dict]:
    """What a node's host shows about nvidia_peermem and MOFED: evidence, sentences, facts."""
    evidence: list[Evidence] = []
    said: list[str] = []
    facts: dict = {}
    peermem, ib_core = h.loaded(PEERMEM), h.loaded("ib_core")
    if peermem is not None:
        evidence.append(h.module_evidence(PEERMEM))
        said.append(f"{h.modules.source} on the node {'lists' if peermem else 'does not list'} {PEERMEM}")
        facts["peermem_loaded"] = peermem
    if ib_core is not None:
        evidence.append(h.module_evidence("ib_core"))
        said.append(f"ib_core is {'loaded' if ib_core else 'not loaded'}")
    if h.mofed is not None:
        evidence.append(h.mofed.evidence)
        said.append(f"MOFED {h.mofed.version} ({h.mofed.source})")
        facts["mofed"] = h.mofed.version
    ready = h.path(MOFED_READY)
    if ready is not None:
        evidence.append(ready.evidence)
        said.append(f"{MOFED_READY} {'exists' if ready.exists else 'does not exist'}")
    return [e for e in evidence if e], said, facts


def _with_host(hit: Hit, h: NodeHost | None) -> Hit:
    if h is None:
        return hit
    evidence, said, facts = _host_side(h)
    if not said:
        return hit
    return replace(hit, explanation=hit.explanation + " On the node now: " + "; ".join(said) + ".",
                   evidence=tuple(dict.fromkeys((*hit.evidence, *evidence))), facts={**hit.facts, **facts})


def _peermem_not_loaded(h: NodeHost, logs: Logs | None, graph: OperandGraph | None, config: Configuration | None) -> Iterable[Hit]:
    """nvidia is loaded, nvidia_peermem is not, GPUDirect RDMA is on, and no log shows a load failure."""
    if h.loaded("nvidia") is not True or h.loaded(PEERMEM) is not False:
        return
    rdma = config.setting("driver.rdma.enabled") if config else None
    rdma = rdma if rdma is not None and truthy(rdma.value) is True else None
    rdma_lines = [m for m in logs.matches(SIG_RDMA_ON) if m.log.node in (h.node, None)] if logs is not None else []
    marker = h.markers.get(DRIVER_CTR_READY)
    flag = marker.fields.get("GPU_DIRECT_RDMA_ENABLED") if marker is not None else None
    flag = flag if flag is not None and truthy(flag[0]) is True else None
    if rdma is None and not rdma_lines and flag is None:
        return
    evidence, said, facts = _host_side(h)
    evidence = [h.module_evidence("nvidia"), *evidence]
    evidence += [rdma.evidence] if rdma is not None else [m.line.evidence() for m in rdma_lines[-1:]]
    evidence += [flag[1]] if flag is not None else []
    comp = next((c for c in graph.components if c.name == DRIVER and c.node == h.node), None) if graph is not None and h.node else None
    side = _Side(comp.pod if comp else None, comp.namespace if comp else None, h.node, [])
    no_ib = h.loaded("ib_core") is False
    where = f"on {h.node}" if h.node else "on the node"
    enabled = (f"{rdma.source} enables GPUDirect RDMA (driver.rdma.enabled)" if rdma is not None else
               f"the driver container's {DRIVER_CTR_READY} records GPU_DIRECT_RDMA_ENABLED: true" if flag is not None else
               "the driver manager reports GPUDirect RDMA enabled")
    pod_ctr = (f"kubectl logs {side.pod}{_ns(side.namespace)} -c nvidia-peermem-ctr" if side.pod
               else f"kubectl logs{_ns(side.namespace)} -l app=nvidia-driver-daemonset -c nvidia-peermem-ctr")
    delete = f"kubectl delete pod {side.pod}{_ns(side.namespace)}" if side.pod else f"kubectl delete pod{_ns(side.namespace)} -l app=nvidia-driver-daemonset"
    yield Hit(
        title=f"nvidia_peermem is not loaded {where} although GPUDirect RDMA is enabled",
        explanation=(f"{enabled}, so the driver pod loads nvidia_peermem after nvidia.ko; the node's {h.modules.source} lists nvidia "
                     f"but no nvidia_peermem{' (' + '; '.join(said[1:]) + ')' if said[1:] else ''}. "
                     + ("Without MOFED's ib_core nothing provides the peer-memory API nvidia_peermem needs. " if no_ib else
                        "nvidia_peermem depends on MOFED's ib_core: a MOFED reload (the MOFED pod restarting, openibd restart) has to "
                        "unload it, and only the driver pod's nvidia-peermem-ctr loads it again. ")
                     + "No load failure is in the artifacts; until it is loaded, GPUDirect RDMA is off on this node and RDMA traffic "
                     "(NCCL over InfiniBand/RoCE) is staged through host memory."),
        severity=Severity.ERROR,
        role=Role.ROOT_CAUSE,
        evidence=tuple(dict.fromkeys(e for e in evidence if e)),
        fixes=(
            Fix(FixKind.IMMEDIATE, "See why the driver pod's nvidia-peermem-ctr has not loaded it, then restart the driver pod once MOFED is "
                "ready so it is loaded again" + ("" if side.pod else " (the driver pod's name is not in the artifacts; the label selector finds it)") + ".",
                (pod_ctr, "ls -l /run/mellanox/drivers/.driver-ready", delete)),
            _rdma_off(config),
        ),
        node=h.node,
        component=DRIVER,
        confidence=0.7,
        facts={**facts, "cause": "not-loaded"},
    )


@check("KD002", "precompiled-package-missing-modules")
def precompiled_package_missing_modules(logs: Logs, graph: OperandGraph | None = None) -> Iterable[Hit]:
    """The driver container's precompiled package lacks kernel modules (nvidia-peermem.ko, nvidia-drm.ko).

    What it does: Finds nvidia-installer's `Required file 'nvidia-peermem.ko' not found in package` (and the
    same for nvidia-drm.ko) in the driver container's log and cites the `mkprecompiled --pack` line that built
    the package without them.
    Why it matters: the package is what nvidia-installer installs from; a module missing from it is rebuilt
    during installation or not installed at all, which makes an nvidia-peermem load failure more likely and
    harder to read. It is a contributing finding, not the root cause: the driver can still load from it.
    How to fix: build the precompiled package with every module the node needs (add `--kernel-module
    nvidia-peermem.ko` and `--kernel-module nvidia-drm.ko` to the mkprecompiled call of the driver container
    build) or use a driver image whose package includes them.
    References: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/precompiled-drivers.html; https://github.com/NVIDIA/gpu-driver-container
    """
    by_pod: dict[str | None, list[Match]] = defaultdict(list)
    for m in logs.matches(SIG_PACKAGE_MISSING):
        by_pod[m.line.pod or m.log.pod].append(m)
    packs = logs.matches(SIG_MKPRECOMPILED)
    for pod, ms in by_pod.items():
        modules = sorted({_module_named(m.line.message) for m in ms} - {None})
        pack = [p for p in packs if (p.line.pod or p.log.pod) == pod and p.log is ms[0].log] or [p for p in packs if (p.line.pod or p.log.pod) == pod]
        evidence = [p.line.evidence() for p in pack[-1:]] + [m.line.evidence() for m in ms]
        comp = _driver_component(graph, pod)
        yield Hit(
            title=f"Precompiled driver package is missing {', '.join(modules) or 'kernel modules'}",
            explanation=(
                "mkprecompiled packed the driver build without "
                + (", ".join(modules) or "some modules")
                + ", so nvidia-installer reports them as not found in the package. On its own this does not stop the "
                "driver, but with GPUDirect RDMA the nvidia-peermem module then comes from outside the tested package."
            ),
            severity=Severity.WARNING,
            role=Role.CONTRIBUTING,
            evidence=tuple(dict.fromkeys(evidence)),
            fixes=(
                Fix(
                    FixKind.PERMANENT,
                    "Pack every module into the precompiled package (mkprecompiled --kernel-module for each), or use a driver image whose package "
                    "includes them.",
                    (),
                    "../mkprecompiled --pack nvidia-modules-$(uname -r) \\\n"
                    "  --kernel-module nvidia-uvm.ko --target-directory . \\\n"
                    "  --kernel-module nvidia-peermem.ko --target-directory . \\\n"
                    "  --kernel-module nvidia-drm.ko --target-directory .\n",
                    "bash",
                ),
            ),
            node=comp.node if comp else ms[-1].log.node,
            component=DRIVER,
            confidence=0.9,
            facts={"missing": modules, "pod": pod or (comp.pod if comp else None)},
        )


def _module_named(message: str) -> str | None:
    start = message.find("'")
    end = message.find("'", start + 1)
    return message[start + 1 : end] if 0 <= start < end else None


DRIVER_READY = ("/run/nvidia/validations/.driver-ctr-ready", "/run/nvidia/validations/driver-ready")
_UBUNTU_KERNEL = re.compile(r"^(?P<series>\d+\.\d+)\.\d+-\d+-(?P<flavor>[a-z][a-z0-9-]*)$")




def _driver_pods(cluster: Cluster | None, node: str | None) -> list[Pod]:
    pods = [p for p in (cluster.pods if cluster else []) if (s := spec_for(p)) is not None and s.name == DRIVER]
    if node is not None:
        return [p for p in pods if p.node == node]
    return pods if len(pods) == 1 else []


def _ready(p: Pod) -> bool:
    have, _, want = (p.ready or "").partition("/")
    return (p.status or p.phase) == "Running" and bool(have) and have == want


# ------------------------------------------------------------------------------------------------ KD120


@check("KD120", "nvidia-module-not-loaded-while-driver-ready")
def nvidia_module_not_loaded(host: HostFacts, cluster: Cluster | None = None) -> Iterable[Hit]:
    """The node's module listing has no nvidia module, while its driver pod is Running and ready or the driver-ready marker exists.

    What it does: On each node whose lsmod (or /proc/modules) covers `nvidia` and does not list it, looks for
    what claims the driver is up: the GPU Operator driver pod on that node Running with all containers ready,
    or /run/nvidia/validations/.driver-ctr-ready or driver-ready present. Silent when nouveau is loaded
    instead (KD101 explains that) and when nvidia-smi read the driver on the node.
    Why it matters: the driver container writes .driver-ctr-ready and the validator writes driver-ready only
    after nvidia.ko loaded and nvidia-smi worked, so the module was unloaded since: a driver container that
    stops unloads the modules on its way out (its signal trap runs _shutdown) while the validator's
    driver-ready stays; an rmmod on the host, or an upgrade that stopped half-way, do the same. GPU pods on
    the node then fail to start or lose their devices while the operator still counts the driver as ready.
    How to fix: find who unloaded it in the kernel log (`dmesg | grep -i nvidia`), then restart the driver
    pod so the driver container loads the modules again and the validators run afresh.
    References: https://github.com/NVIDIA/gpu-operator/issues/416; https://github.com/NVIDIA/gpu-operator/issues/129
    """
    for h in host.nodes:
        if h.loaded("nvidia") is not False or h.loaded("nouveau") is True or h.smi_driver:
            continue
        pods = [p for p in _driver_pods(cluster, h.node) if _ready(p)]
        markers = [m for p in DRIVER_READY if (m := h.path(p)) is not None and m.exists]
        if not pods and not markers:
            continue
        claims = [f"driver pod {p.name} is {p.status} {p.ready}" for p in pods] + [f"{m.path} exists" for m in markers]
        pod = pods[0] if pods else None
        where = f"on {h.node}" if h.node else "on the node"
        delete = (f"kubectl delete pod {pod.name}{_ns(pod.namespace)}" if pod else
                  f"kubectl delete pod{_ns(None)} -l app=nvidia-driver-daemonset --field-selector spec.nodeName={h.node}" if h.node else None)
        fixes = [Fix(FixKind.IMMEDIATE, "Find when and how the module was unloaded, then restart the driver pod so it loads the modules "
                     "again" + ("" if pod else " (the driver pod's name is not in the artifacts; the selector finds it)") + ".",
                     tuple(c for c in ("dmesg -T | grep -i -E 'nvidia|NVRM'",
                                       f"kubectl logs {pod.name}{_ns(pod.namespace)} -c nvidia-driver-ctr" if pod else None, delete) if c))]
        yield Hit(
            title=f"The NVIDIA kernel module is not loaded {where} although {claims[0]}",
            explanation=(f"The node's {h.modules.source} lists no nvidia module, yet {'; '.join(claims)}. The driver container and the "
                         "validator only report ready after nvidia.ko loaded and nvidia-smi worked, so the module was unloaded since: "
                         "GPU pods on this node cannot get their devices while the operator still counts the driver as ready."),
            severity=Severity.CRITICAL,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in (h.modules.evidence, *(p.evidence for p in pods), *(m.evidence for m in markers)) if e)),
            fixes=tuple(fixes),
            node=h.node,
            component=DRIVER,
            confidence=0.75 if pods and markers else 0.65,
            facts={"pods": [p.name for p in pods], "markers": [m.path for m in markers]},
        )


# ------------------------------------------------------------------------------------------------ KD121


@cache
def _precompiled() -> tuple[dict[str, str], tuple[str, ...], tuple[str, ...], re.Pattern]:
    t = table("failure_classes")["precompiled_drivers"]
    return {r["os"]: r["kernel"] for r in t["os"]}, tuple(t["flavors"]), tuple(t["arch"]), re.compile(t["tag"])


def _precompiled_in_use(config: Configuration | None, cluster: Cluster | None, node: str | None) -> tuple[str, Evidence | None] | None:
    """Why the node gets a precompiled driver: driver.usePrecompiled, or the driver pod's image tag."""
    setting = config.setting("driver.usePrecompiled") if config else None
    if setting is not None and truthy(setting.value) is True:
        return f"driver.usePrecompiled is true ({setting.source})", setting.evidence
    tag_rx = _precompiled()[3]
    for p in _driver_pods(cluster, node):
        for image in p.images:
            if tag_rx.match(image.rpartition(":")[2]):
                return f"the driver pod {p.name} runs the precompiled image {image}", p.evidence
    return None


def _unsupported(h: NodeHost) -> tuple[str, list[Evidence]] | None:
    """Why no precompiled image exists for this node's OS, kernel and architecture; None when one should."""
    series_of, flavors, arches, _ = _precompiled()
    kernel = h.running_kernel()
    if h.os is None or h.os.tag is None or kernel is None:
        return None
    release, kernel_ev = kernel
    evidence = [h.os.evidence, kernel_ev]
    arch = h.kernel.arch if h.kernel is not None else None
    if arch and arch not in arches:
        return f"the node is {arch}; precompiled images are built for {', '.join(arches)} only", evidence
    if h.os.tag not in series_of:
        return f"the node runs {h.os.pretty_name or h.os.tag} ({h.os.tag}); precompiled images exist for {', '.join(series_of)} only", evidence
    m = _UBUNTU_KERNEL.match(release)
    series = series_of[h.os.tag]
    if m is None or m.group("series") != series:
        return f"the node runs kernel {release}; precompiled images for {h.os.tag} are built for the {series} kernel series only", evidence
    if m.group("flavor") not in flavors:
        return (f"the node runs the {m.group('flavor')} kernel flavor ({release}); precompiled images exist for the "
                f"{', '.join(flavors)} flavors only"), evidence
    return None


@check("KD121", "precompiled-driver-unavailable-for-node")
def precompiled_driver_unavailable(host: HostFacts, config: Configuration | None = None, cluster: Cluster | None = None) -> Iterable[Hit]:
    """The GPU Operator is set to use precompiled drivers, and NVIDIA builds none for the node's OS, kernel or architecture.

    What it does: When driver.usePrecompiled is true (ClusterPolicy or Helm values) or a driver pod runs a
    precompiled image (nvcr.io/nvidia/driver:<branch>-<kernel>-<os>), compares each node's /etc/os-release
    and running kernel (uname -r, or the Node's kernelVersion) with the precompiled images NVIDIA publishes
    (knowledge/failure_classes.toml [precompiled_drivers]: Ubuntu 22.04 with the 5.15 kernel series, 24.04
    with 6.8; generic, nvidia, azure, aws and oracle flavors; x86_64).
    Why it matters: the operator asks for an image named after the node's kernel; for any other OS, kernel
    series (an Ubuntu HWE kernel), flavor or architecture that image does not exist, so the driver pod
    stays in ImagePullBackOff and every GPU operand on the node waits for it.
    How to fix: turn usePrecompiled off so the driver container builds the module on the node (it then needs
    kernel headers), build and push a precompiled image for this kernel yourself, or run a kernel NVIDIA
    builds images for.
    References: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/precompiled-drivers.html; https://github.com/NVIDIA/gpu-operator/issues/1203
    """
    for h in host.nodes:
        use = _precompiled_in_use(config, cluster, h.node)
        why = _unsupported(h) if use else None
        if why is None:
            continue
        reason, evidence = why
        cmds = helm_set(config, "driver.usePrecompiled=false")
        arch = f" {h.kernel.arch}" if h.kernel is not None and h.kernel.arch else ""
        yield Hit(
            title=f"No precompiled NVIDIA driver image exists for {h.node or 'the node'}: {h.os.tag}{arch} with kernel {h.running_kernel()[0]}",
            explanation=(f"{use[0]}, so the GPU Operator pulls nvcr.io/nvidia/driver:<branch>-<kernel release>-<os> for each node; "
                         f"{reason}. The image does not exist, so the driver pod cannot start and everything that waits for the driver "
                         "stays blocked (OP102 shows the failing pull when the artifacts have it)."),
            severity=Severity.CRITICAL,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in (use[1], *evidence) if e)),
            fixes=(
                Fix(FixKind.WORKAROUND, "Let the driver container compile the module on the node instead (it needs the kernel headers "
                    "from the OS repositories)." + ("" if cmds else " The GPU Operator's Helm release is not in the artifacts: set "
                                                    "driver.usePrecompiled=false in its values or the ClusterPolicy."),
                    cmds, snippet="driver:\n  usePrecompiled: false\n", snippet_language="yaml"),
                Fix(FixKind.PERMANENT, "Build a precompiled driver image for this kernel and push it to your registry (NVIDIA's "
                    "gpu-driver-container precompiled Dockerfile), or move the node to an OS and kernel NVIDIA builds images for."),
            ),
            node=h.node,
            component=DRIVER,
            confidence=0.8,
            facts={"os": h.os.tag if h.os else None, "kernel": h.running_kernel()[0] if h.running_kernel() else None},
        )


@check("KD080", "stated-driver-install-symptom")
def stated_driver_install_symptom(prose: Prose | None = None) -> Iterable[Hit]:
    """A ticket describes the driver failing to install or load on the node.

    What it does: Reads the sentences of the artifacts that no parser claims (and the prose of Markdown issue
    bodies) against knowledge/phrases.toml [[symptom]] rows of this layer: the driver pod crash-looping or the module not loading, the node's kernel crashing when the driver loads,
    nouveau holding the GPU, Secure Boot being on, or "it worked until the kernel was upgraded". Each match is a finding
    that cites the sentence, says what it implies, and lists the commands whose output would confirm it.
    Its confidence is low (0.35): a person's words, not a program's output, so any machine-read cause on the
    same scope explains it first.
    Why it matters: A ticket often holds only sentences; the NVIDIA kernel module is the bottom of the stack: while it is not loaded, every GPU component above it waits or fails.
    How to fix: Run the commands the finding lists (`uname -r`, `lsmod | grep -e nvidia -e nouveau`, `mokutil --sb-state`, the driver pod's log) and give their output to gpusleuth; the machine-read findings then name the cause.
    References: knowledge/phrases.toml (each symptom row lists the public tickets it was learned from)
    """
    yield from stated_hits(prose, Layer.KERNEL_DRIVER)
