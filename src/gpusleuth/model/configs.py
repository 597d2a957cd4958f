"""Configuration files of the GPU stack that are not engine configs: CDI specs."""

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
    body: dict = field(default_factory=dict, hash=False, compare=False)  # the spec as read, for its schema check
    key_lines: dict = field(default_factory=dict, hash=False, compare=False)  # key path (tuple) -> Evidence of its line

    @property
    def where(self) -> str:
        return self.path or self.artifact
