"""The NFD worker config (nfd-worker.conf) as a ConfigMap holds it: its settings with the line of each key.

NFD's Helm chart (and the GPU and Network Operators' charts, which vendor it) render the worker config into a
ConfigMap key `nfd-worker.conf` that the worker mounts and reads with sigs.k8s.io/yaml:

    data:
      nfd-worker.conf: |-
        sources:
          pci:
            deviceClassWhitelist: ["02", "03"]
            deviceLabelFields: [vendor]

Every key is cited at the ConfigMap key's line, quoting the embedded line and its number inside the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from gpusleuth.model.evidence import Evidence
from gpusleuth.parsers.yamlsafe import AliasBomb, compose_one, node_paths

CONFIGMAP_KEY = "nfd-worker.conf"


@dataclass(frozen=True)
class NfdWorkerConfig:
    body: dict
    artifact: str
    line: int  # the ConfigMap key's line
    origin: str  # "ConfigMap ns/name, key nfd-worker.conf"
    texts: dict = field(default_factory=dict, hash=False)  # path -> "nfd-worker.conf line N: <the line>"

    def evidence(self, path: tuple) -> Evidence:
        """The line of the deepest known prefix of path, quoted from the embedded text."""
        for n in range(len(path), -1, -1):
            p = tuple(path[:n])
            if p in self.texts:
                return Evidence(self.artifact, self.line, self.texts[p])
        return Evidence(self.artifact, self.line, self.origin)


def from_text(text: str, artifact: str, *, line: int, origin: str) -> NfdWorkerConfig | None:
    """The worker config in text, or None when it is not a YAML mapping (an empty key, a broken paste)."""
    try:
        node, body = compose_one(text)
    except (AliasBomb, yaml.YAMLError):
        return None
    if node is None or not isinstance(body, dict):
        return None
    src = text.split("\n")
    texts = {p: f"{CONFIGMAP_KEY} line {n + 1}: {src[n].strip()}" for p, n in node_paths(node) if n < len(src)}
    return NfdWorkerConfig(body, artifact, line, origin, texts)
