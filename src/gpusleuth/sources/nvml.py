"""Read every GPU through NVML. The library is a parameter: the real ``pynvml`` (nvidia-ml-py) on a GPU node,
or any object with the same function names, constants and ``NVMLError`` classes (the tests' fake).

Nothing here decides whether a value is bad; it only turns NVML's answers, and its errors, into
``GpuDevice`` and ``GpuError`` model objects. A GPU that is lost stops being read (every further call
would fail the same way); a field NVML does not support on this GPU is recorded, so the report can say
what it could not see, except where "Not Supported" is the normal answer for the GPU generation (page
retirement on GPUs that remap rows, MIG and fabric on GPUs without them).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, Callable

from gpusleuth.knowledge import clock_reasons
from gpusleuth.model.gpu import EccCounts, GpuDevice, GpuError, GpuProcess, MigDevice, error_kind, normalise_pci

MIB = 1024 * 1024
_FABRIC_STATES = {1: "Not Started", 2: "In Progress", 3: "Completed"}  # 0: not supported (no NVSwitch)


@dataclass
class NodeReading:
    driver_version: str | None = None
    cuda_version: str | None = None
    attached_gpus: int | None = None
    gpus: list[GpuDevice] = field(default_factory=list)
    errors: list[GpuError] = field(default_factory=list)


class _Lost(Exception):
    """The GPU stopped answering mid-read; the error is already recorded."""


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _cuda(version: int) -> str:
    """NVML's 12020 -> "12.2"."""
    return f"{version // 1000}.{(version % 1000) // 10}"


def read(nvml: Any) -> NodeReading:
    """Init, read the system and every GPU, shut down. nvmlInit's own errors (library not found, driver not
    loaded) propagate: without them there is nothing to read and the caller says so in one line."""
    nvml.nvmlInit()
    try:
        return _read(nvml)
    finally:
        try:
            nvml.nvmlShutdown()
        except nvml.NVMLError:
            pass


def _read(nvml: Any) -> NodeReading:
    out = NodeReading()
    try:
        out.driver_version = _text(nvml.nvmlSystemGetDriverVersion())
    except nvml.NVMLError as exc:
        out.errors.append(GpuError(error_kind(str(exc)), str(exc), function="nvmlSystemGetDriverVersion"))
    try:
        out.cuda_version = _cuda(nvml.nvmlSystemGetCudaDriverVersion())
    except nvml.NVMLError:
        pass
    try:
        out.attached_gpus = nvml.nvmlDeviceGetCount()
    except nvml.NVMLError as exc:
        out.errors.append(GpuError(error_kind(str(exc)), str(exc), function="nvmlDeviceGetCount"))
        return out
    for i in range(out.attached_gpus):
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(i)
        except nvml.NVMLError as exc:
            out.errors.append(GpuError(error_kind(str(exc)), str(exc), gpu_index=i, function="nvmlDeviceGetHandleByIndex"))
            continue
        reader = _GpuReader(nvml, handle, i, out.errors)
        try:
            out.gpus.append(reader.device(out.driver_version, out.cuda_version))
        except _Lost:
            if reader.values:
                out.gpus.append(reader.partial(out.driver_version, out.cuda_version))
    return out


class _GpuReader:
    """One GPU: each NVML call guarded, its error kept against the field it was for."""

    def __init__(self, nvml: Any, handle: Any, index: int, errors: list[GpuError]):
        self.nvml, self.handle, self.index, self.errors = nvml, handle, index, errors
        self.values: dict[str, Any] = {}
        self.field_errors: list[tuple[str, str]] = []
        self.pci: str | None = None

    def get(self, name: str, fn: Callable, *args, quiet_unsupported: bool = False):
        """Call fn(handle, *args); NVML errors become field errors (or a lost GPU), never exceptions."""
        nvml = self.nvml
        try:
            return fn(self.handle, *args)
        except nvml.NVMLError as exc:
            kind = error_kind(str(exc))
            if kind in ("gpu-lost", "reset-required"):
                self.errors.append(GpuError(kind, str(exc), pci_bus_id=self.pci, gpu_index=self.index, function=fn.__name__))
                raise _Lost from None
            if not (quiet_unsupported and kind == "not-supported"):
                self.field_errors.append((name, str(exc)))
            return None

    def device(self, driver: str | None, cuda: str | None) -> GpuDevice:
        n, v = self.nvml, self.values
        pci = self.get("pci", n.nvmlDeviceGetPciInfo)
        self.pci = v["pci_bus_id"] = normalise_pci(_text(pci.busId)) if pci is not None else None
        for key, fn, conv in (("name", n.nvmlDeviceGetName, _text), ("uuid", n.nvmlDeviceGetUUID, _text)):
            got = self.get(key, fn)
            v[key] = conv(got) if got is not None else None
        pm = self.get("persistence_mode", n.nvmlDeviceGetPersistenceMode)
        v["persistence_mode"] = None if pm is None else pm == n.NVML_FEATURE_ENABLED
        mem = self.get("memory", n.nvmlDeviceGetMemoryInfo)
        if mem is not None:
            v["memory_total_mib"], v["memory_used_mib"] = mem.total // MIB, mem.used // MIB
        v["temperature_c"] = self.get("temperature", n.nvmlDeviceGetTemperature, n.NVML_TEMPERATURE_GPU)
        for key, which in (("temp_slowdown_c", n.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN), ("temp_shutdown_c", n.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN),
                           ("temp_max_operating_c", n.NVML_TEMPERATURE_THRESHOLD_GPU_MAX)):
            v[key] = self.get(key, n.nvmlDeviceGetTemperatureThreshold, which, quiet_unsupported=True)
        mw = self.get("power", n.nvmlDeviceGetPowerUsage)
        v["power_draw_w"] = mw / 1000 if mw is not None else None
        limit = self.get("power_limit", n.nvmlDeviceGetEnforcedPowerLimit)
        v["power_limit_w"] = limit / 1000 if limit is not None else None
        pstate = self.get("performance_state", n.nvmlDeviceGetPerformanceState, quiet_unsupported=True)
        v["performance_state"] = f"P{pstate}" if pstate is not None else None
        util = self.get("utilization", n.nvmlDeviceGetUtilizationRates)
        v["utilization_gpu_pct"] = util.gpu if util is not None else None
        self._ecc()
        self._memory_health()
        self._clocks()
        for key, fn in (("pcie_gen_current", n.nvmlDeviceGetCurrPcieLinkGeneration), ("pcie_gen_max", n.nvmlDeviceGetMaxPcieLinkGeneration),
                        ("pcie_width_current", n.nvmlDeviceGetCurrPcieLinkWidth), ("pcie_width_max", n.nvmlDeviceGetMaxPcieLinkWidth)):
            v[key] = self.get(key.rsplit("_", 1)[0], fn, quiet_unsupported=True)
        self._mig()
        self._fabric()
        self._processes()
        return self.partial(driver, cuda)

    def partial(self, driver: str | None, cuda: str | None) -> GpuDevice:
        return GpuDevice(index=self.index, driver_version=driver, cuda_version=cuda, field_errors=tuple(self.field_errors),
                         source="nvml", **self.values)

    def _ecc(self) -> None:
        n, v = self.nvml, self.values
        mode = self.get("ecc", n.nvmlDeviceGetEccMode)
        if mode is None:
            return
        v["ecc_enabled"], v["ecc_pending"] = mode[0] == n.NVML_FEATURE_ENABLED, mode[1] == n.NVML_FEATURE_ENABLED
        if not v["ecc_enabled"]:
            return
        counts = {}
        for key, etype, ctype in (("volatile_sbe", n.NVML_MEMORY_ERROR_TYPE_CORRECTED, n.NVML_VOLATILE_ECC),
                                  ("volatile_dbe", n.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, n.NVML_VOLATILE_ECC),
                                  ("aggregate_sbe", n.NVML_MEMORY_ERROR_TYPE_CORRECTED, n.NVML_AGGREGATE_ECC),
                                  ("aggregate_dbe", n.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, n.NVML_AGGREGATE_ECC)):
            counts[key] = self.get("ecc", n.nvmlDeviceGetTotalEccErrors, etype, ctype)
        v["ecc"] = EccCounts(**counts)

    def _memory_health(self) -> None:
        """Ampere and newer remap rows; older GPUs retire pages. Ask for remapping first."""
        n, v = self.nvml, self.values
        rows = self.get("remapped_rows", n.nvmlDeviceGetRemappedRows, quiet_unsupported=True)
        if rows is not None:
            v["remap_correctable"], v["remap_uncorrectable"] = rows[0], rows[1]
            v["remap_pending"], v["remap_failure"] = bool(rows[2]), bool(rows[3])
            return
        sbe = self.get("retired_pages", n.nvmlDeviceGetRetiredPages, n.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, quiet_unsupported=True)
        dbe = self.get("retired_pages", n.nvmlDeviceGetRetiredPages, n.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, quiet_unsupported=True)
        pending = self.get("retired_pages", n.nvmlDeviceGetRetiredPagesPendingStatus, quiet_unsupported=True)
        v["retired_pages_sbe"] = len(sbe) if sbe is not None else None
        v["retired_pages_dbe"] = len(dbe) if dbe is not None else None
        v["retired_pages_pending"] = None if pending is None else pending == n.NVML_FEATURE_ENABLED

    def _clocks(self) -> None:
        n = self.nvml
        fn = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or n.nvmlDeviceGetCurrentClocksThrottleReasons
        mask = self.get("throttle", fn)
        if mask is not None:
            self.values["throttle_mask"] = mask
            self.values["throttle_reasons"] = clock_reasons.decode(mask)

    def _mig(self) -> None:
        n, v = self.nvml, self.values
        mode = self.get("mig", n.nvmlDeviceGetMigMode, quiet_unsupported=True)
        if mode is None:
            return
        v["mig_current"], v["mig_pending"] = mode[0] == n.NVML_DEVICE_MIG_ENABLE, mode[1] == n.NVML_DEVICE_MIG_ENABLE
        if not v["mig_current"]:
            return
        devices = []
        count = self.get("mig", n.nvmlDeviceGetMaxMigDeviceCount) or 0
        for j in range(count):
            try:
                mh = n.nvmlDeviceGetMigDeviceHandleByIndex(self.handle, j)
            except n.NVMLError:  # NOT_FOUND: an empty slot
                continue
            devices.append(self._mig_device(mh, j))
        v["mig_devices"] = tuple(devices)

    def _mig_device(self, mh: Any, j: int) -> MigDevice:
        n = self.nvml

        def ask(fn):
            try:
                return fn(mh)
            except n.NVMLError:
                return None

        name = ask(n.nvmlDeviceGetName)
        mem = ask(n.nvmlDeviceGetMemoryInfo)
        uuid = ask(n.nvmlDeviceGetUUID)
        profile = _text(name).rsplit("MIG ", 1)[-1].strip() if name is not None and "MIG " in _text(name) else None
        return MigDevice(
            gpu_index=self.index, gpu_instance_id=ask(n.nvmlDeviceGetGpuInstanceId), compute_instance_id=ask(n.nvmlDeviceGetComputeInstanceId),
            index=j, profile=profile, uuid=_text(uuid) if uuid is not None else None,
            memory_used_mib=mem.used // MIB if mem is not None else None, memory_total_mib=mem.total // MIB if mem is not None else None,
        )

    def _fabric(self) -> None:
        n = self.nvml
        struct = getattr(n, "c_nvmlGpuFabricInfo_t", None)
        if struct is None:
            return
        info = struct()
        if self.get("fabric", n.nvmlDeviceGetGpuFabricInfo, ctypes.byref(info), quiet_unsupported=True) is None:
            return
        state = _FABRIC_STATES.get(info.state)
        if state is None:
            return
        self.values["fabric_state"] = state
        self.values["fabric_status"] = "Success" if info.status == n.NVML_SUCCESS else str(n.NVMLError(info.status))

    def _processes(self) -> None:
        n = self.nvml
        procs = self.get("processes", n.nvmlDeviceGetComputeRunningProcesses)
        if procs is None:
            return
        out = []
        for p in procs:
            try:
                name = _text(n.nvmlSystemGetProcessName(p.pid))
            except n.NVMLError:
                name = None
            used = getattr(p, "usedGpuMemory", None)
            gi, ci = getattr(p, "gpuInstanceId", None), getattr(p, "computeInstanceId", None)
            out.append(GpuProcess(pid=p.pid, name=name, type="C", used_memory_mib=used // MIB if used else None,
                                  gpu_instance_id=gi if gi not in (None, 0xFFFFFFFF) else None,
                                  compute_instance_id=ci if ci not in (None, 0xFFFFFFFF) else None))
        self.values["processes"] = tuple(out)
