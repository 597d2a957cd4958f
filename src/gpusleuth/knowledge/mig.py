"""MIG profiles per GPU model and the isolation each sharing mode gives (knowledge/mig_profiles.toml)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from gpusleuth.knowledge import table


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    compute_slices: int
    memory_slices: int
    max_instances: int
    media_extensions: bool


@dataclass(frozen=True, slots=True)
class MigModel:
    model: str
    patterns: tuple[re.Pattern, ...]
    memory_gb: int
    compute_unit: int  # 7 (sevenths) or 4 (quarters)
    memory_unit: int  # 8 (eighths) or 4
    profiles: dict[str, Profile]


@cache
def models() -> tuple[MigModel, ...]:
    return tuple(
        MigModel(
            g["model"], tuple(re.compile(p) for p in g["match"]), g["memory_gb"], g["compute_unit"], g["memory_unit"],
            {p["name"]: Profile(p["name"], p["compute_slices"], p["memory_slices"], p["max_instances"], p["media_extensions"]) for p in g["profiles"]},
        )
        for g in table("mig_profiles")["gpu"]
    )


def model_for(product: str | None) -> MigModel | None:
    """The MIG row of a product name ("NVIDIA H100 80GB HBM3", GFD's "NVIDIA-H100-80GB-HBM3", or "H100-80GB")."""
    if not product:
        return None
    for m in models():
        if product == m.model or any(p.search(product) for p in m.patterns):
            return m
    return None


def not_mig_capable(product: str | None) -> bool:
    if not product:
        return False
    names = table("mig_profiles")["not_mig_capable"]["models"]
    return any(re.search(rf"(^|[^A-Za-z0-9]){re.escape(n)}($|[^A-Za-z0-9])", product) for n in names)


@cache
def isolation() -> dict[str, dict]:
    """The isolation table: mode -> memory/fault isolation, concurrency, use_for, caveats."""
    return {row["mode"]: row for row in table("mig_profiles")["isolation"]}


def isolation_text(mode: str) -> str:
    row = isolation()[mode]
    return (f"{mode}: memory isolation {row['memory_isolation']}, fault isolation {row['fault_isolation']}, "
            f"concurrency {row['concurrency']}; use for {row['use_for']}")
