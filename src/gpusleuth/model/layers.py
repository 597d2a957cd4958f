"""The twelve layers between the silicon and a pod: the vocabulary of every finding.

Ordered bottom-up; ``Layer.rank`` is what "debug from the bottom up" sorts by.
"""

from __future__ import annotations

from enum import Enum


class Layer(str, Enum):
    HARDWARE = "hardware"
    FIRMWARE = "firmware"
    KERNEL_DRIVER = "kernel-driver"
    USERSPACE_DRIVER = "userspace-driver"
    CUDA_RUNTIME = "cuda-runtime"
    CONTAINER_TOOLKIT = "container-toolkit"
    CONTAINER_RUNTIME = "container-runtime"
    DEVICE_PLUGIN = "device-plugin"
    FEATURE_DISCOVERY = "feature-discovery"
    OPERATOR = "operator"
    SCHEDULER = "scheduler"
    WORKLOAD = "workload"

    @property
    def rank(self) -> int:
        return _ORDER.index(self)

    @property
    def prefix(self) -> str:
        """Two letters that start every check code on this layer (ruff-style stable codes)."""
        return _PREFIX[self]

    @classmethod
    def from_prefix(cls, code: str) -> "Layer | None":
        for layer, prefix in _PREFIX.items():
            if code.upper().startswith(prefix):
                return layer
        return None


_ORDER = list(Layer)
_PREFIX = {
    Layer.HARDWARE: "HW",
    Layer.FIRMWARE: "FW",
    Layer.KERNEL_DRIVER: "KD",
    Layer.USERSPACE_DRIVER: "UD",
    Layer.CUDA_RUNTIME: "CU",
    Layer.CONTAINER_TOOLKIT: "TK",
    Layer.CONTAINER_RUNTIME: "RT",
    Layer.DEVICE_PLUGIN: "DP",
    Layer.FEATURE_DISCOVERY: "FD",
    Layer.OPERATOR: "OP",
    Layer.SCHEDULER: "SC",
    Layer.WORKLOAD: "WL",
}
