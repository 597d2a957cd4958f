"""The NVIDIA device plugin's config (also GPU feature discovery's): a plain file, or the ConfigMap whose
data entries the node label nvidia.com/device-plugin.config selects.

    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: time-slicing-config
    data:
      any: |-
        version: v1
        flags:
          migStrategy: none
        sharing:
          timeSlicing:
            resources:
            - name: nvidia.com/gpu
              replicas: 4

Every key keeps its dotted path and line, so a check can say which key sits where the plugin does not read
it (the plugin's YAML decoder ignores unknown keys without a word).
"""

from __future__ import annotations

import re
from typing import Iterable

import yaml

from gpusleuth.errors import UnusableData
from gpusleuth.model.configs import ConfigKey, DevicePluginConfig
from gpusleuth.model.document import Document
from gpusleuth.model.evidence import Evidence
from gpusleuth.parsers.base import LIKELY, NO, SURE, parser
from gpusleuth.parsers.helm import load_yaml_with_lines

_TOP = re.compile(r"^(?P<key>[A-Za-z][\w-]*):")
_SHARING_WORDS = re.compile(r"\b(?:timeSlicing|migStrategy|renameByDefault|failRequestsGreaterThanOne|deviceListStrategy|mps):")
_CONFIGMAP = re.compile(r"^\s*kind:\s*ConfigMap\s*$")
_BLOCK = re.compile(r"^(?P<indent>\s+)(?P<key>[\w.-]+):\s*[|>][-+]?\s*$")


def sniff(doc: Document) -> int:
    head = doc.head(80)
    if not any(_SHARING_WORDS.search(ln) for ln in doc.lines[:400]):
        return NO
    if any(_CONFIGMAP.match(ln) for ln in head):
        return SURE - 5
    tops = {m.group("key") for ln in head if (m := _TOP.match(ln))}
    if "version" in tops and tops & {"flags", "sharing", "resources"}:
        return LIKELY + 15
    if tops and tops <= {"version", "flags", "sharing", "resources", "imex"}:
        return LIKELY
    return NO


def _keys(node, lines: dict[str, int], artifact: str, src: list[str], offset: int, prefix: str = "") -> list[ConfigKey]:
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            line = lines.get(path)
            text = src[line - offset].strip() if line is not None and 0 <= line - offset < len(src) else f"{path}: {v!r}"
            out.append(ConfigKey(path, v, Evidence(artifact, line, text[:400])))
            out += _keys(v, lines, artifact, src, offset, path)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _keys(v, lines, artifact, src, offset, f"{prefix}.{i}")
    return out


def _entry(doc: Document, lines: list[str], first: int, name: str | None, configmap: str | None) -> DevicePluginConfig:
    start = Evidence(doc.artifact, first, (lines[0] if lines else "").strip()[:400])
    try:
        body, key_lines = load_yaml_with_lines(lines, first)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {first + mark.line}" if mark is not None else "somewhere"
        return DevicePluginConfig(doc.artifact, name, configmap, {}, (), f"not valid YAML ({where}): {getattr(exc, 'problem', exc)}", start)
    if not isinstance(body, dict):
        return DevicePluginConfig(doc.artifact, name, configmap, {}, (), "not a YAML mapping", start)
    return DevicePluginConfig(doc.artifact, name, configmap, body, tuple(_keys(body, key_lines, doc.artifact, lines, first)), None, start)


def _configmap_names(lines: tuple[str, ...]) -> list[str]:
    """metadata.name of every object in the document (kubectl -o yaml prints metadata after data)."""
    names = []
    for i, ln in enumerate(lines):
        if re.match(r"^\s*metadata:\s*$", ln):
            indent = len(ln) - len(ln.lstrip())
            for nxt in lines[i + 1:]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                m = re.match(r"^\s+name:\s*[\"']?(?P<name>[\w.-]+)", nxt)
                if m and len(nxt) - len(nxt.lstrip()) == indent + 2:
                    names.append(m.group("name"))
                    break
    return names


def _configmap_entries(doc: Document) -> Iterable[DevicePluginConfig]:
    """Each `data:` block scalar of the ConfigMap(s), parsed on its own with its real line numbers."""
    names = _configmap_names(doc.lines)
    cm_name = names[0] if len(names) == 1 else None
    in_data = False
    data_indent = 0
    lines = doc.lines
    i = 0
    while i < len(lines):
        ln = lines[i]
        stripped = ln.strip()
        if re.match(r"^\s*data:\s*$", ln):
            in_data, data_indent = True, len(ln) - len(ln.lstrip())
            i += 1
            continue
        m = _BLOCK.match(ln) if in_data else None
        if m and len(m.group("indent")) > data_indent:
            indent = len(m.group("indent"))
            j = i + 1
            body: list[str] = []
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
                body.append(lines[j])
                j += 1
            while body and not body[-1].strip():
                body.pop()
            cut = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=0)
            text = [b[cut:] for b in body]
            if any(_SHARING_WORDS.search(t) or t.startswith("version:") for t in text):
                yield _entry(doc, text, doc.first_line + i + 1, m.group("key"), cm_name)
            i = j
            continue
        if in_data and stripped and len(ln) - len(ln.lstrip()) <= data_indent and not stripped.startswith("#"):
            in_data = False
        i += 1


@parser("device-plugin.config", "NVIDIA device plugin / GFD config: plain file or the ConfigMap of named configs", sniff=sniff)
def parse(doc: Document) -> Iterable[DevicePluginConfig]:
    if any(_CONFIGMAP.match(ln) for ln in doc.head(80)):
        found = list(_configmap_entries(doc))
        if not found:
            raise UnusableData("a ConfigMap without a device plugin config entry")
        yield from found
        return
    yield _entry(doc, list(doc.lines), doc.first_line, None, None)
