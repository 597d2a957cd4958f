"""Firmware layer: what nvidia-smi says about a GPU's own firmware storage (infoROM)."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.facts import GpuInventory, Logs
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.gpu import short_pci

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
