"""Firmware: the GSP (GPU System Processor) firmware and the VBIOS (FW0xx)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.gpu_common import (
    cordon_drain,
    diag_before_trust,
    gpu_for,
    gpu_target,
    reset_gpu,
    xid_groups,
    xid_hit,
)
from gpusleuth.facts import GpuInventory, Logs
from gpusleuth.facts.gpus import KernelEvents
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.gpu import short_pci

_GSP_WORKAROUND = Fix(
    FixKind.WORKAROUND,
    "If it keeps recurring on this driver, some teams disable GSP firmware: proprietary kernel module only (the open "
    "modules and Grace Hopper/Blackwell require GSP), set as a module option and applied by a driver reload.",
    ("echo 'options nvidia NVreg_EnableGpuFirmware=0' > /etc/modprobe.d/nvidia-gsp.conf",),
)
_UPGRADE = Fix(FixKind.PERMANENT, "Check the driver branch's release notes for GSP timeout fixes and move to the newest driver of "
               "the branch (or the current LTS).", ())


@check("FW001", "gsp-firmware-timeout")
def gsp_timeout(kernel: KernelEvents, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """The GPU's GSP firmware stopped answering (Xid 119 RPC timeout, Xid 120 GSP error, NVRM GSP timeouts).

    What it does: finds Xid 119/120 per GPU (unless they follow an Xid 79 in the same burst, where they are a
    consequence of the lost GPU) and the NVRM GSP timeout / heartbeat lines that come without an Xid.
    Why it matters: while the GSP hangs the GPU "hangs for no visible reason": every RM call (CUDA context,
    nvidia-smi, the device plugin's health check) times out.
    How to fix: reset the GPU (power-cycle the node if it persists); take the newest driver of the branch;
    disabling GSP firmware is a workaround on the proprietary module only.
    References: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html; https://github.com/NVIDIA/open-gpu-kernel-modules/issues/446
    """
    hits = []
    covered = set()
    for (node, pci, code), group in xid_groups(kernel, {119, 120}).items():
        hit = xid_hit(code, node, pci, group, inventory)
        hits.append(replace(hit, fixes=hit.fixes + (_GSP_WORKAROUND, _UPGRADE)))
        covered.add((node, pci))
    loose: dict[tuple, list] = {}
    for e in kernel.of_kind("gsp-timeout"):
        if (e.node, e.pci) not in covered and not any(b.node == e.node and 79 in b.codes() for b in kernel.bursts):
            loose.setdefault((e.node, e.pci), []).append(e)
    for (node, pci), events in loose.items():
        gpu = gpu_for(inventory, node, pci)
        target = gpu_target(gpu, pci)
        hits.append(Hit(
            title=f"GSP firmware timeouts on GPU {target}",
            explanation=f"The driver logged {len(events)} GSP RPC timeout / heartbeat line(s) without an Xid: the GPU's firmware "
                        "processor did not answer. RM calls on this GPU stall or fail until it is reset.",
            severity=Severity.ERROR, role=Role.ROOT_CAUSE, evidence=tuple(e.evidence for e in events[:4]), node=node,
            component=f"gpu:{pci}" if pci else "gpu",
            fixes=(cordon_drain(node, "the GPU's firmware is hung"), reset_gpu(node, target), diag_before_trust(node), _GSP_WORKAROUND, _UPGRADE),
            confidence=0.75, facts={"lines": len(events), "pci": pci},
        ))
    return hits


INFOROM_SIGNATURE = "nvidia-smi.inforom-corrupted"


@check("FW101", "inforom-corrupted")
def inforom_corrupted(inventory: GpuInventory | None = None, logs: Logs | None = None) -> Iterable[Hit]:
    """nvidia-smi reports a corrupted infoROM on a GPU.

    What it does: Finds `WARNING: infoROM is corrupted at gpu <pci>` in nvidia-smi output (pasted, from the
    node probe, or inside the driver validator's and driver container's logs), one finding per GPU.
    Why it matters: the infoROM holds the GPU's configuration and error records; with it corrupted
    nvidia-smi exits with code 14, ECC and page-retirement records may be lost, and the GPU Operator's
    driver validation (which needs nvidia-smi to succeed) can stay blocked although the GPU computes.
    How to fix: reset the GPU or power-cycle the node; if the warning persists, have the vendor reflash the
    infoROM/VBIOS or replace the board.
    References: https://github.com/NVIDIA/gpu-operator/issues/20; https://github.com/NVIDIA/gpu-operator/issues/285; https://github.com/NVIDIA/DCGM/issues/2
    """
    seen: dict[tuple, list[Evidence]] = defaultdict(list)
    for ng in inventory.nodes if inventory else []:
        for e in ng.errors:
            if e.kind == "inforom-corrupted":
                seen[(ng.node, short_pci(e.pci_bus_id))].append(e.evidence)
    for m in logs.matches(INFOROM_SIGNATURE) if logs else []:
        pci = m.line.message.rsplit(" ", 1)[-1]
        seen[(m.log.node, short_pci(pci))].append(m.line.evidence())
    for (node, pci), evidence in seen.items():
        where = f" on {node}" if node else ""
        yield Hit(
            title=f"infoROM corrupted on GPU {pci}{where}",
            explanation=(f"nvidia-smi says the infoROM of GPU {pci}{where} failed its checksum ({evidence[0].cite() if evidence[0] else ''}). "
                         "nvidia-smi exits 14 on such a GPU, which validators treat as a failure, and the GPU's stored error records "
                         "cannot be trusted."),
            severity=Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(
                Fix(FixKind.IMMEDIATE, "Drain the node, then reset the GPU (no process may use it) or power-cycle the node.",
                    (f"kubectl drain {node} --ignore-daemonsets --delete-emptydir-data",) if node else ()),
                Fix(FixKind.PERMANENT, "If the warning comes back after a power cycle, open a hardware case: the infoROM needs reflashing "
                    "by the vendor or the board needs replacing."),
            ),
            node=node,
            component=f"gpu {pci}",
            confidence=0.8,
            facts={"pci": pci},
        )
