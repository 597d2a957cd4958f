"""Knowledge as data: TOML tables next to this file, loaded once, read by checks and views.

Tables: operands.toml (operand dependency graph), signatures.toml (log-line signatures), xid.toml,
driver_branches.toml, mig_profiles.toml, cuda_errors.toml (every CUDA error code), compute_capability.toml (GPU
model -> compute capability). Each file's header says what it holds and how to update it.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources


@cache
def table(name: str) -> dict:
    """The parsed TOML table knowledge/<name>.toml."""
    return tomllib.loads((resources.files("gpusleuth") / "knowledge" / f"{name}.toml").read_text(encoding="utf-8"))
