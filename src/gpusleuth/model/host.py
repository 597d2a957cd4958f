"""What a node's host says about itself: kernel, loaded modules, the NVIDIA module on disk, OS, boot state.

Each object carries the node it was read on (a bundle's probe records it; a paste usually does not: None)
and the line it came from. Facts/host.py joins them per node with what Kubernetes says of the node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from gpusleuth.model.evidence import Evidence


@dataclass(frozen=True, slots=True)
class KernelRelease:
    """The running kernel: `uname -r`, `uname -a` or /proc/version."""

    release: str  # 5.15.0-91-generic
    evidence: Evidence
    node: str | None = None
    source: str = "uname -r"  # uname -r | uname -a | /proc/version
    hostname: str | None = None  # uname -a's second field
    arch: str | None = None  # uname -a's machine field (x86_64, aarch64)


@dataclass(frozen=True, slots=True)
class LoadedModule:
    """One row of `lsmod` (or /proc/modules)."""

    name: str
    size: int | None
    used_by: tuple[str, ...]
    evidence: Evidence
    use_count: int | None = None
    state: str | None = None  # /proc/modules only: Live | Loading | Unloading


@dataclass(frozen=True, slots=True)
class ModuleList:
    """A listing of loaded modules. `pattern` is the `| grep` filter it was printed through, if any: a
    module the filter would have let through and that is not listed is not loaded."""

    modules: tuple[LoadedModule, ...]
    evidence: Evidence  # the command or header line: what a "not loaded" conclusion cites
    node: str | None = None
    source: str = "lsmod"  # lsmod | /proc/modules
    pattern: re.Pattern | None = field(default=None, compare=False)  # matches the names the filter lets through
    filtered: bool = False  # printed through a filter that could not be read back: absence proves nothing

    def get(self, name: str) -> LoadedModule | None:
        return next((m for m in self.modules if m.name == name), None)

    def covers(self, name: str) -> bool:
        """Whether this listing would show `name` if it were loaded."""
        if self.pattern is not None:
            return bool(self.pattern.search(name))
        return not self.filtered

    def loaded(self, name: str) -> bool | None:
        """True / False when the listing tells, None when it cannot (a grep that hides the name)."""
        if self.get(name) is not None:
            return True
        return False if self.covers(name) else None


@dataclass(frozen=True, slots=True)
class ModuleInfo:
    """`modinfo <module>`: the module file the running kernel would load. `found` is False for
    `modinfo: ERROR: Module nvidia not found.`; `evidence` maps a field (filename, version, vermagic,
    signer, sig_key, error) to its line."""

    name: str
    found: bool = True
    filename: str | None = None
    version: str | None = None
    vermagic: str | None = None
    signer: str | None = None
    sig_key: str | None = None
    srcversion: str | None = None
    depends: tuple[str, ...] = ()
    evidence: dict = field(default_factory=dict, hash=False, compare=False)
    node: str | None = None
    root: str | None = None  # `chroot /run/nvidia/driver modinfo nvidia`: the driver container's root

    @property
    def built_for(self) -> str | None:
        """The kernel release the module was built for: vermagic's first word."""
        return self.vermagic.split()[0] if self.vermagic else None

    @property
    def signed(self) -> bool | None:
        """Whether the file carries a signature; None when the output does not tell (a grep of one field)."""
        if self.signer or self.sig_key or "signature" in self.evidence:
            return True
        return False if {"filename", "vermagic"} <= set(self.evidence) else None

    def ev(self, key: str) -> Evidence | None:
        return self.evidence.get(key)


@dataclass(frozen=True, slots=True)
class OsRelease:
    """/etc/os-release (or /etc/lsb-release)."""

    id: str | None  # ubuntu, rhcos, rhel, debian, ...
    version_id: str | None
    pretty_name: str | None
    evidence: Evidence  # the ID line (else the first line)
    node: str | None = None
    id_like: tuple[str, ...] = ()
    fields: dict = field(default_factory=dict, hash=False, compare=False)  # KEY -> (value, Evidence)

    @property
    def tag(self) -> str | None:
        """The OS as the GPU Operator names driver images: ID + VERSION_ID (ubuntu22.04, rhcos4.14)."""
        return f"{self.id}{self.version_id or ''}" if self.id else None


@dataclass(frozen=True, slots=True)
class Uptime:
    """/proc/uptime: seconds since boot (and idle seconds of all CPUs)."""

    seconds: float
    evidence: Evidence
    node: str | None = None
    idle: float | None = None
    read_at: datetime | None = None  # when it was read (a probe's record: the API server's clock), so boot = read_at - seconds


@dataclass(frozen=True, slots=True)
class KernelCmdline:
    """/proc/cmdline: the kernel's boot parameters, in order."""

    args: tuple[str, ...]
    evidence: Evidence
    node: str | None = None

    def values(self, key: str) -> list[str]:
        return [a.partition("=")[2] for a in self.args if a.partition("=")[0] == key]

    def blacklisted(self, module: str) -> list[str]:
        """The parameters that keep `module` from loading: modprobe.blacklist=, rd.driver.blacklist=,
        module_blacklist= (comma-separated lists), and `<module>.modeset=0` for a DRM driver."""
        out = []
        for key in ("modprobe.blacklist", "rd.driver.blacklist", "module_blacklist"):
            out += [f"{key}={v}" for v in self.values(key) if module in v.split(",")]
        return out


@dataclass(frozen=True, slots=True)
class SecureBoot:
    """`mokutil --sb-state`. `enabled` is None when the firmware does not say (no EFI, no variable)."""

    enabled: bool | None
    evidence: Evidence
    node: str | None = None
    detail: str | None = None  # "SecureBoot validation is disabled in shim", "EFI variables are not supported"


@dataclass(frozen=True, slots=True)
class DeviceRule:
    """One line of a cgroup v1 devices.list: `c 195:* rwm` (type a/b/c, major:minor with * for any, access)."""

    kind: str
    major: str
    minor: str
    access: str
    evidence: Evidence


@dataclass(frozen=True, slots=True)
class DeviceCgroupRules:
    """A container's (or a unit's) cgroup v1 devices.list: the device nodes it may open (r, w) or create (m)."""

    rules: tuple[DeviceRule, ...]
    evidence: Evidence
    node: str | None = None
    partial: bool = False  # the paste elides lines (`...`): what is not listed may still be allowed

    def allows_all(self) -> bool:
        return any(r.kind == "a" and r.major == r.minor == "*" and {"r", "w"} <= set(r.access) for r in self.rules)


@dataclass(frozen=True, slots=True)
class DriverVersion:
    """The NVIDIA kernel module the kernel runs: /proc/driver/nvidia/version (NVRM and GCC lines) or
    /sys/module/nvidia/version."""

    version: str
    evidence: Evidence
    node: str | None = None
    gcc: str | None = None  # the compiler the module was built with
    gcc_evidence: Evidence | None = None
    open: bool | None = None  # the open kernel modules (NVIDIA UNIX Open Kernel Module)
    arch: str | None = None
    source: str = "/proc/driver/nvidia/version"


@dataclass(frozen=True, slots=True)
class MofedVersion:
    """The Mellanox/NVIDIA OFED the node runs: `ofed_info -s`, or /sys/module/mlx5_core/version (only
    MOFED's mlx5_core carries a version; the kernel's inbox driver has none)."""

    version: str  # 24.10-1.1.4.0
    evidence: Evidence
    node: str | None = None
    distribution: str | None = None  # MLNX_OFED_LINUX | OFED-internal (DOCA-OFED)
    source: str = "ofed_info -s"


@dataclass(frozen=True, slots=True)
class ReadyMarker:
    """A readiness marker file the GPU Operator writes, with what it records: the validator's driver-ready
    (IS_HOST_DRIVER=false, NVIDIA_DRIVER_ROOT=/run/nvidia/driver, ...), the driver container's
    .driver-ctr-ready (GPU_DIRECT_RDMA_ENABLED: true, ...). `fields` maps KEY -> (value, Evidence)."""

    path: str
    fields: dict = field(hash=False, compare=False)
    evidence: Evidence | None = None  # its first line
    node: str | None = None

    def value(self, key: str) -> str | None:
        found = self.fields.get(key)
        return found[0] if found else None
