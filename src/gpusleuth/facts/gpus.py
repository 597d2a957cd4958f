"""The GPUs per node as every source sees them, and what the kernel said about them.

``GpuInventory``: per node, the GPUs nvidia-smi / NVML / dcgm-exporter read, merged by UUID or PCI bus id,
with every count that claims how many GPUs the node has (nvidia-smi, GFD's ``nvidia.com/gpu.count``, NFD's
``pci-10de.present``, node capacity and allocatable) each with its evidence, so a check can say which
layer lost a GPU.

``KernelEvents``: Xid events (from kernel-kind logs, and the last Xid dcgm-exporter reported) grouped into
bursts per GPU, with follow-on Xids (knowledge/xid.toml ``follow_on_of``) attributed to the first one;
plus the NVRM lines that are not Xids: fallen off the bus, GPU lost, GSP timeouts, API mismatch, nouveau.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from datetime import timedelta

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.cluster import GPU_RESOURCE, Cluster
from gpusleuth.facts.metrics import GpuMetrics
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.knowledge import xid as xid_table
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Gap
from gpusleuth.model.gpu import GpuDevice, GpuError, KernelEvent, NvidiaSmiReport, XidEvent, short_pci
from gpusleuth.model.k8s import Node
from gpusleuth.model.logs import ContainerLog
from gpusleuth.parsers.k8s_common import to_int

# Labels GFD/NFD put on GPU nodes (the names drifted: cuda.driver.* -> cuda.driver-version.*).
COUNT_LABEL = "nvidia.com/gpu.count"
PRODUCT_LABEL = "nvidia.com/gpu.product"
PCI_PRESENT_LABEL = "feature.node.kubernetes.io/pci-10de.present"
_DRIVER_LABELS = (("nvidia.com/cuda.driver-version.full",), ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"),
                  ("nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver-version.minor", "nvidia.com/cuda.driver-version.revision"))
_CUDA_LABELS = (("nvidia.com/cuda.runtime-version.full",), ("nvidia.com/cuda.runtime.major", "nvidia.com/cuda.runtime.minor"),
                ("nvidia.com/cuda.runtime-version.major", "nvidia.com/cuda.runtime-version.minor"))


@dataclass(frozen=True, slots=True)
class GpuCount:
    """One claim about how many GPUs a node has, and who makes it."""

    source: str  # nvidia-smi[ -q[ -x]] | nvml | label nvidia.com/gpu.count | capacity nvidia.com/gpu | ...
    value: int | None  # None: a presence-only claim (NFD's pci-10de.present=true)
    evidence: Evidence


@dataclass
class NodeGpus:
    node: str | None  # None: nothing says which node the output came from
    gpus: list[GpuDevice] = field(default_factory=list)
    errors: list[GpuError] = field(default_factory=list)
    reports: list[NvidiaSmiReport] = field(default_factory=list)
    counts: list[GpuCount] = field(default_factory=list)
    driver_version: str | None = None
    driver_evidence: Evidence | None = None
    cuda_version: str | None = None  # the highest CUDA the driver supports
    cuda_evidence: Evidence | None = None
    product: str | None = None
    product_evidence: Evidence | None = None
    assumed_node: bool = False  # node name inferred: the only node in the artifacts

    def gpu_by_pci(self, pci: str | None) -> GpuDevice | None:
        key = short_pci(pci)
        return next((g for g in self.gpus if key and g.short_pci == key), None)

    @property
    def visible(self) -> GpuCount | None:
        """How many GPUs the driver showed (nvidia-smi / NVML), lost ones included."""
        return max((c for c in self.counts if c.source.startswith("nvidia-smi") or c.source == "nvml"),
                   key=lambda c: c.value or 0, default=None)


@dataclass
class GpuInventory:
    nodes: list[NodeGpus]
    _index: tuple = field(default=(-1, {}), init=False, repr=False, compare=False)  # (len(nodes) it was built at, node -> first)

    def for_node(self, name: str | None) -> NodeGpus | None:
        """The first entry of the node (checks ask once per node: an index, not a scan of every node)."""
        size, index = self._index
        if size != len(self.nodes):
            index = {}
            for n in self.nodes:
                try:
                    index.setdefault(n.node, n)
                except TypeError:  # an unhashable name: never the case for a node name
                    return next((x for x in self.nodes if x.node == name), None)
            self._index = (len(self.nodes), index)
        try:
            return index.get(name)
        except TypeError:
            return next((n for n in self.nodes if n.node == name), None)

    def all_gpus(self) -> list[tuple[NodeGpus, GpuDevice]]:
        return [(n, g) for n in self.nodes for g in n.gpus]


def only_node(facts: Facts) -> str | None:
    """The node name when the artifacts name exactly one node (a node probe, a one-node paste)."""
    try:
        names = set(facts.get(Cluster).node_names())
    except NotApplicable:
        names = set()
    names.update(r.node for r in facts.all(NvidiaSmiReport) if r.node)
    return names.pop() if len(names) == 1 else None


def _merge_gpu(a: GpuDevice, b: GpuDevice) -> GpuDevice:
    """Fill a's unknown fields from b: a table and a -q -x of the same GPU complete each other."""
    changes = {}
    for f in fields(a):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if va in (None, (), "") and vb not in (None, (), ""):
            changes[f.name] = vb
    changes["evidence"] = {**b.evidence, **a.evidence}
    return replace(a, **changes)


def _same_gpu(a: GpuDevice, b: GpuDevice) -> bool:
    if a.uuid and b.uuid:
        return a.uuid == b.uuid
    if a.pci_bus_id and b.pci_bus_id:
        return a.short_pci == b.short_pci
    return a.index is not None and a.index == b.index


def _add_gpu(ng: NodeGpus, g: GpuDevice) -> None:
    i = next((i for i, known in enumerate(ng.gpus) if _same_gpu(known, g)), None)
    if i is None:
        ng.gpus.append(g)
    else:
        ng.gpus[i] = _merge_gpu(ng.gpus[i], g)


def _label_value(node: Node, groups) -> tuple[str | None, Evidence | None]:
    for keys in groups:
        if all(k in node.labels for k in keys):
            value = ".".join(str(node.labels[k]) for k in keys)
            return value, node.evidence.get(f"label:{keys[0]}")
    return None, None


@combiner(GpuInventory)
def build_inventory(facts: Facts) -> GpuInventory:
    nodes: dict[str | None, NodeGpus] = {}
    assumed = only_node(facts)
    for r in facts.all(NvidiaSmiReport):
        name = r.node or assumed
        ng = nodes.setdefault(name, NodeGpus(name, assumed_node=r.node is None and assumed is not None))
        ng.reports.append(r)
        if r.truncated:
            facts.gaps.append(Gap("nvidia-smi", f"{r.source} output is truncated; GPUs after the cut were not seen", r.artifact))
        facts.gaps.extend(Gap(r.source, note, r.artifact) for note in r.notes)
        for g in r.gpus:
            _add_gpu(ng, replace(g, node=name))
        ng.errors.extend(r.errors)
        if r.driver_version and not ng.driver_version:
            ng.driver_version, ng.driver_evidence = r.driver_version, r.evidence
        if r.cuda_version and not ng.cuda_version:
            ng.cuda_version, ng.cuda_evidence = r.cuda_version, r.evidence
        ids = {g.pci_bus_id or g.index for g in r.gpus} | {e.pci_bus_id or e.gpu_index for e in r.errors if e.pci_bus_id or e.gpu_index is not None}
        seen = max(len(ids), r.attached_gpus or 0)
        if (r.gpus or r.errors) and not any(c.source == r.source for c in ng.counts):
            ng.counts.append(GpuCount(r.source, seen, r.evidence or Evidence(r.artifact, r.line, r.source)))
    try:
        metric_devices = facts.get(GpuMetrics).devices()
    except NotApplicable:
        metric_devices = []
    for g in metric_devices:
        name = g.node or assumed
        ng = nodes.setdefault(name, NodeGpus(name, assumed_node=g.node is None and assumed is not None))
        _add_gpu(ng, replace(g, node=name))
        if g.driver_version and not ng.driver_version:
            ng.driver_version, ng.driver_evidence = g.driver_version, g.ev("gpu")
    try:
        cluster_nodes = facts.get(Cluster).nodes
    except NotApplicable:
        cluster_nodes = {}
    for name, node in cluster_nodes.items():
        claims = _node_claims(node)
        driver, driver_ev = _label_value(node, _DRIVER_LABELS)
        if not claims and not driver:
            continue
        ng = nodes.setdefault(name, NodeGpus(name))
        ng.counts.extend(claims)
        if driver and not ng.driver_version:
            ng.driver_version, ng.driver_evidence = driver, driver_ev
        cuda, cuda_ev = _label_value(node, _CUDA_LABELS)
        if cuda and not ng.cuda_version:
            ng.cuda_version, ng.cuda_evidence = cuda, cuda_ev
        if PRODUCT_LABEL in node.labels:
            ng.product, ng.product_evidence = node.labels[PRODUCT_LABEL], node.evidence.get(f"label:{PRODUCT_LABEL}")
    for ng in nodes.values():
        if not ng.product and ng.gpus and ng.gpus[0].name:
            ng.product, ng.product_evidence = ng.gpus[0].name, ng.gpus[0].ev("name")
    if not nodes:
        raise NotApplicable("no nvidia-smi / NVML output and no GPU labels or capacity on any node")
    return GpuInventory(sorted(nodes.values(), key=lambda n: n.node or ""))


def _node_claims(node: Node) -> list[GpuCount]:
    out = []
    if COUNT_LABEL in node.labels:
        out.append(GpuCount(f"label {COUNT_LABEL}", to_int(node.labels[COUNT_LABEL]), _node_ev(node, f"label:{COUNT_LABEL}")))
    if str(node.labels.get(PCI_PRESENT_LABEL, "")).lower() == "true":
        out.append(GpuCount(f"label {PCI_PRESENT_LABEL}", None, _node_ev(node, f"label:{PCI_PRESENT_LABEL}")))
    for kind, values in (("capacity", node.capacity), ("allocatable", node.allocatable)):
        if GPU_RESOURCE in values:
            out.append(GpuCount(f"{kind} {GPU_RESOURCE}", to_int(values[GPU_RESOURCE]), _node_ev(node, f"{kind}:{GPU_RESOURCE}")))
    return out


def _node_ev(node: Node, key: str) -> Evidence:
    return node.evidence.get(key) or Evidence(node.artifact or "", None, f"node {node.name} {key}")


# ------------------------------------------------------------------------------------------- kernel

# Verified on six variants (dmesg, dmesg -T, syslog, journald, with/without .fn, <unknown> pid).
XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\): (?P<xid>\d+)"
    r"(?:, pid=(?P<pid>'?[^,]*?'?))?(?:, name=(?P<name>[^,]*))?, (?P<msg>.*)$"
)
_PCI_IN = re.compile(r"(?:PCI:|GPU |GPU at PCI:)(?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)")
_FALLEN = re.compile(r"fallen off the bus", re.I)
_GSP_TIMEOUT = re.compile(r"_kgspLogRpcTimeout|Timeout (?:after \d+s )?(?:of )?waiting for RPC (?:response )?from (?:GPU\d+ )?GSP|_kgspIsHeartbeatTimedOut|GSP RPC .*timeout", re.I)
_API_MISMATCH = re.compile(r"NVRM: API mismatch: the client has the version (?P<client>[\w.-]+), but")
_MODULE_VERSION = re.compile(r"this kernel module has the version (?P<kernel>[\w.-]+?)\.?\s+Please")
_NOUVEAU = re.compile(r"^nouveau\b|\[drm\] Initialized nouveau|\bnouveau \d{4}:")
_GPU_LOST = re.compile(r"GPU is lost|GPU has been lost", re.I)
_GPU_UUID = re.compile(r"NVRM: GPU at PCI:(?P<pci>[0-9a-fA-F:.]+): (?P<uuid>GPU-[0-9a-f-]+)")

BURST_GAP = timedelta(seconds=60)  # Xids on one GPU closer than this belong to one incident
BURST_LINES = 200  # without timestamps: lines this close in one log


@dataclass(frozen=True, slots=True)
class XidBurst:
    """Xids on one GPU close together: the first explains the rest (knowledge: follow_on_of)."""

    node: str | None
    pci: str | None
    events: tuple[XidEvent, ...]
    follow_ons: dict = field(default_factory=dict, hash=False, compare=False)  # event index -> root code

    @property
    def first(self) -> XidEvent:
        return self.events[0]

    def primaries(self) -> list[XidEvent]:
        """Events not attributed to an earlier Xid of the burst."""
        return [e for i, e in enumerate(self.events) if i not in self.follow_ons]

    def codes(self) -> list[int]:
        return sorted({e.code for e in self.events})


@dataclass
class KernelEvents:
    xids: list[XidEvent]
    bursts: list[XidBurst]
    events: list[KernelEvent]
    uuids: dict[str, str] = field(default_factory=dict)  # kernel pci -> GPU UUID (NVRM: GPU at PCI:...)
    logs: list[str] = field(default_factory=list)  # kernel artifacts read

    def of_kind(self, kind: str) -> list[KernelEvent]:
        return [e for e in self.events if e.kind == kind]

    def bursts_with(self, *codes: int) -> list[XidBurst]:
        return [b for b in self.bursts if any(e.code in codes for e in b.events)]


def _kernel_logs(facts: Facts) -> list[ContainerLog]:
    return [log for log in facts.all(ContainerLog) if log.kind in ("kernel", "journal")]


@combiner(KernelEvents)
def build_kernel_events(facts: Facts) -> KernelEvents:
    logs = _kernel_logs(facts)
    assumed = only_node(facts)
    xids: list[XidEvent] = []
    events: list[KernelEvent] = []
    uuids: dict[str, str] = {}
    for log in logs:
        node = log.node or assumed
        _scan(log, node, xids, events, uuids)
    try:
        xids.extend(facts.get(GpuMetrics).xid_events())
    except NotApplicable:
        pass
    if not logs and not xids:
        raise NotApplicable("no kernel log (dmesg / journalctl -k) and no DCGM Xid metric in the artifacts")
    return KernelEvents(xids, _bursts(xids), events, uuids, [log.artifact for log in logs])


def _scan(log: ContainerLog, node, xids: list, events: list, uuids: dict) -> None:
    lines = log.lines
    for n, ln in enumerate(lines):
        msg = ln.message
        if "NVRM" not in msg and "nouveau" not in msg:
            continue
        m = XID.search(msg)
        if m:
            xids.append(XidEvent(
                code=int(m.group("xid")), pci=short_pci(m.group("pci")), message=m.group("msg").strip(), evidence=ln.evidence(),
                node=node, pid=(m.group("pid") or "").strip("'") or None, process=(m.group("name") or "").strip() or None,
                time=ln.time, elapsed=ln.elapsed, order=n, artifact=log.artifact,
            ))
            continue
        u = _GPU_UUID.search(msg)
        if u:
            uuids[short_pci(u.group("pci"))] = u.group("uuid")
        kind = _kind(msg)
        if kind is None:
            continue
        pci = _PCI_IN.search(msg)
        detail = {}
        if kind == "fallen-off-bus" and not pci:
            # Multi-line form: "NVRM: The NVIDIA GPU 0000:b3:00.0 / (PCI ID: ...) installed ... / fallen off the bus"
            pci = next((p for back in lines[max(0, n - 3):n][::-1] if (p := _PCI_IN.search(back.message))), None)
        if kind == "api-mismatch":
            a = _API_MISMATCH.search(msg)
            tail = " ".join(x.message for x in lines[n:n + 2])
            k = _MODULE_VERSION.search(tail)
            detail = {"client": a.group("client"), "kernel": k.group("kernel") if k else None}
        events.append(KernelEvent(kind, msg.strip(), ln.evidence(), node, short_pci(pci.group("pci")) if pci else None, ln.time, detail))


def _kind(msg: str) -> str | None:
    if _FALLEN.search(msg):
        return "fallen-off-bus"
    if _GSP_TIMEOUT.search(msg):
        return "gsp-timeout"
    if _API_MISMATCH.search(msg):
        return "api-mismatch"
    if _GPU_LOST.search(msg):
        return "gpu-lost"
    if _NOUVEAU.search(msg):
        return "nouveau"
    return None


def _bursts(xids: list[XidEvent]) -> list[XidBurst]:
    """Group per (node, GPU) by closeness in time (or in lines), then attribute follow-ons."""
    groups: dict[tuple, list[XidEvent]] = {}
    for e in xids:
        groups.setdefault((e.node, e.pci), []).append(e)
    out = []
    for (node, pci), evs in groups.items():
        evs.sort(key=_order)
        current: list[XidEvent] = []
        for e in evs:
            if current and not _close(current[-1], e):
                out.append(_burst(node, pci, current))
                current = []
            current.append(e)
        if current:
            out.append(_burst(node, pci, current))
    return sorted(out, key=lambda b: (b.node or "", b.pci or "", _order(b.first)))


def _order(e: XidEvent) -> tuple:
    """Wall time first (naive and aware stamps both become epoch seconds), then uptime, then log position."""
    return (e.time is None, e.time.timestamp() if e.time else 0.0, e.artifact, e.elapsed or 0.0, e.order)


def _close(a: XidEvent, b: XidEvent) -> bool:
    if a.time and b.time:
        try:
            return abs(b.time - a.time) <= BURST_GAP
        except TypeError:  # naive vs aware stamps from different sources
            return False
    if a.elapsed is not None and b.elapsed is not None and a.artifact == b.artifact:
        return abs(b.elapsed - a.elapsed) <= BURST_GAP.total_seconds()
    return a.artifact == b.artifact and abs(b.order - a.order) <= BURST_LINES


def _burst(node, pci, events: list[XidEvent]) -> XidBurst:
    follow: dict[int, int] = {}
    seen: list[int] = []
    for i, e in enumerate(events):
        row = xid_table.xid(e.code)
        root = next((c for c in seen if row and c in row.follow_on_of), None)
        if root is not None:
            follow[i] = root
        elif e.code not in seen:
            seen.append(e.code)
    return XidBurst(node, pci, tuple(events), follow)
