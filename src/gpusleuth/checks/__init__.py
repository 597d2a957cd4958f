"""The check catalogue. One module per layer: add a check to the module of its layer (a failure class
told by one log line is a row in knowledge/failure_classes.toml instead). ``gpusleuth checks`` and
docs/checks/ are generated from this list.
"""

from __future__ import annotations

import importlib

from gpusleuth.checks.base import Check, check

# Explicit, greppable registry: every module whose Check objects are part of the catalogue. The layer
# modules come first, bottom-up; then the modules named for a mechanism their checks share across layers:
# the failure-class table (classes), GPU injection into containers (CU101, WL102), GPU sharing configs,
# the host's own state against the GPU stack, the happens-before rules of the timeline, and the accounting of
# every error line no other check explains (run last: it reads the others' findings).
MODULES = (
    "hardware",
    "firmware",
    "kernel_driver",
    "userspace_driver",
    "cuda_runtime",
    "container_toolkit",
    "container_runtime",
    "device_plugin",
    "feature_discovery",
    "operator",
    "scheduler",
    "workload",
    "classes",
    "gpu_injection",
    "gpu_sharing",
    "host_state",
    "ordering",
    "known_issues",
    "accounting",
)
_MODULES = tuple(importlib.import_module(f"gpusleuth.checks.{name}") for name in MODULES)


def all_checks() -> list[Check]:
    found: dict[str, Check] = {}
    for module in _MODULES:
        # decorated functions, plus the CHECKS a module builds from a table (checks/classes.py)
        for value in [*vars(module).values(), *getattr(module, "CHECKS", ())]:
            if isinstance(value, Check):
                if value.code in found and found[value.code] is not value:
                    raise RuntimeError(f"duplicate check code {value.code}")
                found[value.code] = value
    return sorted(found.values(), key=lambda c: (c.layer.rank, c.code))


# Codes are stable: a check that moves to another layer gets a code of that layer, and its old code keeps
# selecting, ignoring and explaining it (as ruff's rule redirects do). old code -> (new code, why it moved).
MOVED = {
    "UD101": ("RT112", "a container losing its GPU after a systemd reload is the device cgroup runc rewrites: a runtime fault "
                       "seen through NVML, not an NVML one"),
}


def resolve(code: str) -> str:
    """The current code of a code or prefix the user typed (an old code is redirected; anything else as typed)."""
    moved = MOVED.get(code.upper())
    return moved[0] if moved else code


def get_check(code: str) -> Check | None:
    code = resolve(code).upper()
    return next((c for c in all_checks() if c.code == code or c.name == code.lower()), None)


__all__ = ["MOVED", "Check", "all_checks", "check", "get_check", "resolve"]
