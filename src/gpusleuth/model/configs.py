"""Configuration files of the GPU stack that are not engine configs: CDI specs and the device plugin's
config (also read by GPU feature discovery)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusleuth.model.evidence import Evidence


@dataclass(frozen=True)
class CdiSpec:
    """One CDI spec file (/etc/cdi or /var/run/cdi, YAML or JSON) as the container engine reads it."""

    artifact: str
    path: str | None  # the host path when the artifact says it (`cat /var/run/cdi/nvidia.yaml`)
    kind: str | None  # nvidia.com/gpu
    cdi_version: str | None
    devices: tuple[str, ...]  # device names: "0", "GPU-…", "all", MIG names
    host_paths: tuple[tuple[str, Evidence], ...]  # every mounted hostPath, with its line
    device_nodes: tuple[tuple[str, Evidence], ...]  # every deviceNodes path
    evidence: Evidence | None = None  # the cdiVersion / kind line

    @property
    def where(self) -> str:
        return self.path or self.artifact


@dataclass(frozen=True)
class ConfigKey:
    """A key as written in a config file, with the dotted path it sits at and its line."""

    path: str  # "flags.renameByDefault", "sharing.timeSlicing.resources.0.replicas"
    value: object
    evidence: Evidence


@dataclass(frozen=True)
class DevicePluginConfig:
    """One device plugin / GFD config (a file, or one entry of the ConfigMap the node label selects)."""

    artifact: str
    name: str | None  # the ConfigMap data key ("any", "tesla-t4", "a100-80gb"), None for a plain file
    configmap: str | None  # the ConfigMap's name when the artifact is one
    body: dict = field(hash=False)
    keys: tuple[ConfigKey, ...] = ()  # every key in document order
    error: str | None = None  # YAML that does not parse
    evidence: Evidence | None = None  # where the entry starts

    def key(self, path: str) -> ConfigKey | None:
        return next((k for k in self.keys if k.path == path), None)
