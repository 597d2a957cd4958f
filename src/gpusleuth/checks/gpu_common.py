"""What the GPU checks share: the remediation ladder as fixes with real names, and Xid triage.

Not a check module (nothing here is registered). The ladder (knowledge/xid.toml [ladder]) is NVIDIA's Xid triage order:
restart the app; reload the driver, reset the GPU or reboot the node; ``dcgmi diag -r 3`` before trusting a
recovered node; cordon and RMA if it fails.
"""

from __future__ import annotations

import re
from collections import Counter

from gpusleuth.facts.gpus import GpuInventory, KernelEvents, XidBurst
from gpusleuth.knowledge import xid as xid_table
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.gpu import GpuDevice, XidEvent

UNKNOWN_NODE = "<node>"
_RECOVERY = re.compile(r"recovery action changed from .*? to 0x[0-9a-fA-F]+ \((?P<action>[^)]+)\)")


def _node(node: str | None) -> tuple[str, str]:
    """(name for commands, note for the description)."""
    if node:
        return node, ""
    return UNKNOWN_NODE, " (the node name is not in the artifacts: replace <node>)"


def gpu_target(gpu: GpuDevice | None, pci: str | None) -> str:
    """What `nvidia-smi -i` should target: the index when known, else the PCI bus id (nvidia-smi takes both)."""
    if gpu is not None and gpu.index is not None:
        return str(gpu.index)
    if gpu is not None and gpu.pci_bus_id:
        return gpu.pci_bus_id
    return pci or "<gpu>"


def cordon_drain(node: str | None, why: str) -> Fix:
    name, note = _node(node)
    return Fix(FixKind.IMMEDIATE, f"Cordon and drain {name} so nothing new lands on it: {why}{note}.",
               (f"kubectl cordon {name}", f"kubectl drain {name} --ignore-daemonsets --delete-emptydir-data"))


def reset_gpu(node: str | None, target: str, when: str = "before-restart") -> Fix:
    name, note = _node(node)
    if when == "when-convenient":
        return Fix(FixKind.WORKAROUND,
                   f"Let running work finish or move it, then reset GPU {target} on {name} at a convenient time{note} "
                   "(nvidia-smi refuses while processes hold it; on NVSwitch systems reset the whole baseboard).",
                   (f"nvidia-smi -r -i {target}",))
    return Fix(FixKind.IMMEDIATE,
               f"Reset GPU {target} on {name} before anything runs on it again{note}; if the reset fails "
               "(processes still hold it, or the GPU does not answer), reboot the node.",
               (f"nvidia-smi -r -i {target}",))


def reboot_node(node: str | None, why: str) -> Fix:
    name, note = _node(node)
    return Fix(FixKind.IMMEDIATE, f"Reboot (power-cycle) {name}: {why}{note}.", ("systemctl reboot",))


def diag_before_trust(node: str | None) -> Fix:
    name, note = _node(node)
    return Fix(FixKind.PERMANENT,
               f"Before trusting {name} again run the long DCGM diagnostic (about 12-15 minutes: memory bandwidth, "
               f"PCIe, NVLink, thermals under load) and uncordon only if it passes{note}.",
               ("dcgmi diag -r 3", f"kubectl uncordon {name}"))


def rma(node: str | None, target: str, rule: str, met: bool) -> Fix:
    """The last rung: the card goes back. ``met``: the rule is already met by the evidence, not just possible."""
    name, note = _node(node)
    head = f"RMA candidate now ({rule})" if met else f"If it recurs ({rule}), the card is an RMA candidate"
    return Fix(FixKind.PERMANENT, f"{head}: keep {name} cordoned, collect nvidia-bug-report.sh and open a hardware case for GPU {target}{note}.",
               (f"kubectl cordon {name}", "nvidia-bug-report.sh"))


# ----------------------------------------------------------------------------------------------- Xids


def gpu_for(inventory: GpuInventory | None, node: str | None, pci: str | None) -> GpuDevice | None:
    if inventory is None or not pci:
        return None
    ng = inventory.for_node(node)
    gpu = ng.gpu_by_pci(pci) if ng else None
    if gpu is None:  # a kernel log without a node name, next to an nvidia-smi that has one (or the reverse)
        matches = [g for n in inventory.nodes for g in [n.gpu_by_pci(pci)] if g is not None]
        gpu = matches[0] if len(matches) == 1 else None
    return gpu


def _where(node: str | None, pci: str | None, gpu: GpuDevice | None) -> str:
    what = f"GPU {gpu.index} (PCI {pci})" if gpu is not None and gpu.index is not None else f"GPU at PCI {pci or '?'}"
    return what


def xid_groups(kernel: KernelEvents, codes: set[int]) -> dict[tuple, list[tuple[XidBurst, XidEvent]]]:
    """(node, pci, code) -> [(burst, first primary event of that code in the burst)], bursts in order."""
    out: dict[tuple, list[tuple[XidBurst, XidEvent]]] = {}
    for b in kernel.bursts:
        for code in dict.fromkeys(e.code for e in b.primaries() if e.code in codes):
            first = next(e for e in b.primaries() if e.code == code)
            out.setdefault((b.node, b.pci, code), []).append((b, first))
    return out


def follow_on_summary(bursts: list[XidBurst], root: int) -> tuple[str, list[Evidence], list[int]]:
    """"3 later Xids (119 x2, 154) follow from it" with their evidence."""
    evs, codes = [], []
    for b in bursts:
        for i, e in enumerate(b.events):
            if b.follow_ons.get(i) == root:
                codes.append(e.code)
                evs.append(e.evidence)
    if not codes:
        return "", [], []
    counts = Counter(codes)
    listed = ", ".join(f"{c} x{n}" if n > 1 else str(c) for c, n in sorted(counts.items()))
    return f" {len(codes)} later Xid(s) on the same GPU ({listed}) are attributed to it as follow-ons.", evs[:4], sorted(counts)


def xid_hit(code: int, node: str | None, pci: str | None, group: list[tuple[XidBurst, XidEvent]],
            inventory: GpuInventory | None, extra_evidence: tuple[Evidence, ...] = (), role: Role = Role.ROOT_CAUSE) -> Hit:
    """One finding for one Xid code on one GPU, with the table's meaning, action and the ladder as fixes."""
    row = xid_table.xid(code)
    gpu = gpu_for(inventory, node, pci)
    target = gpu_target(gpu, pci)
    where = _where(node, pci, gpu)
    bursts = [b for b, _ in group]
    firsts = [e for _, e in group]
    lines = [e for b in bursts for e in b.events if e.code == code]
    total = _occurrences(lines)
    follow_text, follow_ev, follow_codes = follow_on_summary(bursts, code)
    name = row.name if row else "unknown Xid"
    about = [f"{len(lines)} kernel log lines" if len(lines) > total else "", _processes(lines)]
    times = "once" if total == 1 else f"{total} times in {len(bursts)} separate burst(s)"
    proc = f" ({'; '.join(a for a in about if a)})" if any(about) else ""
    explanation = (
        f"Xid {code}, {name}: {row.meaning if row else 'not in the catalogue.'} Seen {times}{proc}.{follow_text} "
        f"Immediate action: {row.immediate_action if row else 'see the NVIDIA Xid catalogue.'}"
    )
    recovery = [m.group("action") for b in bursts for e in b.events if e.code == 154 and (m := _RECOVERY.search(e.message))]
    if recovery:
        explanation += f" The driver's own verdict (Xid 154): {recovery[-1]}."
    if row and row.investigation:
        explanation += f" Investigation: {row.investigation}"
    # every line of this Xid is evidence (an Xid 13 prints its exception, ESR and channel on three), so none of
    # them is left for the accounting to call unexplained; the GPU's own line comes before the repeats
    evidence = [firsts[0].evidence, *follow_ev, *extra_evidence, *(e.evidence for e in firsts[1:3])]
    if gpu is not None:
        evidence.append(gpu.ev("gpu"))
    evidence = tuple(dict.fromkeys([*evidence, *(e.evidence for e in lines)]))
    return Hit(
        title=f"Xid {code} ({name}) on {where}",
        explanation=explanation,
        severity=Severity(row.severity) if row else Severity.WARNING,
        role=role,
        evidence=evidence,
        fixes=xid_fixes(code, node, target, len(bursts)),
        node=node,
        component=f"gpu:{pci}" if pci else "gpu",
        confidence=0.9 if firsts[0].source == "kernel" else 0.7,
        facts={"xid": code, "pci": pci, "gpu_index": gpu.index if gpu else None, "occurrences": total,
               "bursts": len(bursts), "follow_on_xids": follow_codes, "source": firsts[0].source},
    )


def _occurrences(events: list[XidEvent]) -> int:
    """Faults, not lines: one Xid 13 prints its warp exception, ESR registers and channel as lines within the
    same second, only one of them with the pid. A line starts a new fault when its time is more than a second
    after the fault's first line, or it names another pid; without times every line counts."""
    count, start, pid = 0, None, None
    for e in events:
        t = e.time.timestamp() if e.time is not None else e.elapsed
        if t is None or start is None or t - start > 1.0 or (e.pid and pid and e.pid != pid):
            count, start, pid = count + 1, t, e.pid
        else:
            pid = pid or e.pid
    return count


def _processes(events: list[XidEvent]) -> str:
    """"process python3, pids 715, 767": who hit the Xid, when the lines say."""
    seen: dict[str, list[str]] = {}
    for e in events:
        if e.process and e.process != "<unknown>" and str(e.pid) not in seen.get(e.process, []):
            seen.setdefault(e.process, []).append(str(e.pid))
    if not seen:
        return ""
    parts = [f"{name}, pid{'s' if len(pids) > 1 else ''} {', '.join(pids[:4])}{' and more' if len(pids) > 4 else ''}"
             for name, pids in list(seen.items())[:3]]
    return f"process{'es' if len(parts) > 1 else ''} {'; '.join(parts)}"


def xid_fixes(code: int, node: str | None, target: str, bursts: int) -> tuple[Fix, ...]:
    """The ladder for this code, from the table's flags: restart, drain, reset (when), reboot, diag, RMA."""
    row = xid_table.xid(code)
    if row is None:
        return (diag_before_trust(node),)
    fixes: list[Fix] = []
    if row.is_application:
        fixes.append(Fix(FixKind.IMMEDIATE,
                         "Restart the workload that hit it and look at the model/code, not the card (the GPU stays usable). "
                         "The pid and process name in the Xid line identify it; the pod is the one running that process on this GPU.", ()))
        if bursts > 1:
            fixes.append(Fix(FixKind.PERMANENT,
                             f"It repeated in {bursts} bursts: if different applications hit it on this GPU, suspect the "
                             "hardware and run the long diagnostic.", ("dcgmi diag -r 3",)))
        return tuple(fixes)
    if row.restart_workload:
        fixes.append(Fix(FixKind.IMMEDIATE, "Restart the affected workload (it has been torn down or got corrupted results).", ()))
    if row.drain or row.reboot_node:
        fixes.append(cordon_drain(node, f"Xid {code} needs the GPU (or the node) reset"))
    if row.reboot_node:
        fixes.append(reboot_node(node, f"Xid {code}: the GPU is gone until the node is reset"))
    elif row.reset_gpu:
        fixes.append(reset_gpu(node, target, row.reset_timing or "before-restart"))
    if row.reset_gpu or row.reboot_node or row.category in ("memory", "hardware", "firmware", "nvlink", "fabric", "thermal"):
        fixes.append(diag_before_trust(node))
    if row.rma_candidate and row.rma_rule:
        repeated = bursts > 1
        rule = row.rma_rule + (f"; seen in {bursts} separate bursts" if repeated else "")
        fixes.append(rma(node, target, rule, met=repeated))
    return tuple(fixes)
