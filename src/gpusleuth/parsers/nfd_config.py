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
The GPU and Network Operators' Helm values set the same config as `node-feature-discovery.worker.config`
(a mapping in NFD's newer charts, the file's text in older ones): `from_values` reads that.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
    lines: dict = field(default_factory=dict, hash=False)  # path -> its own line, when the config is written as YAML in place
    prefix: str = ""  # where the mapping sits in its document (Helm values: node-feature-discovery.worker.config)

    def evidence(self, path: tuple) -> Evidence:
        """The line of the deepest known prefix of path, quoted from the embedded text."""
        for n in range(len(path), -1, -1):
            p = tuple(path[:n])
            if p in self.texts:
                return Evidence(self.artifact, self.lines.get(p, self.line), self.texts[p])
        return Evidence(self.artifact, self.line, self.origin)


def from_values(value, artifact: str, *, line: int | None, key_lines: dict, prefix: str, origin: str) -> NfdWorkerConfig | None:
    """The worker config a Helm chart's `worker.config` holds: a mapping (each key cited at its own line in
    the values, ``key_lines`` by dotted path under ``prefix``) or the text of nfd-worker.conf."""
    if isinstance(value, str):
        return from_text(value, artifact, line=line or 0, origin=origin)
    if not isinstance(value, dict):
        return None
    lines, texts = {}, {}
    stack = [((), value)]
    while stack:
        path, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            p = path + (k,)
            at = key_lines.get(".".join([prefix, *map(str, p)]))
            if at is not None:
                lines[p] = at
                texts[p] = f"{prefix}.{'.'.join(map(str, p))}" + (f": {v}" if not isinstance(v, (dict, list)) else "")
            if len(p) < 12:
                stack.append((p, v))
    return NfdWorkerConfig(value, artifact, line or 0, origin, texts, lines, prefix)


def from_text(text: str, artifact: str, *, line: int, origin: str) -> NfdWorkerConfig | None:
    """The worker config in text, or None when it is not a YAML mapping (an empty key, a broken paste)."""
    import yaml  # loaded with the first YAML document, not at start-up

    try:
        node, body = compose_one(text)
    except (AliasBomb, yaml.YAMLError):
        return None
    if node is None or not isinstance(body, dict):
        return None
    src = text.split("\n")
    texts = {p: f"{CONFIGMAP_KEY} line {n + 1}: {src[n].strip()}" for p, n in node_paths(node) if n < len(src)}
    return NfdWorkerConfig(body, artifact, line, origin, texts)
