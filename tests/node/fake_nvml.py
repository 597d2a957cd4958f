"""A fake of the nvidia-ml-py module at the NVML boundary: the same function names, constants and error classes
(the real ``pynvml.NVMLError_*`` with their real codes), with the values an H100 node returns.

Every function name here must exist in the real pynvml (tests/node/test_node_command.py checks it), so the
fake cannot drift into an API nvidia-ml-py does not have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pynvml

MIB = 1024 * 1024


@dataclass
class FakeMig:
    gi: int
    ci: int
    profile: str
    uuid: str
    total_mib: int
    used_mib: int = 13


@dataclass
class FakeGpu:
    index: int
    pci: str  # as NVML gives it: 00000000:18:00.0
    uuid: str
    name: str = "NVIDIA H100 80GB HBM3"
    total_mib: int = 81559
    used_mib: int = 0
    temp: int = 33
    power_mw: int = 71_420
    limit_mw: int = 700_000
    pstate: int = 0
    util: int = 0
    persistence: int = pynvml.NVML_FEATURE_ENABLED
    ecc_mode: tuple = (pynvml.NVML_FEATURE_ENABLED, pynvml.NVML_FEATURE_ENABLED)
    ecc: dict = field(default_factory=dict)  # (error type, counter type) -> count
    remapped: tuple = (0, 0, 0, 0)  # corr, unc, pending, failure
    reasons: int = pynvml.nvmlClocksEventReasonGpuIdle
    pcie: tuple = (5, 5, 16, 16)  # gen cur, gen max, width cur, width max
    mig: tuple = (pynvml.NVML_DEVICE_MIG_DISABLE, pynvml.NVML_DEVICE_MIG_DISABLE)
    migs: list = field(default_factory=list)
    fabric: tuple = (pynvml.NVML_GPU_FABRIC_STATE_COMPLETED, pynvml.NVML_SUCCESS)
    processes: list = field(default_factory=list)  # (pid, name, used MiB)
    fail: dict = field(default_factory=dict)  # function name -> NVMLError class raised by it


def h100_node(n: int = 8) -> list[FakeGpu]:
    """An HGX H100 board: PCI addresses of a typical eight-GPU server."""
    buses = ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"]
    return [FakeGpu(i, f"00000000:{buses[i]}:00.0", f"GPU-{i:08x}-1a3d-4c5e-9f8a-0b1c2d3e4f5{i}") for i in range(n)]


class FakeNvml:
    """Looks like `import pynvml` to gpusleuth.sources.nvml."""

    NVMLError = pynvml.NVMLError

    def __init__(self, gpus: list[FakeGpu], driver: str = "580.95.05", cuda: int = 13000, init_error: type | None = None):
        self.gpus, self.driver, self.cuda, self.init_error = gpus, driver, cuda, init_error
        self.names = {pid: name for g in gpus for pid, name, _ in g.processes}
        self.shutdown_called = False

    def __getattr__(self, name: str):
        if name.startswith(("NVML_", "NVMLError_", "nvmlClocks", "c_nvml")):
            return getattr(pynvml, name)  # the real constants, error classes and structures
        raise AttributeError(name)

    def _call(self, fn: str, gpu: FakeGpu):
        if fn in gpu.fail:
            raise gpu.fail[fn]()

    # --- system
    def nvmlInit(self):
        if self.init_error:
            raise self.init_error()

    def nvmlShutdown(self):
        self.shutdown_called = True

    def nvmlSystemGetDriverVersion(self):
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self):
        return self.cuda

    def nvmlSystemGetProcessName(self, pid):
        if pid not in self.names:
            raise pynvml.NVMLError_NotFound()
        return self.names[pid]

    # --- devices
    def nvmlDeviceGetCount(self):
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index):
        gpu = self.gpus[index]
        self._call("nvmlDeviceGetHandleByIndex", gpu)
        return gpu

    def nvmlDeviceGetPciInfo(self, h):
        self._call("nvmlDeviceGetPciInfo", h)
        return SimpleNamespace(busId=h.pci.encode(), busIdLegacy=h.pci[4:].encode())

    def nvmlDeviceGetName(self, h):
        if isinstance(h, FakeMig):
            return f"NVIDIA H100 80GB HBM3 MIG {h.profile}"
        self._call("nvmlDeviceGetName", h)
        return h.name

    def nvmlDeviceGetUUID(self, h):
        if isinstance(h, FakeMig):
            return h.uuid
        self._call("nvmlDeviceGetUUID", h)
        return h.uuid

    def nvmlDeviceGetPersistenceMode(self, h):
        self._call("nvmlDeviceGetPersistenceMode", h)
        return h.persistence

    def nvmlDeviceGetMemoryInfo(self, h, version=None):
        if isinstance(h, FakeMig):
            return SimpleNamespace(total=h.total_mib * MIB, used=h.used_mib * MIB, free=(h.total_mib - h.used_mib) * MIB)
        self._call("nvmlDeviceGetMemoryInfo", h)
        return SimpleNamespace(total=h.total_mib * MIB, used=h.used_mib * MIB, free=(h.total_mib - h.used_mib) * MIB)

    def nvmlDeviceGetTemperature(self, h, sensor):
        self._call("nvmlDeviceGetTemperature", h)
        return h.temp

    def nvmlDeviceGetTemperatureThreshold(self, h, which):
        self._call("nvmlDeviceGetTemperatureThreshold", h)
        return {pynvml.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN: 92, pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: 89,
                pynvml.NVML_TEMPERATURE_THRESHOLD_GPU_MAX: 87}[which]

    def nvmlDeviceGetPowerUsage(self, h):
        self._call("nvmlDeviceGetPowerUsage", h)
        return h.power_mw

    def nvmlDeviceGetEnforcedPowerLimit(self, h):
        self._call("nvmlDeviceGetEnforcedPowerLimit", h)
        return h.limit_mw

    def nvmlDeviceGetPerformanceState(self, h):
        return h.pstate

    def nvmlDeviceGetUtilizationRates(self, h):
        self._call("nvmlDeviceGetUtilizationRates", h)
        return SimpleNamespace(gpu=h.util, memory=0)

    def nvmlDeviceGetEccMode(self, h):
        self._call("nvmlDeviceGetEccMode", h)
        return list(h.ecc_mode)

    def nvmlDeviceGetTotalEccErrors(self, h, error_type, counter_type):
        self._call("nvmlDeviceGetTotalEccErrors", h)
        return h.ecc.get((error_type, counter_type), 0)

    def nvmlDeviceGetRemappedRows(self, h):
        self._call("nvmlDeviceGetRemappedRows", h)
        return h.remapped

    def nvmlDeviceGetRetiredPages(self, h, cause):
        raise pynvml.NVMLError_NotSupported()  # Ampere and newer remap rows instead

    def nvmlDeviceGetRetiredPagesPendingStatus(self, h):
        raise pynvml.NVMLError_NotSupported()

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        self._call("nvmlDeviceGetCurrentClocksEventReasons", h)
        return h.reasons

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h):
        return h.pcie[0]

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h):
        return h.pcie[1]

    def nvmlDeviceGetCurrPcieLinkWidth(self, h):
        return h.pcie[2]

    def nvmlDeviceGetMaxPcieLinkWidth(self, h):
        return h.pcie[3]

    def nvmlDeviceGetMigMode(self, h):
        self._call("nvmlDeviceGetMigMode", h)
        return list(h.mig)

    def nvmlDeviceGetMaxMigDeviceCount(self, h):
        return 7

    def nvmlDeviceGetMigDeviceHandleByIndex(self, h, index):
        if index >= len(h.migs):
            raise pynvml.NVMLError_NotFound()
        return h.migs[index]

    def nvmlDeviceGetGpuInstanceId(self, mig):
        return mig.gi

    def nvmlDeviceGetComputeInstanceId(self, mig):
        return mig.ci

    def nvmlDeviceGetGpuFabricInfo(self, h, ref):
        self._call("nvmlDeviceGetGpuFabricInfo", h)
        info = ref._obj  # ctypes.byref(c_nvmlGpuFabricInfo_t())
        info.state, info.status = h.fabric
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        self._call("nvmlDeviceGetComputeRunningProcesses", h)
        return [SimpleNamespace(pid=pid, usedGpuMemory=mib * MIB, gpuInstanceId=0xFFFFFFFF, computeInstanceId=0xFFFFFFFF)
                for pid, _, mib in h.processes]

