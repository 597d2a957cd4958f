"""Driver branches, CUDA minimums, compatibility rules and traps (knowledge/driver_branches.toml)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import cache

from gpusleuth.knowledge import table

_NUM = re.compile(r"\d+")


def vtuple(version: str) -> tuple[int, ...]:
    """"570.124.06" -> (570, 124, 6); compare versions numerically, component by component."""
    return tuple(int(x) for x in _NUM.findall(version or ""))


def cuda_tuple(version: str) -> tuple[int, int]:
    parts = vtuple(version)
    return (parts[0], parts[1] if len(parts) > 1 else 0) if parts else (0, 0)


@dataclass(frozen=True, slots=True)
class Branch:
    branch: str  # "R535"
    type: str  # LTS | production | new-feature
    eol: date | None
    max_cuda: str
    max_cuda_major: int
    verified: bool
    note: str = ""


@cache
def branches() -> dict[str, Branch]:
    out = {}
    for b in table("driver_branches")["branch"]:
        eol = b.get("eol")
        out[b["branch"]] = Branch(
            b["branch"], b["type"], eol if isinstance(eol, date) or eol is None else date.fromisoformat(str(eol)),
            b["max_cuda"], b["max_cuda_major"], b.get("verified", False), b.get("note", ""),
        )
    return out


def branch_of(driver_version: str) -> Branch | None:
    """The branch row of a driver version ("535.183.01" -> R535); None for a branch the table lacks."""
    parts = vtuple(driver_version)
    return branches().get(f"R{parts[0]}") if parts else None


def minor_compat_min(cuda_major: int) -> str | None:
    """The lowest driver that runs every minor release of this CUDA major (minor-version compatibility)."""
    row = next((r for r in table("driver_branches")["minor_version_compat"] if r["cuda_major"] == cuda_major), None)
    return row["min_driver"] if row else None


def minor_compat_limitation(cuda_major: int) -> str:
    row = next((r for r in table("driver_branches")["minor_version_compat"] if r["cuda_major"] == cuda_major), None)
    return row["limitation"] if row else ""


def forward_compat() -> dict:
    return table("driver_branches")["forward_compat"]


def trap(trap_id: str) -> dict:
    return next(t for t in table("driver_branches")["trap"] if t["id"] == trap_id)
