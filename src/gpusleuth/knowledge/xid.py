"""The Xid catalogue (knowledge/xid.toml) as typed rows, and the remediation ladder."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from gpusleuth.knowledge import table


@dataclass(frozen=True, slots=True)
class Xid:
    code: int
    name: str
    mnemonic: str
    category: str  # application | driver | hardware | firmware | thermal | memory | nvlink | fabric | unknown
    layer: str
    severity: str
    meaning: str
    immediate_action: str
    investigation: str
    catalog_immediate: str = ""
    restart_workload: bool | None = None
    reset_gpu: bool | None = None
    reset_timing: str | None = None  # before-restart | when-convenient
    drain: bool | None = None
    reboot_node: bool | None = None
    rma_candidate: bool | None = None
    rma_rule: str | None = None
    follow_on_of: tuple[int, ...] = ()

    @property
    def is_application(self) -> bool:
        return self.category == "application"


@dataclass(frozen=True, slots=True)
class LadderStep:
    order: int
    scope: str
    action: str
    applies_when: str
    commands: tuple[str, ...]


@cache
def catalog() -> dict[int, Xid]:
    out = {}
    for row in table("xid")["xid"]:
        out[row["code"]] = Xid(
            code=row["code"], name=row["name"], mnemonic=row.get("mnemonic", ""), category=row.get("category", "unknown"),
            layer=row.get("layer", "hardware"), severity=row.get("severity", "warning"), meaning=row.get("meaning", ""),
            immediate_action=row.get("immediate_action", ""), investigation=row.get("investigation", ""),
            catalog_immediate=row.get("catalog_immediate", ""), restart_workload=row.get("restart_workload"),
            reset_gpu=row.get("reset_gpu"), reset_timing=row.get("reset_timing"), drain=row.get("drain"),
            reboot_node=row.get("reboot_node"), rma_candidate=row.get("rma_candidate"), rma_rule=row.get("rma_rule"),
            follow_on_of=tuple(row.get("follow_on_of", ())),
        )
    return out


def xid(code: int) -> Xid | None:
    return catalog().get(code)


@cache
def unused() -> dict[int, str]:
    """Codes NVIDIA lists as unused on current GPUs: code -> mnemonic."""
    return {int(k): v for k, v in table("xid").get("unused", {}).items()}


@cache
def ladder() -> tuple[LadderStep, ...]:
    steps = table("xid").get("ladder", {}).get("step", [])
    return tuple(
        LadderStep(s["order"], s["scope"], s["action"], s.get("applies_when", ""), tuple(s.get("commands", ())))
        for s in sorted(steps, key=lambda s: s["order"])
    )
