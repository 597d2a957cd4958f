"""Kubernetes API objects from `kubectl get -o json` / `-o yaml`: a List with items, a single object,
several objects in a row, multi-document YAML, and must-gather's `.yaml` files.

Pods, Nodes, Events (core/v1 and events.k8s.io/v1) and DaemonSets become model objects (pod STATUS as
kubectl would print it); every other kind, and DaemonSets too (their pod template carries the operands'
env), becomes a K8sObject with the line of every key. JSON is read with the json module and its key lines
come from a scan of the pretty-printed lines (kubectl writes one key per line), so a 50 MB pod list never
goes near a YAML parser; YAML is composed once with PyYAML's C loader, and lines come from the nodes.

A paste cut short keeps what is complete (the finished items of a List, the finished YAML documents) and
says where it stopped; anything else malformed is unusable, with the line of the error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from itertools import accumulate
from typing import Callable, Iterable, Iterator

from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.model.finding import Gap
from gpusleuth.model.k8s import ContainerStatus, DaemonSet, Event, K8sObject, Node, NodeCondition, Pod, Taint
from gpusleuth.parsers.base import LIKELY, NO, SURE, parser
from gpusleuth.parsers.k8s_common import GPU_RESOURCE, kubectl_status, parse_time, resource_totals
from gpusleuth.parsers.yamlsafe import AliasBomb, check_aliases, may_alias, node_paths
from gpusleuth.parsers.yamlsafe import loader_class as _loader_class

_JSON_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*(.*)$')
_YAML_API = re.compile(r"^(?:- |  )?apiVersion:\s*\S")
_YAML_KIND = re.compile(r"^(?:- |  )?kind:\s*[A-Z]\w*\s*$")
_JSON_API = re.compile(r'^\s*"apiVersion"\s*:')
_JSON_KIND = re.compile(r'^\s*"kind"\s*:\s*"[A-Z]')
_MAX_SCAN_LINE = 4096  # a minified JSON line: no per-key lines to find, objects cite where they start
_KEYED = SURE - 5  # generic objects: a parser for one specific kind (a CDI spec, a Helm release) may outbid


def _Loader(text: str):  # noqa: N802 - a loader class's name; PyYAML is imported on the first YAML document
    return _loader_class()(text)


def _dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path)


class _Lines:
    """Where each key of one object is: relative path -> index into doc.lines, less ``shift`` (the map shared by
    the items of one shape of a JSON List, _JsonLines._by_shape, counts lines from the item's first line)."""

    def __init__(self, doc: Document, lines: dict[tuple, int], start: int, lazy: Mapping | None = None, shift: int = 0):
        self.doc, self.lines, self.start, self.lazy, self.shift = doc, lines, start, lazy, shift

    def index(self, *candidates: tuple) -> int:
        for path in candidates:
            if path in self.lines:
                return self.lines[path] + self.shift
        return self.start

    def evidence(self, *candidates: tuple):
        i = self.index(*candidates)
        return self.doc.evidence(i) if 0 <= i < len(self.doc.lines) else None

    def key_lines(self) -> Mapping[str, int]:
        if self.lazy is not None:
            return self.lazy
        base = self.doc.first_line + self.shift
        return {_dotted(p): base + i for p, i in self.lines.items() if p}


# -- conversion of one API object ----------------------------------------------------------------------------


def _convert(obj: dict, at: _Lines) -> Iterator:
    kind = obj.get("kind")
    if kind in ("Pod", "Node", "DaemonSet") and not _d(obj.get("metadata")).get("name"):
        prefix = _d(obj.get("metadata")).get("generateName")
        if kind == "Pod" and isinstance(prefix, str) and prefix and isinstance(obj.get("spec"), dict):
            # a manifest to create (`kubectl create -f` with generateName): no pod yet, but its spec, under the prefix
            yield K8sObject(kind="Pod", name=prefix, namespace=_d(obj.get("metadata")).get("namespace"), body=obj,
                            artifact=at.doc.artifact, line=at.doc.first_line + at.start, api_version=obj.get("apiVersion"),
                            key_lines=at.key_lines())
        return  # otherwise the tail of a paste cut short: nothing to attribute it to
    if kind == "Pod":
        manifest = None
        if isinstance(obj.get("spec"), dict):
            meta = _d(obj.get("metadata"))
            manifest = K8sObject(kind="Pod", name=meta.get("name"), namespace=meta.get("namespace"), body=_as_written(obj, meta),
                                 artifact=at.doc.artifact, line=at.doc.first_line + at.start,
                                 api_version=obj.get("apiVersion"), key_lines=at.key_lines())
        yield _pod(obj, at, manifest)  # made with its manifest: dataclasses.replace took a tenth of a pod's conversion
    elif kind == "Node":
        yield _node(obj, at)
    elif kind == "Event":
        yield _event(obj, at)
    else:
        if kind == "DaemonSet":
            yield _daemonset(obj, at)
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        yield K8sObject(
            kind=str(kind),
            name=meta.get("name"),
            namespace=meta.get("namespace"),
            body=obj,
            artifact=at.doc.artifact,
            line=at.doc.first_line + at.start,
            api_version=obj.get("apiVersion"),
            key_lines=at.key_lines(),
        )


def _as_written(obj: dict, meta: dict) -> dict:
    """A Pod's manifest body: the object, less its status when its metadata already shows that it was read back
    from the API server (a uid or resourceVersion). The status is then in the Pod's own fields, and the manifest
    is kept for its spec (facts/validation.py PodSpecs), which asks the body for the status only to tell a
    manifest from an object read back. A fleet's pod list is mostly status: thousands of decoded statuses are
    not kept twice."""
    if "status" in obj and (meta.get("uid") or meta.get("resourceVersion")):
        return {k: v for k, v in obj.items() if k != "status"}
    return obj


def _d(value) -> dict:
    return value if isinstance(value, dict) else {}


def _l(value) -> list:
    return value if isinstance(value, list) else []


def _container_status(cs: dict, i: int, init: bool, at: _Lines) -> ContainerStatus:
    state = _d(cs.get("state"))
    which = next((k for k in ("waiting", "terminated", "running") if k in state), None)
    st = _d(state.get(which))
    last = _d(_d(cs.get("lastState")).get("terminated"))
    base = ("status", "initContainerStatuses" if init else "containerStatuses", i)
    return ContainerStatus(
        name=cs.get("name"),
        init=init,
        image=cs.get("image"),
        state=which,
        reason=st.get("reason"),
        message=st.get("message"),
        exit_code=st.get("exitCode"),
        ready=cs.get("ready"),
        restarts=cs.get("restartCount"),
        started_at=parse_time(st.get("startedAt")),
        finished_at=parse_time(st.get("finishedAt")),
        last_reason=last.get("reason"),
        last_message=last.get("message"),
        last_exit_code=last.get("exitCode"),
        last_started_at=parse_time(last.get("startedAt")),
        last_finished_at=parse_time(last.get("finishedAt")),
        evidence=at.evidence(base + ("state", which, "reason"), base + ("state", which), base + ("name",), base),
    )


def _env_value(e: dict) -> str:
    if "value" in e:
        return str(e["value"])
    src = _d(e.get("valueFrom"))
    if "fieldRef" in src:
        ref = _d(src["fieldRef"])
        return f"({ref.get('apiVersion', 'v1')}:{ref.get('fieldPath', '')})"
    for kind, what in (("configMapKeyRef", "of config map"), ("secretKeyRef", "in secret")):
        if kind in src:
            ref = _d(src[kind])
            return f"<set to the key '{ref.get('key')}' {what} '{ref.get('name')}'>"
    if "resourceFieldRef" in src:
        return f"({_d(src['resourceFieldRef']).get('resource')})"
    return ""


def _pod(obj: dict, at: _Lines, manifest: K8sObject | None = None) -> Pod:
    meta, spec, status = _d(obj.get("metadata")), _d(obj.get("spec")), _d(obj.get("status"))
    spec_inits, spec_apps = _l(spec.get("initContainers")), _l(spec.get("containers"))
    inits = [_container_status(cs, i, True, at) for i, cs in enumerate(_l(status.get("initContainerStatuses"))) if isinstance(cs, dict)]
    apps = [_container_status(cs, i, False, at) for i, cs in enumerate(_l(status.get("containerStatuses"))) if isinstance(cs, dict)]
    ready_condition = next((c.get("status") == "True" for c in _l(status.get("conditions")) if isinstance(c, dict) and c.get("type") == "Ready"), None)
    kstatus, restarts = kubectl_status(
        status.get("phase"), status.get("reason"), inits, apps, ready_condition, bool(meta.get("deletionTimestamp")), n_init=len(spec_inits)
    )
    specs = [(True, c) for c in spec_inits if isinstance(c, dict)] + [(False, c) for c in spec_apps if isinstance(c, dict)]
    totals = resource_totals((init, _d(_d(c.get("resources")).get("requests")), _d(_d(c.get("resources")).get("limits"))) for init, c in specs)
    env: dict = {}
    for _, c in specs:
        for e in _l(c.get("env")):
            if isinstance(e, dict) and e.get("name"):
                env.setdefault(e["name"], _env_value(e))
    owners = [o for o in _l(meta.get("ownerReferences")) if isinstance(o, dict)]
    owner = next((o for o in owners if o.get("controller")), owners[0] if owners else None)
    return Pod(
        name=meta.get("name"),
        namespace=meta.get("namespace"),
        node=spec.get("nodeName"),
        status=kstatus,
        phase=status.get("phase"),
        ready=f"{sum(1 for c in apps if c.ready)}/{len(spec_apps)}" if spec_apps else None,
        restarts=restarts,
        containers=tuple(inits + apps),
        labels=_d(meta.get("labels")),
        owner=f"{owner.get('kind')}/{owner.get('name')}" if owner else None,
        gpu_request=totals.get(GPU_RESOURCE, 0),
        resource_requests=totals,
        runtime_class=spec.get("runtimeClassName"),
        node_selector=_d(spec.get("nodeSelector")),
        tolerations=tuple(t for t in _l(spec.get("tolerations")) if isinstance(t, dict)),
        env=env,
        images=tuple(c["image"] for _, c in specs if c.get("image")),
        evidence=at.evidence(("metadata", "name")),
        manifest=manifest,
    )


def _node(obj: dict, at: _Lines) -> Node:
    meta, spec, status = _d(obj.get("metadata")), _d(obj.get("spec")), _d(obj.get("status"))
    evidence = {"name": at.evidence(("metadata", "name"))}
    labels = {str(k): str(v) for k, v in _d(meta.get("labels")).items()}
    for k in labels:
        evidence[f"label:{k}"] = at.evidence(("metadata", "labels", k))
    taints = []
    for i, t in enumerate(_l(spec.get("taints"))):
        if isinstance(t, dict) and t.get("key"):
            ev = at.evidence(("spec", "taints", i, "key"), ("spec", "taints", i))
            taints.append(Taint(t["key"], t.get("value"), t.get("effect", ""), ev))
            evidence.setdefault(f"taint:{t['key']}", ev)
    resources = {}
    for section in ("capacity", "allocatable"):
        resources[section] = {str(k): str(v) for k, v in _d(status.get(section)).items()}
        for k in resources[section]:
            evidence[f"{section}:{k}"] = at.evidence(("status", section, k))
    conditions = []
    for i, c in enumerate(_l(status.get("conditions"))):
        if isinstance(c, dict) and c.get("type"):
            ev = at.evidence(("status", "conditions", i, "type"), ("status", "conditions", i))
            conditions.append(NodeCondition(c["type"], str(c.get("status")), c.get("reason"), c.get("message"), ev))
            evidence[f"condition:{c['type']}"] = ev
    info = _d(status.get("nodeInfo"))
    fields = {"kernel_version": "kernelVersion", "os_image": "osImage", "container_runtime": "containerRuntimeVersion", "kubelet_version": "kubeletVersion"}
    values = {attr: info.get(key) for attr, key in fields.items()}
    for attr, key in fields.items():
        if values[attr]:
            evidence[attr] = at.evidence(("status", "nodeInfo", key))
    if "unschedulable" in spec:
        evidence["unschedulable"] = at.evidence(("spec", "unschedulable"))
    return Node(
        name=meta.get("name"),
        labels=labels,
        taints=tuple(taints),
        capacity=resources["capacity"],
        allocatable=resources["allocatable"],
        conditions=tuple(conditions),
        unschedulable=bool(spec.get("unschedulable", False)),
        evidence=evidence,
        artifact=at.doc.artifact,
        **values,
    )


def _event(obj: dict, at: _Lines) -> Event:
    meta = _d(obj.get("metadata"))
    if "regarding" in obj or "note" in obj or str(obj.get("apiVersion", "")).startswith("events.k8s.io"):
        target, message = _d(obj.get("regarding")), obj.get("note") or ""
        series = _d(obj.get("series"))
        source = obj.get("reportingController") or _d(obj.get("deprecatedSource")).get("component")
        host = _d(obj.get("deprecatedSource")).get("host")
        count = series.get("count") or obj.get("deprecatedCount")
        first = obj.get("deprecatedFirstTimestamp") or obj.get("eventTime")
        last = series.get("lastObservedTime") or obj.get("deprecatedLastTimestamp") or obj.get("eventTime")
        ev = at.evidence(("note",), ("reason",))
    else:
        target, message = _d(obj.get("involvedObject")), obj.get("message") or ""
        src = _d(obj.get("source"))
        source, host = src.get("component") or obj.get("reportingComponent"), src.get("host")
        series = _d(obj.get("series"))
        count = series.get("count") or obj.get("count")
        first = obj.get("firstTimestamp") or obj.get("eventTime")
        last = series.get("lastObservedTime") or obj.get("lastTimestamp") or first
        ev = at.evidence(("message",), ("reason",))
    kind, name = str(target.get("kind") or "").lower(), target.get("name")
    return Event(
        reason=str(obj.get("reason") or ""),
        message=str(message).strip(),
        type=obj.get("type"),
        namespace=meta.get("namespace") or target.get("namespace"),
        object=f"{kind}/{name}" if kind and name else name,
        source=f"{source}, {host}" if source and host else source,
        node=host or (name if kind == "node" else None),
        count=count,
        first_seen=first,
        last_seen=last,
        time=parse_time(last),
        evidence=ev,
    )


def _daemonset(obj: dict, at: _Lines) -> DaemonSet:
    meta, status = _d(obj.get("metadata")), _d(obj.get("status"))
    template = _d(_d(_d(obj.get("spec")).get("template")).get("spec"))
    selector = _d(template.get("nodeSelector"))
    return DaemonSet(
        name=meta.get("name"),
        namespace=meta.get("namespace"),
        desired=status.get("desiredNumberScheduled"),
        current=status.get("currentNumberScheduled"),
        ready=status.get("numberReady"),
        up_to_date=status.get("updatedNumberScheduled", 0 if status else None),  # omitempty when 0
        available=status.get("numberAvailable", 0 if status else None),
        node_selector=",".join(f"{k}={v}" for k, v in sorted(selector.items())) or None,
        evidence=at.evidence(("metadata", "name")),
        tolerations=tuple(t for t in _l(template.get("tolerations")) if isinstance(t, dict)),
        tolerations_evidence=at.evidence(("spec", "template", "spec", "tolerations")) if template.get("tolerations") else None,
    )


def _is_list(value) -> bool:
    return isinstance(value, dict) and isinstance(value.get("items"), list) and str(value.get("kind", "List")).endswith("List")


# item index (None: the value itself) -> (lines, start), or for JSON (lines, start, key lines, shift): _Lines' arguments
LineSource = Callable[[int | None], tuple]


def _objects(value, doc: Document, lines_of: LineSource) -> Iterator:
    """Model objects from one top-level value (an object, or a List of them); key lines are asked for one
    item at a time so that a huge List never has all its line maps in memory at once."""
    if _is_list(value):
        for i, item in enumerate(value["items"]):
            if isinstance(item, dict) and item.get("kind"):
                yield from _convert(item, _Lines(doc, *lines_of(i)))
    elif isinstance(value, dict) and value.get("kind"):
        yield from _convert(value, _Lines(doc, *lines_of(None)))


# -- JSON ----------------------------------------------------------------------------------------------------


def _scan_json(lines: tuple[str, ...], begin: int = 0, end: int | None = None, stack: list | None = None,
               root: int = -1) -> Iterator[tuple[tuple, int, list, int]]:
    """(path, line index, the scan's stack, top-level count) of every key and array element of pretty-printed
    JSON; the first path element counts top-level values (a paste may hold several). One key per line, as
    kubectl writes it. Each is yielded once its line is read; a scan can resume at the next line from a copy
    of the stack and the count (`_KeyLines` does, for one object's lines)."""
    stack = [] if stack is None else stack  # [path, is_array, next_index]
    key_match = _JSON_KEY.match
    for idx in range(begin, len(lines) if end is None else end):
        s = lines[idx].strip()
        if not s or len(s) > _MAX_SCAN_LINE:
            continue
        c = s[0]
        top = stack[-1] if stack else None
        if top is not None and not top[1] and c == '"':
            m = key_match(s)
            if not m:
                continue
            key, rest = m.groups()
            if "\\" in key:
                key = json.loads(f'"{key}"')
            path = top[0] + (key,)
        elif top is not None and top[1] and c not in "]}":
            path, rest = top[0] + (top[2],), s
            top[2] += 1
        elif not stack and c in "{[":
            root += 1
            path, rest = (root,), s
        else:
            for ch in s:
                if ch in "]}" and stack:
                    stack.pop()
                elif ch not in ", ":
                    break
            continue
        if rest.startswith(("{", "[")) and rest.rstrip(",") not in ("{}", "[]"):
            stack.append([path, rest[0] == "[", 0])
        yield path, idx, stack, root


def _json_values(text: str, doc: Document) -> tuple[list, Gap | None]:
    """Every top-level JSON value in the text; a truncated List keeps its complete items."""
    decoder = json.JSONDecoder()
    values: list = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos >= n:
            return values, None
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            # A value cut short runs into the end of the text (a string can hold no raw newline, so an
            # unterminated one also means the text stopped); anything else is malformed.
            if not (exc.msg.startswith("Unterminated string") or not text[exc.pos :].strip()):
                raise UnusableData(f"line {doc.first_line + exc.lineno - 1}: {exc.msg} (column {exc.colno})") from None
            last = doc.first_line + len(doc.lines) - 1
            partial = _partial_list(text, pos, decoder)
            if partial is None and not values:
                raise UnusableData(f"truncated JSON: the text stops at line {last} in the middle of an object") from None
            if partial is not None:
                values.append(partial)
            kept = f"{len(partial['items'])} complete item(s) kept" if partial is not None else "the unfinished value was dropped"
            return values, Gap("artifact", f"truncated JSON: the text stops at line {last}; {kept}", doc.artifact)
        values.append(value)


def _partial_list(text: str, start: int, decoder: json.JSONDecoder) -> dict | None:
    """The complete items of a List whose text was cut short, or None when it is not a List."""
    m = re.compile(r'"items"\s*:\s*\[').search(text, start)
    if not m:
        return None
    head = text[start : m.start()]
    kind = re.search(r'"kind"\s*:\s*"([^"]*)"', head)
    items, pos = [], m.end()
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        try:
            item, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        items.append(item)
    return {"kind": kind.group(1) if kind else "List", "items": items}


def _sniff_json(doc: Document) -> int:
    head = doc.head(40)
    if not head or head[0].lstrip()[:1] not in "{[":
        return NO
    if len(head[0]) > _MAX_SCAN_LINE:  # minified: one line holds the document, `kind` of a List comes last
        first = head[0][:_MAX_SCAN_LINE]
        if '"apiVersion"' in first and ('"kind"' in first or '"kind"' in head[0]):
            return _KEYED
        return NO
    api = any(map(_JSON_API.match, head))
    kind = any(map(_JSON_KIND.match, head))
    if api and kind:
        return _KEYED
    return LIKELY if (api or kind) and any('"items"' in ln for ln in head) else NO


class _KeyLines(Mapping):
    """An object's key_lines (dotted path -> line) from a JSON scan, made on first use: most objects (every pod
    of a 35,000-pod list) never have theirs asked for, and made for all they were the largest thing kept after
    the lines themselves. The object's lines are scanned again from the state the first scan had after the
    object's first line, so the map is the one that scan saw. What it keeps until then is the document's text
    (one string, shared by every object of the document, which the JSON decoder read anyway) and where the
    object's lines are in it, not the Document: its lines as strings took twice the text's memory."""

    __slots__ = ("_args", "_map")

    def __init__(self, text: str, span: tuple[int, int], lists: frozenset, key: tuple, start: int, first_line: int,
                 resume: tuple):
        self._args = (text, span, key, start, first_line, lists, resume)
        self._map: dict | None = None

    def _get(self) -> dict:
        if self._map is None:
            text, (a, b), key, start, first_line, lists, (stack, root, first) = self._args
            lines = text[a:b].split("\n")  # the object's lines: lines[0] is the document's line `start`
            cur: dict[tuple, int] = {first: start} if first else {}
            for path, idx, _, _ in _scan_json(lines, 1, None, [[p, a, n] for p, a, n in stack], root):
                unit, rel = _unit_of(path, lists)
                if unit == key and rel:
                    cur[rel] = start + idx
            base = first_line
            self._map = {_dotted(p): base + i for p, i in cur.items()}
            self._args = None
        return self._map

    def __getitem__(self, key):
        return self._get()[key]

    def __iter__(self):
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __contains__(self, key) -> bool:
        return key in self._get()

    def get(self, key, default=None):
        return self._get().get(key, default)

    def __repr__(self) -> str:
        return repr(self._get())


def _unit_of(path: tuple, lists) -> tuple[tuple | None, tuple]:
    """(the object a path belongs to: (top-level value, item index or -1), the path inside it)."""
    root = path[0]
    if root in lists:
        if len(path) < 3 or path[1] != "items":
            return None, ()
        return (root, path[2]), path[3:]
    return (root, -1), path[1:]


# A scalar after `"key": ` at the end of a line (a comma may follow), blanked in an item's skeleton (_by_shape).
# Only where the quote before `: ` is neither escaped nor the line's first character: the first string of the line,
# the key `_scan_json` reads, then ends at or before that quote, so what the scan does with the line (the key it
# finds, whether the line opens an object or an array, or nothing) is the same whatever scalar follows. A scalar
# starts with `"`, `-`, a digit or a letter, never with a bracket or a space, and a blanked line is no longer.
_SCALAR_VALUE = re.compile(r'": (?<=[^\\\s]": )(?:"[^"\\\n]*(?:\\.[^"\\\n]*)*"|-?\d[\d.eE+-]*|true|false|null)(?=,?$)',
                           re.MULTILINE)
_ITEMS_OPEN = re.compile(r'^[ \t]*"items": \[\n([ \t]*)\{$', re.MULTILINE)  # a List's items as kubectl indents them
_SHAPES = 512  # skeletons kept per document
_UNLIKE = 64  # items of new shapes, less items of known ones, after which the rest is scanned line by line


def _at_item(k: int) -> list:
    """_scan_json's stack at item k of a List that is the document's only value: the List open, its items open at k."""
    return [[(0,), False, 0], [(0, "items"), True, k]]


class _JsonLines:
    """Per-object line maps from one pass of _scan_json, handed out in document order. text: the document's
    lines joined with newlines (what the decoder read). A List laid out as kubectl writes it is read item by item
    by shape instead (_by_shape) when ``single_list`` says it is the document's only value, read whole."""

    def __init__(self, doc: Document, lists: set[int], text: str, single_list: bool = False):
        self.lists = frozenset(lists)
        self.doc = doc
        self.text = text
        # where each line ends in text: line i spans [ends[i-1] + i, ends[i] + i) (a newline between lines)
        self.ends = list(accumulate(map(len, doc.lines)))
        shaped = self._by_shape() if single_list and self.lists == {0} else None
        self.units = self._units(_scan_json(doc.lines)) if shaped is None else shaped
        self.pending: tuple | None = next(self.units, None)

    def _by_shape(self) -> Iterator | None:
        """The units of a List's items, each item's lines scanned once per shape: the items of a fleet's pod list
        come in a handful of shapes (the pods of one DaemonSet have the same keys on the same lines; only values
        differ). An item's skeleton is its text with the scalar values blanked (_SCALAR_VALUE); everything else,
        keys, brackets, element lines, blank lines and indentation, is kept.

        What `_scan_json` does with a line depends on the line only through its skeleton, and on the scan's state;
        at an item that state is the List's object and its items array open at the item's index. An item is cut
        where a line is `{` alone at the first item's indentation, and the first item of each skeleton is
        scanned from that state and checked: every path found is under the item, and the scan ends in the state
        of the next item. The check makes the item's scan independent of the rest of the document (the index is
        read on its first line only), so another item of the same skeleton has the same paths, with lines
        counted from its first line, at no Python step per line. The lines before the first item are scanned as
        usual and must end in the state of item 0 with no item found; the last item and what follows it are
        scanned as usual from the state of their item. An item that fails the check (a cut inside an item,
        another "items" key) has the rest of the document scanned as usual from its own state, as has a List
        whose items keep coming in new shapes (_UNLIKE: a new shape costs its scan and a little more).

        None (the whole document scanned as usual) without such a List layout, with lines before the first item
        that do not end as said, or with a line too long to scan (whether the scan skips it would then depend
        on the length of the value blanked)."""
        lines, text = self.doc.lines, self.text
        m = _ITEMS_OPEN.search(text)
        if m is None or max(map(len, lines)) > _MAX_SCAN_LINE:
            return None
        pieces = text.split("\n" + m.group(1) + "{\n")
        if len(pieces) < 3:
            return None
        a = pieces[0].count("\n") + 1  # the first item's line
        stack: list = []
        head = list(_scan_json(lines, 0, a, stack))
        if not head or head[-1][3] != 0 or stack != _at_item(0):
            return None
        if any(len(path) > 2 and path[1] == "items" for path, *_ in head):
            return None
        return self._shaped(pieces, a)

    def _item_scan(self, k: int, a: int, b: int) -> tuple | None:
        """Item k's scan over lines a..b-1 from the state of item k, checked (see _by_shape): (its line map counted
        from line a, its last key's line from a, the scan's stack below the List after the first line, b - a)."""
        item = (0, "items", k)
        after, stack = _at_item(k + 1), _at_item(k)
        scan = _scan_json(self.doc.lines, a, b, stack, 0)
        _, _, st, _ = next(scan)  # line a, `{` alone in the state of item k: the item itself, opened
        resume = tuple((p[3:], arr, n) for p, arr, n in st[2:])
        cur: dict[tuple, int] = {}
        last = a
        for path, idx, _, _ in scan:
            if path[:3] != item:
                return None
            cur[path[3:]] = idx - a
            last = idx
        if stack != after:
            return None
        return cur, last - a, resume, b - a

    def _shaped(self, pieces: list[str], a: int) -> Iterator[tuple]:
        memo: dict[str, tuple] = {}
        unlike = 0
        sub = _SCALAR_VALUE.sub
        k, n_items = 0, len(pieces) - 2  # pieces[k + 1]: item k's text less its `{` line; the last: the rest
        while k < n_items:
            skeleton = sub('": 0', pieces[k + 1])  # lines and newlines as they are: only values blanked
            shape = memo.get(skeleton)
            if shape is not None:
                unlike -= unlike > 0
            else:
                unlike += 1
                if unlike > _UNLIKE:
                    break
                shape = self._item_scan(k, a, a + skeleton.count("\n") + 2)
                if shape is None:
                    break
                if len(memo) < _SHAPES:
                    memo[skeleton] = shape
            cur, last, resume, n = shape
            stack = _at_item(k + 1)
            stack.extend([(0, "items", k) + p, arr, i] for p, arr, i in resume)
            yield (0, k), cur, a, self._keylines((0, k), a, a + last, (stack, 0, ())), a
            k += 1
            a += n
        yield from self._units(_scan_json(self.doc.lines, a, None, _at_item(k), 0))

    def _keylines(self, key: tuple, start: int, last: int, resume: tuple) -> _KeyLines:
        ends = self.ends
        span = ((ends[start - 1] + start) if start else 0, ends[last] + last)
        return _KeyLines(self.text, span, self.lists, key, start, self.doc.first_line, resume)

    def _units(self, scan: Iterator[tuple[tuple, int, list, int]]) -> Iterator[tuple[tuple, dict, int, "_KeyLines"]]:
        key: tuple | None = None
        cur: dict[tuple, int] = {}
        start = last = 0
        resume: tuple = ()
        lists = self.lists
        for path, idx, stack, root_count in scan:
            root = path[0]  # the object the path belongs to, and the path inside it (_unit_of, inline: once per line)
            if root in lists:
                if len(path) < 3 or path[1] != "items":
                    continue
                unit, rel = (root, path[2]), path[3:]
            else:
                unit, rel = (root, -1), path[1:]
            if unit != key:
                if key is not None:
                    yield key, cur, start, self._keylines(key, start, last, resume), 0
                key, cur, start = unit, {}, idx
                resume = ([[p, a, n] for p, a, n in stack], root_count, rel)  # the scan's state after the object's first line
            last = idx
            if rel:
                cur[rel] = idx
        if key is not None:
            yield key, cur, start, self._keylines(key, start, last, resume), 0

    def close(self) -> None:
        """Ends the scan. Its generator refers to this object, which refers to it: a cycle, which kept the
        document and every line of it while diagnose pauses the cycle collector (gcpause.py)."""
        self.units.close()
        self.units, self.pending, self.ends = iter(()), None, []

    def source(self, root: int) -> LineSource:
        def lines_of(item: int | None) -> tuple[dict[tuple, int], int] | tuple[dict[tuple, int], int, "_KeyLines", int]:
            want = (root, -1 if item is None else item)
            while self.pending is not None and self.pending[0] < want:
                self.pending = next(self.units, None)
            if self.pending is not None and self.pending[0] == want:
                return self.pending[1:]
            return {}, 0

        return lines_of


@parser("k8s.json", "Kubernetes objects as JSON (`kubectl get -o json`: a List, one object, or several)", _sniff_json)
def parse_json(doc: Document) -> Iterable:
    text = "\n".join(doc.lines)
    try:
        values, gap = _json_values(text, doc)
    except RecursionError:  # the json module recurses per level: a hostile document nests deeper than it can go
        raise UnusableData("JSON nested too deep to read (thousands of levels); not read") from None
    if not any(_is_list(v) or (isinstance(v, dict) and v.get("kind")) for v in values):
        raise UnusableData("JSON without a Kubernetes object (no kind/apiVersion)")
    lines = _JsonLines(doc, {r for r, v in enumerate(values) if _is_list(v)}, text, gap is None and len(values) == 1)
    out: list = []
    try:
        for root, value in enumerate(values):
            out.extend(_objects(value, doc, lines.source(root)))
    finally:
        lines.close()
    if gap:
        out.append(gap)
    return out


# -- YAML ----------------------------------------------------------------------------------------------------


def _node_lines(node, path: tuple, out: dict[tuple, int]) -> None:
    """Key and item lines under ``node``; each node walked once, so an alias costs one entry (yamlsafe)."""
    for p, line in node_paths(node):
        out[path + p] = line


def _yaml_source(node, value) -> LineSource:
    import yaml
    items = None
    if _is_list(value) and isinstance(node, yaml.MappingNode):
        items = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == "items"), None)

    def lines_of(item: int | None) -> tuple[dict[tuple, int], int]:
        target = node if item is None or items is None else items.value[item]
        out: dict[tuple, int] = {}
        _node_lines(target, (), out)
        return out, target.start_mark.line

    return lines_of


def _sniff_yaml(doc: Document) -> int:
    head = doc.head(60)
    if head and head[0].lstrip()[:1] in "{[":
        return NO
    api = any(map(_YAML_API.match, head))
    kind = any(map(_YAML_KIND.match, head))
    return _KEYED if api and kind else NO


@parser("k8s.yaml", "Kubernetes objects as YAML (`kubectl get -o yaml`, multi-document, must-gather .yaml)", _sniff_yaml)
def parse_yaml(doc: Document) -> Iterable:
    from gpusleuth.parsers.yaml_lists import read_in_parts

    parted = read_in_parts(doc, _read_yaml)  # a big List, on several cores
    return parted if parted is not None else _read_yaml(doc)


def _read_yaml(doc: Document) -> list:
    import yaml
    text = "\n".join(doc.lines)
    aliases = may_alias(text)
    loader = _Loader(text)
    del text
    out: list = []
    found = 0
    refused: AliasBomb | None = None
    try:
        while True:
            try:
                if not loader.check_node():
                    break
                node = loader.get_node()
                if aliases:
                    check_aliases(node)
                value = loader.construct_document(node)
            except AliasBomb as exc:
                refused = exc  # this document alone: the ones around it are still read
                continue
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
                where = f"line {doc.first_line + mark.line}" if mark else "somewhere"
                problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
                if not found:
                    raise UnusableData(f"{where}: {problem}") from None
                out.append(Gap("artifact", f"YAML stops parsing at {where} ({problem}); {found} document(s) before it were read", doc.artifact))
                break
            if node is None:
                continue
            before = len(out)
            out.extend(_objects(value, doc, _yaml_source(node, value)))
            found += len(out) > before
    finally:
        loader.dispose()
    if refused is not None:
        if not found:
            raise refused
        out.append(Gap("artifact", str(refused), doc.artifact))
    if not found:
        raise UnusableData("YAML without a Kubernetes object (no kind/apiVersion)")
    return out
