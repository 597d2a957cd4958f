"""Clock event (throttle) reasons from knowledge/clock_reasons.toml: decode a bitmask, a -q label, a tag."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from gpusleuth.knowledge import table


@dataclass(frozen=True, slots=True)
class ClockReason:
    id: str
    bit: int
    label: str
    kind: str  # idle | config | power | thermal | hardware
    severity: str
    meaning: str


@cache
def reasons() -> tuple[ClockReason, ...]:
    return tuple(
        ClockReason(r["id"], int(r["bit"]), r["label"], r["kind"], r["severity"], r["meaning"])
        for r in table("clock_reasons")["reason"]
    )


@cache
def by_id() -> dict[str, ClockReason]:
    return {r.id: r for r in reasons()}


@cache
def _by_label() -> dict[str, ClockReason]:
    return {r.label.lower(): r for r in reasons()}


def decode(mask: int) -> tuple[str, ...]:
    """Active reason ids in a bitmask, lowest bit first; unknown bits become "bit_0x..."."""
    out = [r.id for r in reasons() if mask & r.bit]
    unknown = mask & ~sum(r.bit for r in reasons())
    bit = 1
    while unknown >= bit:
        if unknown & bit:
            out.append(f"bit_{bit:#x}")
        bit <<= 1
    return tuple(out)


def from_label(label: str) -> str | None:
    """`nvidia-smi -q` row name ("SW Power Cap", "Display Clock Setting") -> reason id."""
    r = _by_label().get(label.strip().lower())
    return r.id if r else None
