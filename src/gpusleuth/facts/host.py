"""``HostFacts``: per node, what its host says (kernel, loaded modules, the NVIDIA module on disk, OS, boot
parameters, Secure Boot, the loaded driver and MOFED versions, marker files), joined with what Kubernetes
says of the node (kernelVersion, osImage) and the driver version nvidia-smi reports.

Objects that name no node belong to the only node the artifacts name, when there is exactly one (a one-node
paste); otherwise they stay on node None. ``conditions()`` are the host states a failure class can be
detected by without a log line (knowledge/failure_classes.toml rows list them under `host`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.gpus import GpuInventory, only_node
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.host import (
    DeviceCgroupRules,
    DriverVersion,
    KernelCmdline,
    KernelRelease,
    ModuleInfo,
    ModuleList,
    MofedVersion,
    OsRelease,
    ReadyMarker,
    SecureBoot,
    Uptime,
)
from gpusleuth.model.runtime import DriverLibraries, HostPath
from gpusleuth.parsers.host_facts import SecurityModule

HOST_TYPES = (KernelRelease, ModuleList, ModuleInfo, OsRelease, Uptime, KernelCmdline, SecureBoot, DriverVersion, MofedVersion, ReadyMarker,
              SecurityModule)

# Host states a failure-class row can name under `host = [...]`: id -> the named values its findings can use
# as placeholders ({module}, {built}, {kernel}).
CONDITIONS: dict[str, tuple[str, ...]] = {
    "host.nouveau-loaded": (),
    "host.module-vermagic-mismatch": ("module", "built", "kernel"),
    "host.secure-boot-unsigned-module": ("module",),
}


@dataclass(frozen=True, slots=True)
class HostCondition:
    """A host state that shows a failure by itself, with the lines that show it."""

    id: str  # a CONDITIONS key
    node: str | None
    text: str  # one sentence, quoted in findings like a matched log line
    evidence: tuple[Evidence, ...]
    groups: dict = field(default_factory=dict, hash=False, compare=False)


@dataclass
class NodeHost:
    node: str | None
    assumed_node: bool = False  # node inferred: the only node the artifacts name
    kernel: KernelRelease | None = None
    node_kernel: str | None = None  # the Node object's status.nodeInfo.kernelVersion
    node_kernel_evidence: Evidence | None = None
    modules: ModuleList | None = None
    modinfo: dict[str, ModuleInfo] = field(default_factory=dict)
    os: OsRelease | None = None
    uptime: Uptime | None = None
    cmdline: KernelCmdline | None = None
    secure_boot: SecureBoot | None = None
    driver: DriverVersion | None = None  # the NVIDIA module the kernel runs
    smi_driver: str | None = None  # the driver version nvidia-smi / NVML reported on this node
    smi_evidence: Evidence | None = None
    mofed: MofedVersion | None = None
    paths: dict[str, HostPath] = field(default_factory=dict)
    markers: dict[str, ReadyMarker] = field(default_factory=dict)  # readiness markers read with their content
    security: dict[str, SecurityModule] = field(default_factory=dict)  # selinux / apparmor: its mode

    def running_kernel(self) -> tuple[str, Evidence | None] | None:
        """The kernel the node runs: `uname` first, else the Node object's kernelVersion."""
        if self.kernel is not None:
            return self.kernel.release, self.kernel.evidence
        if self.node_kernel:
            return self.node_kernel, self.node_kernel_evidence
        return None

    def loaded(self, module: str) -> bool | None:
        """Whether `module` is loaded; None when no module listing here can tell."""
        return self.modules.loaded(module) if self.modules is not None else None

    def module_evidence(self, module: str) -> Evidence | None:
        """The lsmod row of a loaded module, or the listing that shows it is absent."""
        if self.modules is None:
            return None
        row = self.modules.get(module)
        return row.evidence if row is not None else self.modules.evidence

    def path(self, path: str) -> HostPath | None:
        return self.paths.get(path)

    def conditions(self) -> list[HostCondition]:
        return [c for c in (self._nouveau(), *self._vermagic(), self._unsigned()) if c is not None]

    def _nouveau(self) -> HostCondition | None:
        if self.loaded("nouveau") is not True or self.loaded("nvidia") is True:
            return None
        evidence = [self.module_evidence("nouveau")]
        said = "nouveau is loaded"
        if self.loaded("nvidia") is False:
            said += " and nvidia is not"
            evidence.append(self.modules.evidence)
        if self.cmdline is not None:
            blocks = self.cmdline.blacklisted("nouveau")
            said += (f"; /proc/cmdline blacklists it ({', '.join(blocks)}) but it loaded anyway (initramfs or a built-in driver)"
                     if blocks else "; /proc/cmdline does not blacklist it")
            evidence.append(self.cmdline.evidence)
        return HostCondition("host.nouveau-loaded", self.node, said + f" ({self.modules.source})", tuple(e for e in evidence if e))

    def _vermagic(self) -> list[HostCondition]:
        running = self.running_kernel()
        if running is None:
            return []
        kernel, kernel_ev = running
        out = []
        for mi in self.modinfo.values():
            built = mi.built_for
            if not mi.found or built is None or built == kernel or self.loaded(mi.name) is True:
                continue
            if mi.filename and "/weak-updates/" in mi.filename:
                continue  # RHEL kABI: a module of an older kernel of the same ABI, linked for the new one, loads
            where = f" ({mi.filename})" if mi.filename else ""
            text = f"{mi.name}.ko was built for kernel {built} (vermagic), but the node runs {kernel}{where}"
            evidence = (mi.ev("vermagic"), kernel_ev, mi.ev("filename"))
            out.append(HostCondition("host.module-vermagic-mismatch", self.node, text, tuple(e for e in dict.fromkeys(evidence) if e),
                                     {"module": mi.name, "built": built, "kernel": kernel}))
        return out

    def _unsigned(self) -> HostCondition | None:
        mi = self.modinfo.get("nvidia")
        sb = self.secure_boot
        if sb is None or not sb.enabled or mi is None or not mi.found or mi.signed is not False or self.loaded("nvidia") is True:
            return None
        where = f": {mi.filename}" if mi.filename else ""
        state = " and it is not loaded" if self.loaded("nvidia") is False else ""
        text = f"Secure Boot is enabled and nvidia.ko carries no signature{state} (modinfo shows no signer{where})"
        evidence = (sb.evidence, mi.ev("filename") or mi.ev("vermagic"), self.module_evidence("nvidia") if self.loaded("nvidia") is False else None)
        return HostCondition("host.secure-boot-unsigned-module", self.node, text, tuple(e for e in evidence if e), {"module": mi.name})


@dataclass
class HostFacts:
    nodes: list[NodeHost]

    def for_node(self, name: str | None) -> NodeHost | None:
        return next((n for n in self.nodes if n.node == name), None)

    def conditions(self, *ids: str) -> list[HostCondition]:
        return [c for n in self.nodes for c in n.conditions() if not ids or c.id in ids]


def _better_modules(have: ModuleList | None, new: ModuleList) -> bool:
    """A complete listing beats a filtered one; otherwise the first one stays."""
    if have is None:
        return True
    complete = lambda m: m.pattern is None and not m.filtered  # noqa: E731
    return complete(new) and not complete(have)


def _better_modinfo(have: ModuleInfo | None, new: ModuleInfo) -> bool:
    if have is None:
        return True
    rank = lambda m: (m.found, m.filename is not None)  # noqa: E731 - a full output beats a grep of one field, found beats not found
    return rank(new) > rank(have)


@combiner(HostFacts)
def build_host_facts(facts: Facts) -> HostFacts:
    objs = [o for t in HOST_TYPES for o in facts.all(t)]
    if not objs:
        raise NotApplicable("no host facts (lsmod, modinfo, uname, /etc/os-release, mokutil, /proc/driver/nvidia/version) in the artifacts")
    assumed = only_node(facts)
    nodes: dict[str | None, NodeHost] = {}

    def host(name: str | None) -> NodeHost:
        node = name or assumed
        if node not in nodes:
            nodes[node] = NodeHost(node, assumed_node=name is None and assumed is not None)
        return nodes[node]

    for o in objs:
        h = host(o.node)
        if isinstance(o, ModuleList):
            if _better_modules(h.modules, o):
                h.modules = o
        elif isinstance(o, ModuleInfo):
            if _better_modinfo(h.modinfo.get(o.name), o):
                h.modinfo[o.name] = o
        elif isinstance(o, ReadyMarker):
            h.markers.setdefault(o.path, o)
        elif isinstance(o, SecurityModule):
            h.security.setdefault(o.name, o)
        else:
            attr = _ATTR[type(o)]
            if getattr(h, attr) is None:
                setattr(h, attr, o)
    for p in facts.all(HostPath):
        if (p.node or assumed) in nodes:
            nodes[p.node or assumed].paths.setdefault(p.path, p)
    try:
        cluster = facts.get(Cluster)
    except NotApplicable:
        cluster = None
    try:
        inventory = facts.get(GpuInventory)
    except NotApplicable:
        inventory = None
    for h in nodes.values():
        k8s = cluster.nodes.get(h.node) if cluster is not None and h.node else None
        if k8s is not None and k8s.kernel_version:
            h.node_kernel, h.node_kernel_evidence = k8s.kernel_version, k8s.evidence.get("kernel_version")
        ng = inventory.for_node(h.node) if inventory is not None else None
        if ng is not None and ng.driver_version:
            h.smi_driver, h.smi_evidence = ng.driver_version, ng.driver_evidence
    return HostFacts(sorted(nodes.values(), key=lambda n: n.node or ""))


_ATTR = {KernelRelease: "kernel", OsRelease: "os", Uptime: "uptime", KernelCmdline: "cmdline", SecureBoot: "secure_boot",
         DriverVersion: "driver", MofedVersion: "mofed"}


@dataclass(frozen=True)
class DeviceCgroups:
    """Every cgroup v1 devices.list in the artifacts: what each container (or unit) may open."""

    lists: tuple[DeviceCgroupRules, ...]


@combiner(DeviceCgroups)
def build_device_cgroups(facts: Facts) -> DeviceCgroups:
    return DeviceCgroups(tuple(facts.present(DeviceCgroupRules, "no device cgroup rules (cat /sys/fs/cgroup/devices/devices.list in the "
                                                                 "container) in the artifacts")))


@dataclass(frozen=True)
class LibraryListings:
    """Every directory listing in the artifacts that shows a driver library's files (libnvidia-ml, libcuda)."""

    listings: tuple[DriverLibraries, ...]


NO_LIBRARY_LISTING = "no listing of the driver libraries (ls -l of the library directory, libnvidia-ml.so.*) in the artifacts"


@combiner(LibraryListings)
def build_library_listings(facts: Facts) -> LibraryListings:
    return LibraryListings(tuple(facts.present(DriverLibraries, NO_LIBRARY_LISTING)))
