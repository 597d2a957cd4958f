"""GPU sharing configurations: mig-parted's MIG geometries and the device plugin's time-slicing / MPS config.

They arrive as files or, more often, as YAML strings inside a ConfigMap; either way the body is kept with
the line of every key so a finding cites the exact entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusleuth.model.evidence import Evidence


@dataclass(frozen=True)
class SharingConfig:
    kind: str  # mig-parted | device-plugin
    body: dict = field(hash=False)
    artifact: str = ""
    line: int | None = None  # where the config (or the ConfigMap key holding it) starts
    origin: str | None = None  # "ConfigMap gpu-operator/default-mig-parted-config, key config.yaml"; None for a file
    lines: dict = field(default_factory=dict, hash=False)  # key path (tuple) -> line in the artifact
    texts: dict = field(default_factory=dict, hash=False)  # key path (tuple) -> the text of that line
    configmap: str | None = None  # the ConfigMap holding it (None for a file)
    namespace: str | None = None
    key: str | None = None  # its key in the ConfigMap: what config.default / the node label names

    @property
    def name(self) -> str:
        return self.origin or self.artifact

    def evidence(self, path: tuple) -> Evidence:
        """The line of the deepest known prefix of path (a missing key is cited at its parent)."""
        for n in range(len(path), -1, -1):
            p = tuple(path[:n])
            if p in self.lines:
                return Evidence(self.artifact, self.lines[p], self.texts.get(p, ""))
        return Evidence(self.artifact, self.line, self.name)
