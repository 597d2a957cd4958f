"""GPUs as nvidia-smi (table, -L, -q, -q -x) and NVML describe them, whatever form they came in.

Every field a form does not carry is None. ``GpuDevice.evidence`` maps a field name to the line that
showed it, so a check can cite the exact `<remapped_row_pending>Yes</remapped_row_pending>` line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from gpusleuth.model.evidence import Evidence


@dataclass(frozen=True, slots=True)
class GpuProcess:
    pid: int | None
    name: str | None = None
    type: str | None = None  # C (compute) | G (graphics) | C+G
    used_memory_mib: int | None = None
    gpu_instance_id: int | None = None  # MIG GI/CI the process runs in
    compute_instance_id: int | None = None


@dataclass(frozen=True, slots=True)
class MigDevice:
    gpu_index: int | None
    gpu_instance_id: int | None
    compute_instance_id: int | None
    index: int | None = None  # "MIG Dev" / Device N in `nvidia-smi -L`
    profile: str | None = None  # "1g.10gb"
    uuid: str | None = None
    memory_used_mib: int | None = None
    memory_total_mib: int | None = None
    sm_count: int | None = None
    evidence: Evidence | None = None


@dataclass(frozen=True, slots=True)
class EccCounts:
    """Corrected (single-bit, SBE) and uncorrected (double-bit, DBE) ECC error counts.

    Volatile counts reset at driver load; aggregate counts live for the board's lifetime. Newer drivers
    split them into SRAM and DRAM; these are the sums."""

    volatile_sbe: int | None = None
    volatile_dbe: int | None = None
    aggregate_sbe: int | None = None
    aggregate_dbe: int | None = None


@dataclass(frozen=True, slots=True)
class GpuDevice:
    index: int | None
    name: str | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None  # normalised: 00000000:18:00.0, upper-case hex
    driver_version: str | None = None
    cuda_version: str | None = None  # the highest CUDA the driver supports, "12.2"
    memory_total_mib: int | None = None
    memory_used_mib: int | None = None
    temperature_c: int | None = None
    temp_slowdown_c: int | None = None  # the GPU's own thresholds
    temp_shutdown_c: int | None = None
    temp_max_operating_c: int | None = None
    temp_tlimit_margin_c: int | None = None  # drivers that report T.Limit: degrees below the limit
    temp_tlimit_slowdown_c: int | None = None  # margin at which slowdown starts (negative)
    temp_tlimit_shutdown_c: int | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    performance_state: str | None = None  # P0..P12
    utilization_gpu_pct: int | None = None
    persistence_mode: bool | None = None
    ecc_enabled: bool | None = None
    ecc_pending: bool | None = None
    ecc: EccCounts = EccCounts()
    retired_pages_sbe: int | None = None
    retired_pages_dbe: int | None = None
    retired_pages_pending: bool | None = None
    remap_correctable: int | None = None
    remap_uncorrectable: int | None = None
    remap_pending: bool | None = None
    remap_failure: bool | None = None
    throttle_reasons: tuple[str, ...] | None = None  # active reason ids (knowledge: throttle_reasons.toml)
    throttle_mask: int | None = None  # the raw bitmask when the source gave one
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    mig_current: bool | None = None
    mig_pending: bool | None = None
    mig_devices: tuple[MigDevice, ...] = ()
    processes: tuple[GpuProcess, ...] | None = None  # None: the form does not list processes
    fabric_state: str | None = None  # NVSwitch systems: Not Started | In Progress | Completed
    fabric_status: str | None = None  # Success or the NVML error the fabric manager reported
    field_errors: tuple[tuple[str, str], ...] = ()  # (field, what the tool said): ("temperature", "ERR!")
    node: str | None = None
    source: str | None = None  # nvidia-smi | nvidia-smi -L | nvidia-smi -q | nvidia-smi -q -x | nvml
    artifact: str | None = None
    line: int | None = None
    evidence: dict = field(default_factory=dict, hash=False, compare=False)  # field -> Evidence

    def ev(self, *fields: str) -> Evidence:
        """The evidence for the first of these fields that has one, else the GPU's own line."""
        for f in fields:
            if f in self.evidence:
                return self.evidence[f]
        return self.evidence.get("gpu") or Evidence(self.artifact or "", self.line, self.label)

    @property
    def label(self) -> str:
        """How a person names this GPU: "GPU 3 (00000000:9A:00.0)"."""
        idx = f"GPU {self.index}" if self.index is not None else "GPU"
        where = self.pci_bus_id or self.uuid
        return f"{idx} ({where})" if where else idx

    @property
    def short_pci(self) -> str | None:
        """The bus id as the kernel log writes it in Xid lines: 0000:9a:00 (domain 4 digits, lower case)."""
        return short_pci(self.pci_bus_id)


@dataclass(frozen=True, slots=True)
class GpuError:
    """A GPU (or the whole NVML stack) that could not be read, as the tool said it."""

    kind: str  # gpu-lost | unknown-error | no-devices | driver-not-loaded | library-not-found |
    # version-mismatch | insufficient-permissions | not-supported | reset-required | inforom-corrupted | other
    message: str
    pci_bus_id: str | None = None
    gpu_index: int | None = None
    function: str | None = None  # the NVML call or nvidia-smi field that failed
    evidence: Evidence | None = None
    run_in: str | None = None  # the container command (`docker run ...`, `kubectl exec ...`) the tool ran under


# Kinds of GpuError that say the caller cannot reach the driver at all (nothing about one GPU).
UNREACHABLE = frozenset({"driver-not-loaded", "library-not-found", "no-devices"})


@dataclass(frozen=True, slots=True)
class NvidiaSmiReport:
    """One nvidia-smi (or NVML probe) output: the driver it talked to and the GPUs it saw."""

    source: str
    artifact: str
    driver_version: str | None = None
    cuda_version: str | None = None
    node: str | None = None
    attached_gpus: int | None = None  # what the tool said it found, even when some could not be read
    gpus: tuple[GpuDevice, ...] = ()
    errors: tuple[GpuError, ...] = ()
    truncated: bool = False
    timestamp: str | None = None
    line: int | None = None
    evidence: Evidence | None = None  # the line that names the driver version (or the output's first line)
    notes: tuple[str, ...] = ()  # what the producer could not read (the node probe's kernel-log attempts)


@dataclass(frozen=True, slots=True)
class XidEvent:
    code: int
    pci: str | None  # kernel form, 0000:9a:00
    message: str
    evidence: Evidence
    node: str | None = None
    pid: str | None = None
    process: str | None = None
    time: datetime | None = None
    elapsed: float | None = None  # seconds since boot (dmesg without -T)
    source: str = "kernel"  # kernel | dcgm-exporter
    order: int = 0  # position in the log, for ordering when there is no time
    artifact: str = ""


@dataclass(frozen=True, slots=True)
class KernelEvent:
    kind: str  # fallen-off-bus | gpu-lost | gsp-timeout | api-mismatch | nouveau
    message: str
    evidence: Evidence
    node: str | None = None
    pci: str | None = None
    time: datetime | None = None
    detail: dict = field(default_factory=dict, hash=False, compare=False)


# What nvidia-smi and NVML say when they cannot read something, by kind (str(NVMLError) gives the same
# strings as nvidia-smi prints after "Failed to initialize NVML:" or "Unable to determine the device handle").
_ERROR_KINDS = (
    ("gpu is lost", "gpu-lost"),
    ("unknown error", "unknown-error"),
    ("err!", "unknown-error"),
    ("version mismatch", "version-mismatch"),
    ("insufficient permissions", "insufficient-permissions"),
    ("no permission", "insufficient-permissions"),
    ("not supported", "not-supported"),
    ("driver not loaded", "driver-not-loaded"),
    ("couldn't communicate with the nvidia driver", "driver-not-loaded"),
    ("requires reset", "reset-required"),
    ("requires restart", "reset-required"),
    ("library not found", "library-not-found"),
    ("couldn't find libnvidia-ml", "library-not-found"),
    ("no devices were found", "no-devices"),
    ("blocked by the operating system", "blocked-by-os"),
    ("corrupted inforom", "corrupted-inforom"),
    ("timeout", "timeout"),
)


def error_kind(message: str) -> str:
    """The kind of an NVML / nvidia-smi error message ("GPU is lost" -> gpu-lost); "other" if unknown."""
    low = message.lower()
    return next((kind for needle, kind in _ERROR_KINDS if needle in low), "other")


def normalise_pci(bus_id: str | None) -> str | None:
    """00000000:18:00.0 / 0000:18:00.0 / 18:00.0 -> 00000000:18:00.0 (the nvidia-smi form, upper-case)."""
    if not bus_id:
        return None
    bus_id = bus_id.strip().rstrip(".:")
    parts = bus_id.split(":")
    if len(parts) == 2:
        parts.insert(0, "0")
    if len(parts) != 3:
        return bus_id.upper()
    domain, bus, devfn = parts
    if "." not in devfn:
        devfn += ".0"
    return f"{int(domain, 16):08X}:{bus.upper().zfill(2)}:{devfn.upper()}"


def short_pci(bus_id: str | None) -> str | None:
    """The kernel's `NVRM: Xid (PCI:0000:9a:00)` form: 4-digit domain, no function, lower case."""
    norm = normalise_pci(bus_id)
    if not norm or norm.count(":") != 2:
        return None
    domain, bus, devfn = norm.split(":")
    return f"{int(domain, 16):04x}:{bus.lower()}:{devfn.split('.')[0].lower()}"


@dataclass(frozen=True, slots=True)
class GpuMetricSample:
    """One GPU (or MIG instance) in one dcgm-exporter scrape: every DCGM field value with its line."""

    artifact: str
    gpu: str | None  # the exporter's gpu="0" label
    uuid: str | None = None
    pci_bus_id: str | None = None
    model: str | None = None
    node: str | None = None  # the Hostname label
    driver_version: str | None = None
    mig_profile: str | None = None  # GPU_I_PROFILE
    gpu_instance_id: str | None = None
    pod: str | None = None  # the pod the exporter maps to this GPU
    namespace: str | None = None
    container: str | None = None
    values: dict = field(default_factory=dict, hash=False, compare=False)  # DCGM field name -> value
    evidence: dict = field(default_factory=dict, hash=False, compare=False)  # DCGM field name -> Evidence

    @property
    def label(self) -> str:
        where = f"GPU {self.gpu}" if self.gpu is not None else "GPU"
        if self.mig_profile:
            where += f" MIG {self.mig_profile} (GI {self.gpu_instance_id})"
        return where + (f" on {self.node}" if self.node else "")
