"""dcgm-exporter scrapes as a view: the metrics that tell the truth about a GPU, and the ones that lie.

The health fields (ECC, row remapping, clock reasons, last Xid) become the same ``GpuDevice`` and
``XidEvent`` objects nvidia-smi, NVML and the kernel log produce, so the hardware checks judge them once.
The utilisation fields stay here for the checks that compare GPU_UTIL with what the silicon really did.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusleuth.facts.store import Facts, combiner
from gpusleuth.knowledge import clock_reasons
from gpusleuth.model.gpu import EccCounts, GpuDevice, GpuMetricSample, XidEvent, short_pci

# GpuDevice field <- DCGM field(s), first present wins (DCGM renamed the throttle field in 3.x).
_FIELDS = {
    "temperature_c": ("DCGM_FI_DEV_GPU_TEMP",),
    "power_draw_w": ("DCGM_FI_DEV_POWER_USAGE",),
    "memory_used_mib": ("DCGM_FI_DEV_FB_USED",),
    "utilization_gpu_pct": ("DCGM_FI_DEV_GPU_UTIL",),
    "remap_uncorrectable": ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",),
    "remap_correctable": ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",),
    "remap_failure": ("DCGM_FI_DEV_ROW_REMAP_FAILURE",),
    "remap_pending": ("DCGM_FI_DEV_ROW_REMAP_PENDING",),
    "throttle_mask": ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"),
}
_EVIDENCE_NAME = {  # GpuDevice.ev() names used by the checks
    "remap_failure": "remap_failure", "remap_pending": "remap_pending", "throttle_mask": "throttle",
    "temperature_c": "temperature", "power_draw_w": "power", "memory_used_mib": "memory", "utilization_gpu_pct": "utilization",
    "remap_uncorrectable": "remap_uncorrectable", "remap_correctable": "remap_correctable",
}
XID_FIELD = "DCGM_FI_DEV_XID_ERRORS"


@dataclass
class GpuMetrics:
    samples: list[GpuMetricSample]

    def whole_gpus(self) -> list[GpuMetricSample]:
        return [s for s in self.samples if not s.mig_profile]

    def devices(self) -> list[GpuDevice]:
        """The scrape's whole GPUs as GpuDevice (source dcgm-exporter) for the inventory."""
        return [_device(s) for s in self.whole_gpus()]

    def xid_events(self) -> list[XidEvent]:
        """DCGM_FI_DEV_XID_ERRORS holds the last Xid a GPU reported (0: none)."""
        out = []
        for s in self.whole_gpus():
            code = s.values.get(XID_FIELD)
            if code and code > 0 and XID_FIELD in s.evidence:
                out.append(XidEvent(
                    code=int(code), pci=short_pci(s.pci_bus_id), node=s.node, evidence=s.evidence[XID_FIELD],
                    message=f"last Xid reported by DCGM for {s.label} ({XID_FIELD})", source="dcgm-exporter",
                    artifact=s.artifact,
                ))
        return out


def _device(s: GpuMetricSample) -> GpuDevice:
    vals: dict = {}
    ev = {}
    for attr, names in _FIELDS.items():
        name = next((n for n in names if n in s.values), None)
        if name is None:
            continue
        v = s.values[name]
        vals[attr] = (v > 0) if attr in ("remap_failure", "remap_pending") else (float(v) if attr == "power_draw_w" else int(v))
        if name in s.evidence:
            ev[_EVIDENCE_NAME[attr]] = s.evidence[name]
    if "throttle_mask" in vals:
        vals["throttle_reasons"] = clock_reasons.decode(vals["throttle_mask"])
    if "DCGM_FI_DEV_FB_FREE" in s.values and "memory_used_mib" in vals:
        vals["memory_total_mib"] = int(vals["memory_used_mib"] + s.values["DCGM_FI_DEV_FB_FREE"] + s.values.get("DCGM_FI_DEV_FB_RESERVED", 0))
    ecc = EccCounts(
        volatile_sbe=_opt_int(s.values.get("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL")),
        volatile_dbe=_opt_int(s.values.get("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL")),
        aggregate_sbe=_opt_int(s.values.get("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL")),
        aggregate_dbe=_opt_int(s.values.get("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL")),
    )
    for name, key in (("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "ecc_volatile"), ("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "ecc_aggregate")):
        if name in s.evidence:
            ev[key] = s.evidence[name]
    first = next(iter(s.evidence.values()), None)
    if first:
        ev["gpu"] = first
    return GpuDevice(
        index=int(s.gpu) if s.gpu and s.gpu.isdigit() else None, name=s.model, uuid=s.uuid, pci_bus_id=s.pci_bus_id,
        driver_version=s.driver_version, ecc=ecc, node=s.node, source="dcgm-exporter", artifact=s.artifact,
        line=first.line if first else None, evidence=ev, **vals,
    )


def _opt_int(v: float | None) -> int | None:
    return int(v) if v is not None else None


@combiner(GpuMetrics)
def build_metrics(facts: Facts) -> GpuMetrics:
    return GpuMetrics(facts.present(GpuMetricSample, "no dcgm-exporter scrape in the artifacts"))
