"""mig-parted configs (`version: v1` + `mig-configs:`) and NVIDIA device-plugin configs (`version: v1` +
`sharing:` / `flags:`) as files, or as YAML text taken out of a ConfigMap (facts/sharing.py).

The line of every key comes from PyYAML's node marks, so checks can cite the offending entry.
"""

from __future__ import annotations

from typing import Iterable

from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.model.sharing import SharingConfig
from gpusleuth.parsers.base import NO, SURE, parser
from gpusleuth.parsers.yamlsafe import AliasBomb, compose_one, node_paths

_PLUGIN_KEYS = ("sharing", "flags", "timeSlicing", "mps", "resources")


def classify(body) -> str | None:
    """mig-parted | device-plugin | None, from a parsed YAML body."""
    if not isinstance(body, dict):
        return None
    if "mig-configs" in body:
        return "mig-parted"
    if "version" in body and any(k in body for k in _PLUGIN_KEYS) and "apiVersion" not in body:
        return "device-plugin"
    return None


def _paths(node, path: tuple, out: dict) -> None:
    """Key and item lines under ``node``, each node walked once (an alias adds its key's line only)."""
    for p, line in node_paths(node):
        out[path + p] = line


def from_text(text: str, artifact: str, *, first_line: int = 1, origin: str | None = None,
              anchor: int | None = None) -> SharingConfig | None:
    """A SharingConfig from YAML text, or None when it is not one. ``anchor``: cite every key at this line
    (the ConfigMap key holding the text), quoting the embedded line and its number inside the text."""
    import yaml
    try:
        node, body = compose_one(text)
    except AliasBomb:
        if origin is None:
            raise
        return None  # text inside a ConfigMap: not a sharing config anyone could apply
    except yaml.YAMLError as exc:
        if origin is None:
            mark = getattr(exc, "problem_mark", None)
            raise UnusableData(f"YAML error at line {first_line + mark.line if mark else '?'}: {getattr(exc, 'problem', exc)}") from None
        return None
    kind = classify(body)
    if kind is None or node is None:
        return None
    rel: dict[tuple, int] = {(): node.start_mark.line}
    _paths(node, (), rel)
    src = text.split("\n")
    texts = {p: (f"{origin.rsplit(' ', 1)[-1]} line {n + 1}: " if anchor is not None else "") + src[n].strip() for p, n in rel.items() if n < len(src)}
    lines = {p: anchor if anchor is not None else first_line + n for p, n in rel.items()}
    return SharingConfig(kind, body, artifact, anchor if anchor is not None else first_line, origin, lines, texts)


def _sniff(doc: Document) -> int:
    head = doc.head(40)
    top = {ln.split(":", 1)[0].strip() for ln in head if ln[:1].isalpha() and ":" in ln}
    if "mig-configs" in top:
        return SURE
    if "version" in top and top & set(_PLUGIN_KEYS) and "apiVersion" not in top and "kind" not in top:
        return SURE
    return NO


@parser("gpu-sharing.config", "mig-parted config (mig-configs) or device-plugin config (sharing.timeSlicing / mps)", sniff=_sniff)
def parse(doc: Document) -> Iterable[SharingConfig]:
    cfg = from_text(doc.text, doc.artifact, first_line=doc.first_line)
    if cfg is None:
        raise UnusableData("looks like a mig-parted or device-plugin config but has neither mig-configs nor sharing/flags")
    yield cfg
