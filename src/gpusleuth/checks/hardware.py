"""Hardware: the GPU, its memory, its PCIe link and the NVSwitch fabric (HW0xx).

Xids come from the kernel log (and dcgm-exporter's last-Xid field) through KernelEvents, grouped in
bursts with follow-ons attributed to the first; the rest from the GPUs nvidia-smi, NVML or dcgm-exporter
read (GpuInventory). Triage follows NVIDIA's Xid catalogue: 48 DBE; 94 contained vs 95 uncontained; 63/64 row
remapping judged by trend; 79 fallen off the bus.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.gpu_common import (
    cordon_drain,
    diag_before_trust,
    gpu_for,
    gpu_target,
    reset_gpu,
    rma,
    xid_groups,
    xid_hit,
)
from gpusleuth.facts.gpus import GpuInventory, KernelEvents, NodeGpus
from gpusleuth.facts.logs import Logs
from gpusleuth.facts.prose import Prose
from gpusleuth.knowledge.cuda_errors import capability_of
from gpusleuth.knowledge.versions import vtuple
from gpusleuth.knowledge import clock_reasons
from gpusleuth.knowledge import xid as xid_table
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.gpu import GpuDevice

# Codes with their own check; every other hardware-layer Xid goes to HW006.
_OWN = {79, 48, 94, 95, 63, 64}


def _hw_xids(kernel: KernelEvents, inventory: GpuInventory | None, codes: set[int]) -> list[Hit]:
    return [xid_hit(code, node, pci, group, inventory) for (node, pci, code), group in xid_groups(kernel, codes).items()]


@check("HW001", "gpu-fallen-off-the-bus")
def fallen_off_the_bus(kernel: KernelEvents, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """A GPU stopped answering on PCIe (Xid 79, "GPU has fallen off the bus").

    What it does: finds Xid 79 in the kernel log and the multi-line "NVRM: The NVIDIA GPU ... has fallen off
    the bus" messages (newer drivers print them without an Xid), groups them per GPU with the Xids that follow
    (GSP timeouts, 154) attributed to it, and counts separate bursts on the same slot.
    Why it matters: the GPU is gone until the node is reset; everything above it (device plugin, pods) fails as
    a symptom. Thermal, power delivery, seating or a dying board; the same slot twice means RMA.
    How to fix: cordon and drain the node, reboot it, run `dcgmi diag -r 3` before uncordoning; if the same
    slot throws Xid 79 again, RMA the card.
    References: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html; https://github.com/NVIDIA/NVSentinel/issues/155 (multi-line fallen-off-the-bus without Xid); https://github.com/leptonai/gpud/pull/1209
    """
    hits = []
    seen = set()
    groups = xid_groups(kernel, {79})
    for (node, pci, code), group in groups.items():
        extra = tuple(e.evidence for e in kernel.of_kind("fallen-off-bus") if e.pci == pci and e.node == node)[:2]
        hits.append(xid_hit(code, node, pci, group, inventory, extra_evidence=extra))
        seen.add((node, pci))
    # Newer drivers may print only the NVRM paragraph, with no Xid line.
    for e in kernel.of_kind("fallen-off-bus"):
        if (e.node, e.pci) in seen:
            continue
        seen.add((e.node, e.pci))
        row = xid_table.xid(79)
        hits.append(Hit(
            title=f"GPU at PCI {e.pci or '?'} fell off the bus",
            explanation=f"The kernel says the GPU has fallen off the bus (same condition as Xid 79, printed without an Xid). {row.meaning} "
                        f"Immediate action: {row.immediate_action}",
            severity=Severity.CRITICAL, role=Role.ROOT_CAUSE, evidence=(e.evidence,), node=e.node,
            component=f"gpu:{e.pci}" if e.pci else "gpu",
            fixes=(cordon_drain(e.node, "the GPU is gone until the node is reset"),
                   Fix(FixKind.IMMEDIATE, f"Reboot {e.node or '<node>'}: the GPU does not come back without a node reset.", ("systemctl reboot",)),
                   diag_before_trust(e.node), rma(e.node, e.pci or "<gpu>", row.rma_rule or "same slot again", met=False)),
            confidence=0.85, facts={"xid": 79, "pci": e.pci, "source": "kernel"},
        ))
    return hits


@check("HW002", "xid-double-bit-ecc")
def double_bit_ecc(kernel: KernelEvents, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """An uncorrectable double-bit ECC error hit GPU memory (Xid 48).

    What it does: finds Xid 48 per GPU; contained/uncontained (94/95) and row-remap (63/64) Xids of the same
    burst are attributed to it.
    Why it matters: the data the application read is wrong; the GPU needs a reset to clear it, and repeated DBEs
    on one GPU are how memory dies.
    How to fix: restart the workload, drain the GPU and reset it before reuse, run `dcgmi diag -r 3`; RMA if the
    SRAM threshold is exceeded or the diagnostic fails.
    References: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
    """
    return _hw_xids(kernel, inventory, {48})


@check("HW003", "xid-uncontained-memory-error")
def uncontained_memory_error(kernel: KernelEvents, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """An uncontained memory error (Xid 95): the blast radius crossed applications.

    What it does: finds Xid 95 per GPU (not already explained by an earlier Xid 48 in the same burst).
    Why it matters: unlike Xid 94, every application on the GPU may have been hit; the card is compromised until
    it is reset, and nothing may restart on it before then.
    How to fix: cordon and drain, reset the GPU before anything restarts on it, then `dcgmi diag -r 3`.
    References: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
    """
    return _hw_xids(kernel, inventory, {95})


@check("HW004", "xid-contained-memory-error")
def contained_memory_error(kernel: KernelEvents, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """A contained memory error (Xid 94): one application was hit, the others on the GPU survived.

    What it does: finds Xid 94 per GPU (not already explained by an earlier Xid 48 in the same burst).
    Why it matters: the faulting application must restart; the GPU keeps serving the others, but carries a bad
    memory row until it is reset (contained means drain politely, uncontained, Xid 95, means reset first).
    How to fix: restart the affected application, drain the GPU politely and reset it when convenient.
    References: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
    """
    return _hw_xids(kernel, inventory, {94})


@check("HW005", "row-remapping-trend")
def row_remap_xids(kernel: KernelEvents, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """Row-remapping Xids (63 remap recorded, 64 remap failed), judged by their trend per GPU.

    What it does: counts Xid 63 and 64 per GPU across bursts; one 63 is the card doing its job (watch the
    trend), repeated 63s are a warning, any 64 means a remap failed and persistent 64s mean the GPU is out of
    spare rows. Counters from nvidia-smi/NVML (remapped rows, failure flag) are added as evidence.
    Why it matters: HBM retires bad rows like a disk retires sectors; the trend says whether the card is
    heading for RMA. Remaps take effect only after a GPU reset.
    How to fix: reset the GPU at a convenient time to activate pending remaps; for 64 reset now and, if it
    persists or the failure flag is set, RMA the card.
    References: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
    """
    hits = []
    for (node, pci, code), group in xid_groups(kernel, {63, 64}).items():
        gpu = gpu_for(inventory, node, pci)
        extra = (gpu.ev("remap_failure", "remap_pending"),) if gpu is not None and gpu.remap_failure is not None else ()
        hit = xid_hit(code, node, pci, group, inventory, extra_evidence=extra)
        bursts = len(group)
        if code == 63 and bursts == 1:
            hit = replace(hit, severity=Severity.INFO, role=Role.INFO,
                           title=hit.title + ": one remap, watch the trend",
                           fixes=(reset_gpu(node, gpu_target(gpu, pci), "when-convenient"),))
        elif code == 63 and bursts >= 3:
            hit = replace(hit, severity=Severity.WARNING, title=hit.title + f": {bursts} separate remap events, the trend is up")
        elif code == 64 and (bursts > 1 or (gpu is not None and gpu.remap_failure)):
            hit = replace(hit, severity=Severity.CRITICAL, title=hit.title + ": persistent remap failures, RMA candidate")
        hits.append(hit)
    return hits


@check("HW006", "xid-hardware-other")
def other_hardware_xids(kernel: KernelEvents, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """Any other Xid whose fault the catalogue puts in the hardware (NVLink, thermal, memory, PCIe, NVSwitch).

    What it does: reports every Xid of the hardware layer that has no check of its own (e.g. 74 NVLink, 92
    high single-bit rate, 140, 144-150), with the catalogue's meaning and immediate action.
    Why it matters: each is a hardware fault the catalogue knows how to handle; silence would hide it.
    How to fix: follow the catalogue's immediate action in the finding; most need a GPU reset and the long
    diagnostic before the node is trusted again.
    References: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
    """
    codes = {c for c, row in xid_table.catalog().items() if row.layer == "hardware" and c not in _OWN}
    return _hw_xids(kernel, inventory, codes)


# --------------------------------------------------------------------------- from nvidia-smi / NVML / DCGM


def _gpus(inventory: GpuInventory) -> Iterable[tuple[NodeGpus, GpuDevice]]:
    return inventory.all_gpus()


def _xid_on(kernel: KernelEvents | None, gpu: GpuDevice, codes: set[int]) -> bool:
    return kernel is not None and any(
        e.code in codes and e.pci == gpu.short_pci and (e.node is None or gpu.node is None or e.node == gpu.node)
        for e in kernel.xids
    )


@check("HW010", "ecc-uncorrectable-errors")
def ecc_uncorrectable(inventory: GpuInventory, kernel: KernelEvents | None = None) -> Iterable[Hit]:
    """A GPU counts uncorrectable (double-bit) ECC errors.

    What it does: reads the volatile (since driver load) and aggregate (lifetime) uncorrectable ECC counters
    from nvidia-smi, NVML or dcgm-exporter; volatile > 0 is an error now, aggregate-only is history.
    Why it matters: an uncorrectable error means an application read corrupted memory; on Ampere and newer the
    row is remapped at the next reset, on older GPUs the page is retired.
    How to fix: drain the GPU and reset it; watch the remapped-rows counters; RMA if errors keep coming.
    References: https://docs.nvidia.com/datacenter/dcgm/latest/dcgm-api/dcgm-api-field-ids.html (DCGM_FI_DEV_ECC_DBE_VOL); nvidia-smi -q / -q -x (nvsmi_device_v12.dtd)
    """
    for ng, g in _gpus(inventory):
        vol, agg = g.ecc.volatile_dbe or 0, g.ecc.aggregate_dbe or 0
        if vol <= 0 and agg <= 0:
            continue
        target = gpu_target(g, g.short_pci)
        explained = _xid_on(kernel, g, {48, 94, 95})
        if vol > 0:
            yield Hit(
                title=f"{g.label} has {vol} uncorrectable ECC error(s) since the driver loaded",
                explanation=f"Volatile uncorrectable (double-bit) ECC count {vol}, lifetime {agg or vol}. Applications on this GPU read "
                            "corrupted memory; the GPU needs a reset (which also activates any pending row remap).",
                severity=Severity.ERROR, role=Role.SYMPTOM if explained else Role.ROOT_CAUSE,
                caused_by=("HW002",) if _xid_on(kernel, g, {48}) else (),
                evidence=(g.ev("ecc_volatile", "ecc"),), node=ng.node, component=f"gpu:{g.short_pci}",
                fixes=(cordon_drain(ng.node, "uncorrectable memory errors"), reset_gpu(ng.node, target), diag_before_trust(ng.node)),
                confidence=0.9, facts={"volatile_dbe": vol, "aggregate_dbe": agg, "gpu_index": g.index},
            )
        else:
            yield Hit(
                title=f"{g.label} has {agg} uncorrectable ECC error(s) in its lifetime (none since the driver loaded)",
                explanation="The aggregate counter keeps history across resets; none happened since the last driver load. "
                            "Worth tracking against the remapped-rows counters, nothing to do now.",
                severity=Severity.INFO, role=Role.INFO, evidence=(g.ev("ecc_aggregate", "ecc"),), node=ng.node,
                component=f"gpu:{g.short_pci}", confidence=0.8, facts={"aggregate_dbe": agg, "gpu_index": g.index},
            )


@check("HW011", "row-remap-pending")
def row_remap_pending(inventory: GpuInventory) -> Iterable[Hit]:
    """A GPU has a row remap pending: it needs a reset to stop using a bad memory row.

    What it does: reads remapped-rows "pending" from nvidia-smi -q / -q -x, NVML or dcgm-exporter.
    Why it matters: the GPU recorded a bad HBM row but keeps using it until the next GPU reset; more
    uncorrectable errors (Xid 48/94/95) can follow until then.
    How to fix: drain the GPU and reset it (nvidia-smi -r -i <gpu>) at the next opportunity; check that pending
    clears and the failure flag stays No.
    References: https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/; nvidia-smi -q / -q -x (nvsmi_device_v12.dtd) remapped_rows
    """
    for ng, g in _gpus(inventory):
        if not g.remap_pending:
            continue
        target = gpu_target(g, g.short_pci)
        yield Hit(
            title=f"{g.label} has a row remap pending: reset the GPU to activate it",
            explanation=f"Remapped rows: {g.remap_uncorrectable if g.remap_uncorrectable is not None else '?'} uncorrectable, "
                        f"{g.remap_correctable if g.remap_correctable is not None else '?'} correctable, pending = Yes. The remap takes "
                        "effect at the next GPU reset; until then the bad row stays in use.",
            severity=Severity.WARNING, role=Role.ROOT_CAUSE, evidence=(g.ev("remap_pending"),), node=ng.node,
            component=f"gpu:{g.short_pci}",
            fixes=(cordon_drain(ng.node, f"GPU {target} needs a reset to apply the row remap"),
                   reset_gpu(ng.node, target, "when-convenient"), diag_before_trust(ng.node)),
            confidence=0.9, facts={"gpu_index": g.index, "remap_uncorrectable": g.remap_uncorrectable, "remap_correctable": g.remap_correctable},
        )


@check("HW012", "row-remap-failure")
def row_remap_failure(inventory: GpuInventory) -> Iterable[Hit]:
    """Row remapping failed on a GPU: it is out of spare rows in a bank.

    What it does: reads the remapped-rows failure flag from nvidia-smi, NVML or dcgm-exporter.
    Why it matters: the GPU can no longer hide bad memory rows; uncorrectable errors will recur. NVIDIA treats
    it as an RMA condition.
    How to fix: cordon the node, reset the GPU to confirm, run `dcgmi diag -r 3`, and open an RMA.
    References: nvidia-smi -q / -q -x (nvsmi_device_v12.dtd) remapped_rows; https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (Xid 64)
    """
    for ng, g in _gpus(inventory):
        if not g.remap_failure:
            continue
        target = gpu_target(g, g.short_pci)
        yield Hit(
            title=f"{g.label} row remapping failed: RMA candidate",
            explanation="Remapped rows: 'Remapping Failure Occurred: Yes'. A bank has no spare rows left; memory errors will "
                        "keep surfacing on this GPU.",
            severity=Severity.ERROR, role=Role.ROOT_CAUSE, evidence=(g.ev("remap_failure"),), node=ng.node,
            component=f"gpu:{g.short_pci}",
            fixes=(cordon_drain(ng.node, "the GPU cannot remap bad memory rows any more"), reset_gpu(ng.node, target),
                   diag_before_trust(ng.node), rma(ng.node, target, "remapped rows failure = Yes", met=True)),
            confidence=0.9, facts={"gpu_index": g.index},
        )


@check("HW013", "retired-pages-pending")
def retired_pages_pending(inventory: GpuInventory) -> Iterable[Hit]:
    """A GPU (Volta and older) has a page retirement pending.

    What it does: reads the retired-pages "pending" flag and double-bit retirement count (pre-Ampere GPUs; Ampere
    and newer remap rows instead, see HW011).
    Why it matters: the bad page keeps being used until the GPU is reset or the driver reloaded.
    How to fix: drain the GPU and reset it (or reload the driver); many retired pages mean RMA.
    References: nvidia-smi -q / -q -x (nvsmi_device_v12.dtd) retired_pages
    """
    for ng, g in _gpus(inventory):
        if not g.retired_pages_pending:
            continue
        yield Hit(
            title=f"{g.label} has a page retirement pending",
            explanation=f"Retired pages: {g.retired_pages_sbe or 0} for single-bit, {g.retired_pages_dbe or 0} for double-bit errors; "
                        "one more is pending and takes effect at the next reset.",
            severity=Severity.WARNING, role=Role.ROOT_CAUSE, evidence=(g.ev("retired_pages_pending"),), node=ng.node,
            component=f"gpu:{g.short_pci}",
            fixes=(reset_gpu(ng.node, gpu_target(g, g.short_pci), "when-convenient"),),
            confidence=0.85, facts={"gpu_index": g.index, "retired_sbe": g.retired_pages_sbe, "retired_dbe": g.retired_pages_dbe},
        )


def _active(g: GpuDevice, kinds: set[str]) -> list[str]:
    known = clock_reasons.by_id()
    return [r for r in (g.throttle_reasons or ()) if r in known and known[r].kind in kinds]


@check("HW014", "thermal-slowdown")
def thermal_slowdown(inventory: GpuInventory) -> Iterable[Hit]:
    """A GPU slows its clocks for heat, or runs at its own slowdown temperature.

    What it does: decodes the clock event (throttle) reasons and compares the temperature with the GPU's own
    slowdown/shutdown thresholds (or its T.Limit margin on GPUs that report one).
    Why it matters: thermal slowdown cuts throughput (HW slowdown halves clocks or worse) and precedes shutdown;
    it points at cooling, airflow or a failing fan rather than at software.
    How to fix: check the chassis airflow, fans, inlet temperature and the rack's cooling; compare with the other
    GPUs of the node.
    References: https://docs.nvidia.com/datacenter/dcgm/latest/dcgm-api/dcgm-api-field-ids.html (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS); nvidia-ml-py nvmlClocksEventReason* bits
    """
    for ng, g in _gpus(inventory):
        reasons = _active(g, {"thermal"})
        near = (g.temperature_c is not None and g.temp_slowdown_c is not None and g.temperature_c >= g.temp_slowdown_c - 2) or (
            g.temp_tlimit_margin_c is not None and g.temp_tlimit_slowdown_c is not None and g.temp_tlimit_margin_c <= g.temp_tlimit_slowdown_c + 2)
        if not reasons and not near:
            continue
        temp = f"{g.temperature_c} C" if g.temperature_c is not None else "?"
        limits = f" (slowdown {g.temp_slowdown_c} C, shutdown {g.temp_shutdown_c} C)" if g.temp_slowdown_c else ""
        evidence = tuple(dict.fromkeys([*(g.ev(f"throttle:{r}", "throttle") for r in reasons), g.ev("temperature")]))
        yield Hit(
            title=f"{g.label} is thermally throttled at {temp}",
            explanation=f"Active reasons: {', '.join(reasons) or 'none reported'}; temperature {temp}{limits}. "
                        + " ".join(clock_reasons.by_id()[r].meaning for r in reasons),
            severity=Severity.WARNING, role=Role.ROOT_CAUSE, evidence=evidence, node=ng.node, component=f"gpu:{g.short_pci}",
            fixes=(Fix(FixKind.IMMEDIATE, "Check the node's fans, airflow and inlet temperature (BMC sensor readings) and compare "
                                          "with the other GPUs; move work off the GPU if it keeps climbing.", ("nvidia-smi -q -d TEMPERATURE,PERFORMANCE",)),),
            confidence=0.85, facts={"temperature_c": g.temperature_c, "slowdown_c": g.temp_slowdown_c, "reasons": reasons, "gpu_index": g.index},
        )


@check("HW015", "power-slowdown")
def power_slowdown(inventory: GpuInventory) -> Iterable[Hit]:
    """A GPU's clocks are held down by a power limit, a power brake or a board limit.

    What it does: decodes the clock event reasons of kind power/hardware: hardware power brake, HW slowdown (not
    thermal), board or reliability limits are warnings; the software power cap is reported as a note with the
    power draw against the limit (a busy GPU at its cap is working as designed).
    Why it matters: a power brake comes from the chassis or PSU and slows the whole node; a cap set below the
    default silently costs throughput.
    How to fix: check the PSUs and the BMC power events for a brake; compare the power limit with the default
    (`nvidia-smi -q -d POWER`) and restore it if someone lowered it.
    References: https://docs.nvidia.com/datacenter/dcgm/latest/dcgm-api/dcgm-api-field-ids.html (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS); nvidia-ml-py nvmlClocksEventReason* bits
    """
    for ng, g in _gpus(inventory):
        hard = [r for r in _active(g, {"power", "hardware"}) if r != "sw_power_cap"]
        if "hw_slowdown" in hard and _active(g, {"thermal"}):
            hard.remove("hw_slowdown")  # explained by heat: HW014
        soft = "sw_power_cap" in (g.throttle_reasons or ())
        if not hard and not soft:
            continue
        power = f"{g.power_draw_w:.0f} W of {g.power_limit_w:.0f} W" if g.power_draw_w is not None and g.power_limit_w else "power draw unknown"
        reasons = hard or ["sw_power_cap"]
        yield Hit(
            title=f"{g.label} clocks limited by {', '.join(reasons)} ({power})",
            explanation=" ".join(clock_reasons.by_id()[r].meaning for r in reasons if r in clock_reasons.by_id()),
            severity=Severity.WARNING if hard else Severity.INFO, role=Role.ROOT_CAUSE if hard else Role.INFO,
            evidence=tuple(dict.fromkeys([*(g.ev(f"throttle:{r}", "throttle") for r in reasons), g.ev("power")])), node=ng.node,
            component=f"gpu:{g.short_pci}",
            fixes=(Fix(FixKind.IMMEDIATE, "Check the PSUs and the BMC event log for power-brake events; compare the power limit "
                                          "with the default and restore it if it was lowered.", ("nvidia-smi -q -d POWER,PERFORMANCE",)),),
            confidence=0.8, facts={"reasons": reasons, "power_draw_w": g.power_draw_w, "power_limit_w": g.power_limit_w, "gpu_index": g.index},
        )


@check("HW016", "pcie-link-downtrained")
def pcie_link_downtrained(inventory: GpuInventory) -> Iterable[Hit]:
    """A GPU's PCIe link runs narrower (or slower, under load) than it can.

    What it does: compares the current PCIe link width with the maximum, and the current generation with the
    maximum while the GPU is busy (GPUs drop the generation at idle to save power, which is normal).
    Why it matters: a x8 link halves host-device bandwidth; it usually means a badly seated card, a riser or a
    slot problem, and often precedes the card falling off the bus.
    How to fix: reseat the card or riser at the next maintenance; check the slot's BIOS settings; compare with
    `lspci -vv` (LnkSta vs LnkCap) and run `dcgmi diag -r 3`.
    References: nvidia-smi -q / -q -x (nvsmi_device_v12.dtd) pci_gpu_link_info
    """
    for ng, g in _gpus(inventory):
        narrow = g.pcie_width_current is not None and g.pcie_width_max and g.pcie_width_current < g.pcie_width_max
        busy = "gpu_idle" not in (g.throttle_reasons or ()) and ((g.utilization_gpu_pct or 0) > 0 or bool(g.processes))
        slow = busy and g.pcie_gen_current is not None and g.pcie_gen_max and g.pcie_gen_current < g.pcie_gen_max
        if not narrow and not slow:
            continue
        what = []
        if narrow:
            what.append(f"width x{g.pcie_width_current} of x{g.pcie_width_max}")
        if slow:
            what.append(f"Gen{g.pcie_gen_current} of Gen{g.pcie_gen_max} while busy")
        yield Hit(
            title=f"{g.label} PCIe link downtrained: {', '.join(what)}",
            explanation="The link trained below what both ends support. Host-device copies (data loading, NCCL over PCIe) run "
                        "correspondingly slower; a degrading link often precedes the GPU falling off the bus.",
            severity=Severity.WARNING, role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(g.ev(f) for f in (["pcie_width"] if narrow else []) + (["pcie_gen"] if slow else []))),
            node=ng.node, component=f"gpu:{g.short_pci}",
            fixes=(Fix(FixKind.PERMANENT, "Reseat the GPU (or its riser) at the next maintenance window and check the slot; confirm "
                                          "with lspci and the long diagnostic.", (f"lspci -vv -s {g.pci_bus_id or '<bus>'}", "dcgmi diag -r 3")),),
            confidence=0.75 if narrow else 0.6,
            facts={"width": g.pcie_width_current, "width_max": g.pcie_width_max, "gen": g.pcie_gen_current, "gen_max": g.pcie_gen_max},
        )


@check("HW017", "gpu-missing-from-driver")
def gpu_missing(inventory: GpuInventory, kernel: KernelEvents | None = None) -> Iterable[Hit]:
    """The driver shows fewer GPUs than the node is known to have.

    What it does: compares the GPUs nvidia-smi/NVML could read with GFD's nvidia.com/gpu.count label, the node's
    nvidia.com/gpu capacity, and the GPUs nvidia-smi listed but could not read (Unable to determine the device
    handle / GPU is lost).
    Why it matters: a GPU that vanished from the driver is usually a hardware event (fell off the bus) and every
    layer above it sees one GPU less.
    How to fix: find the missing GPU's PCI address (lspci | grep -i nvidia), look for Xid 79 in the kernel log,
    drain and reboot the node, and run `dcgmi diag -r 3`.
    References: https://github.com/NVIDIA/dcgm-exporter/issues/604
    """
    for ng in inventory.nodes:
        if not ng.reports:
            continue
        unreadable = [e for e in ng.errors if e.pci_bus_id or e.gpu_index is not None]
        lost = {e.pci_bus_id for e in unreadable} | {e.gpu_index for e in unreadable}
        readable = [g for g in ng.gpus if g.source != "dcgm-exporter" and g.pci_bus_id not in lost and g.index not in lost]
        claims = [c for c in ng.counts if c.value and (c.source.startswith("label") or c.source.startswith("capacity"))]
        expected = max(claims, key=lambda c: c.value, default=None)
        short = expected is not None and len(readable) < expected.value
        if not short and not unreadable:
            continue
        fell = kernel is not None and any(b.node == ng.node or b.node is None for b in kernel.bursts_with(79))
        n_exp = max(expected.value if expected else 0, len(readable) + len(unreadable), ng.visible.value if ng.visible else 0)
        yield Hit(
            title=f"{len(readable)} of {n_exp} GPUs readable by the driver",
            explanation=f"The driver read {len(readable)} GPU(s)"
                        + (f"; {expected.source} says {expected.value}" if expected else "")
                        + (f"; {len(unreadable)} listed but unreadable ({', '.join(f'{e.pci_bus_id or e.gpu_index}: {e.message}' for e in unreadable)})" if unreadable else "")
                        + ". A GPU that disappears from the driver is a hardware event until proven otherwise.",
            severity=Severity.ERROR, role=Role.SYMPTOM if fell else Role.ROOT_CAUSE, caused_by=("HW001",) if fell else (),
            evidence=tuple(dict.fromkeys([*(e.evidence for e in unreadable if e.evidence), *([expected.evidence] if expected else []),
                                          *([ng.visible.evidence] if ng.visible else [])])),
            node=ng.node, component="gpus",
            fixes=(cordon_drain(ng.node, "a GPU is missing"),
                   Fix(FixKind.IMMEDIATE, "Find the missing GPU and the reason in the kernel log.", ("lspci | grep -i nvidia", "dmesg -T | grep -E 'NVRM|Xid'")),
                   diag_before_trust(ng.node)),
            confidence=0.8, facts={"readable": len(readable), "expected": n_exp, "unreadable": [e.pci_bus_id or e.gpu_index for e in unreadable]},
        )


@check("HW019", "nvswitch-fabric-not-ready")
def fabric_not_ready(inventory: GpuInventory) -> Iterable[Hit]:
    """On an NVSwitch system the GPU fabric is not initialised (fabric manager not done or failed).

    What it does: reads each GPU's fabric state/status (nvidia-smi -q "Fabric", NVML GpuFabricInfo) on systems
    that report one; anything but state Completed with status Success is a finding.
    Why it matters: until nvidia-fabricmanager has trained the NVLink fabric, CUDA fails with error 802 "system
    not yet initialized" on every GPU of the node, while nvidia-smi looks healthy.
    How to fix: check the nvidia-fabricmanager service (its version must equal the driver's) and its log.
    References: knowledge/driver_branches.toml trap fabric-manager-mismatch; nvidia-ml-py nvmlDeviceGetGpuFabricInfo
    """
    for ng in inventory.nodes:
        bad = [g for g in ng.gpus if g.fabric_state and (g.fabric_state.lower() != "completed" or (g.fabric_status or "success").lower() != "success")]
        if not bad:
            continue
        states = sorted({f"{g.fabric_state}/{g.fabric_status or '?'}" for g in bad})
        yield Hit(
            title=f"NVSwitch fabric not ready on {len(bad)} GPU(s) ({', '.join(states)})",
            explanation="The GPU fabric has not finished training (or failed). CUDA applications fail with 802 'system not yet "
                        "initialized' until nvidia-fabricmanager, of exactly the driver's version, completes.",
            severity=Severity.ERROR, role=Role.ROOT_CAUSE, evidence=tuple(g.ev("fabric") for g in bad[:4]), node=ng.node,
            component="nvidia-fabricmanager",
            fixes=(Fix(FixKind.IMMEDIATE, "Check the fabric manager on the node: it must run and match the driver version.",
                       ("systemctl status nvidia-fabricmanager", "journalctl -u nvidia-fabricmanager --no-pager | tail -50", "nv-fabricmanager --version")),),
            confidence=0.85, facts={"gpus": [g.index for g in bad], "states": states},
        )


DCP_MIN_CC = (7, 0)  # DCGM's profiling (DCP) metrics: Volta and newer data-center GPUs
SIG_DCGM_MODULE = "dcgm-exporter.module-not-loaded"  # knowledge/signatures.toml


@check("HW020", "profiling-metrics-unsupported-on-gpu")
def profiling_unsupported(logs: Logs, inventory: GpuInventory | None = None, prose: Prose | None = None) -> Iterable[Hit]:
    """DCGM's profiling metrics (DCGM_FI_PROF_*) are off because the GPU is older than Volta: nothing to fix in software.

    What it does: when dcgm-exporter (or DCGM) says its profiling module is not loaded (`Not collecting DCP
    metrics: This request is serviced by a module of DCGM that is not currently loaded`) and the node's GPU model
    is known (nvidia-smi, NVML, GFD's gpu.product label, or a model the ticket names), looks the model up in the
    compute-capability table: below 7.0 (Maxwell, Pascal) the GPU has no profiling counters DCGM can read.
    Why it matters: DCGM_FI_PROF_GR_ENGINE_ACTIVE, SM activity and tensor-pipe metrics are simply absent on such
    GPUs while DCGM_FI_DEV_GPU_UTIL works; upgrading DCGM or the exporter, or restarting nv-hostengine, does not
    bring them back.
    How to fix: use the DCGM_FI_DEV_* fields (GPU utilisation, memory) on these nodes, and take the profiling
    fields out of their exporter's metric list to stop the noise; profiling metrics need a Volta or newer GPU.
    References: https://github.com/NVIDIA/dcgm-exporter/issues/395; https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/feature-overview.html#profiling
    """
    ms = logs.matches(SIG_DCGM_MODULE)
    if not ms:
        return
    models: list[tuple[str, object, str | None]] = []  # (model, evidence, node)
    for ng in (inventory.nodes if inventory is not None else ()):
        if ng.product and ng.product_evidence is not None:
            models.append((ng.product, ng.product_evidence, ng.node))
    if not models and prose is not None:
        models = [(st.value, st.evidence, None) for st in prose.stated_of("gpu")]
    for model, ev, node in models:
        cap = capability_of(model)
        if cap is None or vtuple(cap.cc) >= DCP_MIN_CC:
            continue
        line = ms[-1].line
        yield Hit(
            title=f"Profiling metrics are not available on {model} ({cap.arch}, compute capability {cap.cc}): DCGM needs Volta or newer",
            explanation=(f"{line.evidence().cite()}: \"{line.message.strip()[:200]}\". The GPU is {model}{' on ' + node if node else ''} "
                         f"({ev.cite()}), a {cap.arch} part: DCGM's profiling module only runs on Volta (7.0) and newer data-center GPUs, "
                         "so the DCGM_FI_PROF_* fields stay empty whatever the DCGM or exporter version. The device-level fields "
                         "(DCGM_FI_DEV_*) still work."),
            severity=Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=(line.evidence(), ev),
            fixes=(Fix(FixKind.PERMANENT, "Use DCGM_FI_DEV_GPU_UTIL and the other DCGM_FI_DEV_* fields on these nodes, and remove the "
                       "DCGM_FI_PROF_* fields from their exporter's metrics CSV.", ()),),
            node=node,
            component="nvidia-dcgm-exporter",
            confidence=0.8 if node else 0.6,
            facts={"model": model, "compute_capability": cap.cc, "arch": cap.arch},
        )
        return
