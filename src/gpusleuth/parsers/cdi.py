"""CDI specs (Container Device Interface), as nvidia-ctk writes them to /etc/cdi and /var/run/cdi.

    cdiVersion: 0.5.0
    kind: nvidia.com/gpu
    devices:
    - name: "0"
      containerEdits:
        deviceNodes:
        - path: /dev/nvidia0
    containerEdits:
      mounts:
      - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
        containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
        options: [ro, nosuid, nodev, bind]
      hooks:
      - hookName: createContainer
        path: /usr/bin/nvidia-cdi-hook

The same content may be JSON (often on one line). What matters to checks: the device names a runtime can
resolve, and the host paths the spec mounts (library file names carry the driver version they were
generated for).
"""

from __future__ import annotations

import re
from typing import Iterable

from gpusleuth.errors import UnusableData
from gpusleuth.model.configs import CdiSpec
from gpusleuth.model.document import Document
from gpusleuth.parsers.base import NO, SURE, WEAK, parser
from gpusleuth.parsers.yamlsafe import safe_load

_CDI_VERSION = re.compile(r"""^\s*[{"]*\s*"?cdiVersion"?\s*:""")
_KIND = re.compile(r"""["']?kind["']?\s*:\s*["']?(?P<kind>[\w.-]+/[\w.-]+)""")
_HOST_PATH = re.compile(r"""["']?hostPath["']?\s*:\s*["']?(?P<path>/[^"',\s}]+)""")
_DEV_PATH = re.compile(r"""["']?path["']?\s*:\s*["']?(?P<path>/dev/[^"',\s}]+)""")


_MAX_LINES_TEXT = 4_000_000  # a spec this large is cited at its start, not key by key


def _key_lines(doc: Document) -> dict:
    """key path (list items as ints) -> Evidence of every key, from the YAML/JSON node marks."""
    import yaml
    if len(doc.text) > _MAX_LINES_TEXT:
        return {}
    try:
        root = yaml.compose(doc.text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return {}
    out: dict = {}

    def walk(node, path):
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                p = path + (k.value,)
                out[p] = k.start_mark.line
                walk(v, p)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                out[path + (i,)] = v.start_mark.line
                walk(v, path + (i,))

    walk(root, ())
    return {p: doc.evidence(i) for p, i in out.items() if i < len(doc.lines)}


def sniff(doc: Document) -> int:
    head = doc.head(60)
    if "cdiVersion" in "\n".join(head) and any(_CDI_VERSION.match(ln) or '"cdiVersion"' in ln for ln in head):  # both need the word
        return SURE if any(map(_KIND.search, head)) or len(head) == 1 else SURE - 20
    if doc.path_hint and "/cdi/" in doc.path_hint:
        return WEAK
    return NO


@parser("cdi.spec", "CDI specs (/etc/cdi, /var/run/cdi; YAML or JSON): device names and the host files they mount", sniff=sniff)
def parse(doc: Document) -> Iterable[CdiSpec]:
    import yaml
    try:
        body = safe_load(doc.text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {doc.first_line + mark.line}" if mark is not None else ""
        raise UnusableData(f"CDI spec is not valid YAML/JSON{where}") from None
    if not isinstance(body, dict) or "cdiVersion" not in body:
        raise UnusableData("no cdiVersion: not a CDI spec")
    devices = tuple(str(d.get("name")) for d in body.get("devices") or () if isinstance(d, dict) and d.get("name") is not None)
    hosts, nodes = [], []
    first = None
    for i, line in enumerate(doc.lines):
        if first is None and ("cdiVersion" in line or _KIND.search(line)):
            first = doc.evidence(i)
        for m in _HOST_PATH.finditer(line):
            hosts.append((m.group("path"), doc.evidence(i, m.group(0))))
        for m in _DEV_PATH.finditer(line):
            nodes.append((m.group("path"), doc.evidence(i, m.group(0))))
    yield CdiSpec(
        body=body,
        key_lines=_key_lines(doc),
        artifact=doc.artifact,
        path=doc.path_hint,
        kind=str(body.get("kind")) if body.get("kind") else None,
        cdi_version=str(body.get("cdiVersion")),
        devices=devices,
        host_paths=tuple(hosts),
        device_nodes=tuple(dict.fromkeys(nodes)),
        evidence=first,
    )
