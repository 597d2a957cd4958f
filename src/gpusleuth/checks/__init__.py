"""The check catalogue. One module per layer; add a check to the module of its layer and list new
modules here. ``gpusleuth checks`` and docs/checks/ are generated from this list.
"""

from __future__ import annotations

from gpusleuth.checks import container_runtime
from gpusleuth.checks import container_toolkit
from gpusleuth.checks.base import Check, check
from gpusleuth.checks import kernel_driver  # noqa: E402
from gpusleuth.checks import operator  # noqa: E402
from gpusleuth.checks import device_plugin  # noqa: E402
from gpusleuth.checks import scheduler  # noqa: E402
from gpusleuth.checks import cuda_runtime, firmware, gpu_sharing, hardware, userspace_driver, workload  # noqa: E402
from gpusleuth.checks import classes  # noqa: E402
from gpusleuth.checks import allocation, feature_discovery, gpu_firmware, gpu_injection, host_state, operator_state, scheduling  # noqa: E402
from gpusleuth.checks import ordering  # noqa: E402
from gpusleuth.checks import host_kernel  # noqa: E402

# Explicit, greppable registry: every module whose Check objects are part of the catalogue.
_MODULES = (
    container_toolkit,
    container_runtime,
    kernel_driver,
    operator,
    device_plugin,
    scheduler,
    hardware,
    firmware,
    userspace_driver,
    cuda_runtime,
    gpu_sharing,
    workload,
    classes,
    allocation,
    feature_discovery,
    gpu_firmware,
    gpu_injection,
    host_state,
    operator_state,
    scheduling,
    ordering,
    host_kernel,
)


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


def get_check(code: str) -> Check | None:
    code = code.upper()
    return next((c for c in all_checks() if c.code == code or c.name == code.lower()), None)


__all__ = ["Check", "all_checks", "check", "get_check"]
