"""`kubectl get` tables as users paste them, and must-gather's `gpu_nodes.labels`.

kubectl pads columns with spaces (tabwriter, padding 3), left-aligned, so a value starts where its header
starts; values may hold spaces (`64 (4m7s ago)`, `Red Hat Enterprise Linux CoreOS 418.94`, event
messages), so cells are cut at the header positions, not at whitespace. Rows that were hand-edited out of
alignment fall back to splitting at runs of two spaces, then at single spaces keeping `64 (4m7s ago)` and
`8m (x4 over 20m)` whole.

Tables recognised by their columns: pods (plain, `-A`, `-o wide`, `--show-labels`, `get all`'s `pod/`
prefix, `-w` repeats), daemonsets, nodes (`-o wide`, `--show-labels`), events (`LAST SEEN TYPE REASON
OBJECT MESSAGE`, `-o wide`, `-A`, and the 1.x `LASTSEEN FIRSTSEEN COUNT NAME KIND ... SOURCE MESSAGE`).
Other tables (services, deployments, replicasets in `get all`) are stepped over. Several tables in one
document are fine; a blank line or a new header ends a table. Rows pasted without their header
(`kubectl get pods -A | grep nvidia`, `--no-headers`) take their columns from the command line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable, Iterator

from gpusleuth.model.document import Document
from gpusleuth.model.k8s import DaemonSet, Event, K8sObject, Node, NodeCondition, Pod
from gpusleuth.parsers.base import LIKELY, NO, SURE, parser
from gpusleuth.parsers.k8s_common import (
    namespace_from_command,
    owner_from_pod_name,
    parse_interval,
    parse_label_string,
    parse_restarts,
    source_node,
    to_int,
)

_TWO_WORD = {("LAST", "SEEN"), ("FIRST", "SEEN"), ("NOMINATED", "NODE"), ("READINESS", "GATES"), ("NODE", "SELECTOR")}
_FIRST_COLUMN = {"NAME", "NAMESPACE", "LAST SEEN", "LASTSEEN"}
_HEADER_TOKEN = re.compile(r"^[A-Z][A-Z0-9()_/.-]*$")
_TOKEN = re.compile(r"\S+")
_CELLS = re.compile(r"\d+ \([^)]*\)|\S+ \(x\d+ over [^)]*\)|\S+")
_TWO_SPACES = re.compile(r"\s{2,}")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_READY = re.compile(r"^\d+/\d+$")
_NODE_STATUS = re.compile(r"^(Ready|NotReady|Unknown)((,[A-Za-z]+)*)$")
_EVENT_TYPE = re.compile(r"^[A-Z][A-Za-z]+$")
_LABEL_LINE = re.compile(r"^- (?P<key>[^=\s]+)=(?P<value>\S*)\s*$")
_PREFIXES = {
    "pods": ("pod/", "pods/"),
    "daemonsets": ("daemonset.apps/", "daemonset.extensions/", "daemonset/", "ds/"),
    "nodes": ("node/", "nodes/"),
}
_SNIFF_LINES = 60
# `kubectl get pods -A | grep nvidia` loses the header: the command says which columns the rows have.
_GET_PODS = re.compile(r"\bget\s+(?:pods?|po)\b(?!/)")
_OUTPUT = re.compile(r"(?:\s-o\s*|--output[= ])(?P<fmt>\w+)")
_ALL_NAMESPACES = re.compile(r"\s(?:-A|--all-namespaces)\b")
_GET_RESOURCE = re.compile(r"\bget\s+(?:(?:-n|--namespace)[= ]\S+\s+|-A\s+|--all-namespaces\s+)*(?P<res>[a-z][a-z0-9.-]*)")
# `kubectl get <resource>` tables of kinds with no model of their own: resource name -> (kind, {COLUMN: body path}).
# Only the columns that carry meaning are mapped; every column is also kept under "columns".
_OBJECT_TABLES = {
    "runtimeclass": ("RuntimeClass", {"HANDLER": "handler"}),
    "clusterpolicy": ("ClusterPolicy", {"STATUS": "status.state"}),
    "clusterpolicies.nvidia.com": ("ClusterPolicy", {"STATUS": "status.state"}),
    "nicclusterpolicy": ("NicClusterPolicy", {"STATUS": "status.state"}),
    "nvidiadriver": ("NVIDIADriver", {"STATUS": "status.state"}),
    "configmap": ("ConfigMap", {}),
    "cm": ("ConfigMap", {}),
    "deployment": ("Deployment", {"READY": "status.ready", "AVAILABLE": "status.availableReplicas"}),
    "deploy": ("Deployment", {"READY": "status.ready", "AVAILABLE": "status.availableReplicas"}),
    "resourceclaim": ("ResourceClaim", {"STATE": "status.state"}),
    "deviceclass": ("DeviceClass", {}),
}


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    start: int


def header_columns(line: str) -> tuple[Column, ...] | None:
    """The columns of a kubectl table header line, or None when the line is not one."""
    if not "A" <= line[:1] <= "Z":
        return None  # a header starts with its first column's upper-case name
    tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(line)]
    if len(tokens) < 3 or tokens[0][1] != 0 or not all(_HEADER_TOKEN.match(t) for t, _ in tokens):
        return None
    cols: list[Column] = []
    i = 0
    while i < len(tokens):
        text, start = tokens[i]
        if i + 1 < len(tokens) and (text, tokens[i + 1][0]) in _TWO_WORD:
            cols.append(Column(f"{text} {tokens[i + 1][0]}", start))
            i += 2
        else:
            cols.append(Column(text, start))
            i += 1
    return tuple(cols) if cols[0].name in _FIRST_COLUMN and len(cols) >= 3 else None


def implied_header(command: str | None) -> tuple[Column, ...] | None:
    """The columns of a headerless `kubectl get pods ... | grep ...` (or `--no-headers`) paste, from its command."""
    if not command or not ("|" in command or "--no-headers" in command) or not _GET_PODS.search(command):
        return None
    output = _OUTPUT.search(command)
    if output and output.group("fmt") != "wide":
        return None
    names = ["NAMESPACE"] if _ALL_NAMESPACES.search(command) else []
    names += ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    if output:
        names += ["IP", "NODE", "NOMINATED NODE", "READINESS GATES"]
    return tuple(Column(name, -1) for name in names)  # -1: where the values start is not known


def table_kind(cols: tuple[Column, ...]) -> str:
    names = {c.name for c in cols}
    if {"READY", "STATUS", "RESTARTS"} <= names:
        return "pods"
    if {"DESIRED", "CURRENT"} <= names and names & {"NODE SELECTOR", "NODE-SELECTOR"}:  # 1.5/1.6 hyphenated it
        return "daemonsets"
    if {"REASON", "MESSAGE"} <= names and names & {"LAST SEEN", "LASTSEEN"}:
        return "events"
    if {"STATUS", "VERSION"} <= names:
        return "nodes"
    return "other"


def split_row(line: str, cols: tuple[Column, ...], free_last: bool = False) -> list[str] | None:
    """Cells of one row: at the header positions when the row is aligned with them (it reaches the last
    column and no value runs across a column start), else by whitespace."""
    line = line.rstrip()
    n = len(cols)
    if cols[-1].start >= 0 and len(line) > cols[-1].start and all(c.start == 0 or line[c.start - 1] == " " for c in cols):
        return [line[c.start : cols[i + 1].start if i + 1 < n else None].strip() for i, c in enumerate(cols)]
    parts = _TWO_SPACES.split(line.strip())
    if len(parts) == n:
        return parts
    parts = _CELLS.findall(line)
    if len(parts) == n:
        return parts
    if len(parts) > n and free_last:
        return parts[: n - 1] + [" ".join(parts[n - 1 :])]
    return None


def _name(cell: str, kind: str) -> str | None:
    for prefix in _PREFIXES.get(kind, ()):
        if cell.startswith(prefix):
            cell = cell[len(prefix) :]
            break
    return cell if _NAME.match(cell) else None


def _none(cell: str | None) -> str | None:
    return None if cell in (None, "", "<none>", "<unknown>") else cell


class _Tables:
    """Turns the rows of one document into model objects, table by table."""

    def __init__(self, doc: Document, start: int, end: int):
        self.doc = doc
        self.resource = object_table(doc.command)
        self.start, self.end = start, end
        self.namespace = namespace_from_command(doc.command)
        self.pods: dict[tuple, Pod] = {}  # `-w` output repeats a pod: the last row is its latest state
        self.out: list = []

    def run(self) -> list:
        cols = implied_header(self.doc.command)
        kind = "pods" if cols else "other"
        last_event: int | None = None  # index in self.out of the event a continuation line belongs to
        lines = self.doc.lines
        for i in range(self.start, self.end):
            line = lines[i]
            if not line.strip():
                cols, last_event = None, None
                continue
            header = header_columns(line)
            if header:
                cols, kind, last_event = header, table_kind(header), None
                continue
            if cols is None or (kind == "other" and self.resource is None):
                continue
            if kind == "other":
                kind = "objects"
            cells = split_row(line, cols, free_last=cols[-1].name == "MESSAGE")
            row = dict(zip((c.name for c in cols), cells)) if cells else None
            obj = getattr(self, f"_{kind}")(row, i) if row else None
            if obj is not None:
                if isinstance(obj, Pod):
                    self.pods[obj.key] = obj
                else:
                    self.out.append(obj)
                last_event = len(self.out) - 1 if isinstance(obj, Event) else None
            elif kind == "events" and last_event is not None:
                ev = self.out[last_event]  # a message that went on to the next line
                self.out[last_event] = replace(ev, message=f"{ev.message}\n{line.strip()}")
            else:
                cols = None  # not a row of this table: the table ended
        return list(self.pods.values()) + self.out

    def _pods(self, row: dict, i: int) -> Pod | None:
        name = _name(row.get("NAME", ""), "pods")
        ready = row.get("READY", "")
        restarts, last_restart = parse_restarts(row.get("RESTARTS"))
        if not name or not _READY.match(ready) or restarts is None or not row.get("STATUS"):
            return None
        return Pod(
            name=name,
            namespace=row.get("NAMESPACE") or self.namespace,
            node=_none(row.get("NODE")),
            status=row["STATUS"],
            ready=ready,
            restarts=restarts,
            last_restart=last_restart,
            age=row.get("AGE") or None,
            labels=parse_label_string(row.get("LABELS")),
            owner=owner_from_pod_name(name),
            evidence=self.doc.evidence(i),
        )

    def _objects(self, row: dict, i: int) -> K8sObject | None:
        name = _name(row.get("NAME", ""), "objects")
        if not name:
            return None
        kind, paths = self.resource
        namespace = row.get("NAMESPACE") or self.namespace
        body: dict = {"metadata": {"name": name, **({"namespace": namespace} if namespace else {})},
                      "columns": {k: v for k, v in row.items() if k not in ("NAME", "NAMESPACE")}}
        line = self.doc.first_line + i
        key_lines = {"metadata.name": line}
        for col, path in paths.items():
            if row.get(col):
                node = body
                *parents, leaf = path.split(".")
                for part in parents:
                    node = node.setdefault(part, {})
                node[leaf] = row[col]
                key_lines[path] = line
        return K8sObject(kind=kind, name=name, namespace=namespace, body=body, artifact=self.doc.artifact, line=line, key_lines=key_lines)

    def _daemonsets(self, row: dict, i: int) -> DaemonSet | None:
        name = _name(row.get("NAME", ""), "daemonsets")
        desired = to_int(row.get("DESIRED"))
        if not name or desired is None:
            return None
        return DaemonSet(
            name=name,
            namespace=row.get("NAMESPACE") or self.namespace,
            desired=desired,
            current=to_int(row.get("CURRENT")),
            ready=to_int(row.get("READY")),
            up_to_date=to_int(row.get("UP-TO-DATE")),
            available=to_int(row.get("AVAILABLE")),
            node_selector=_none(row.get("NODE SELECTOR") or row.get("NODE-SELECTOR")),
            age=row.get("AGE") or None,
            evidence=self.doc.evidence(i),
        )

    def _nodes(self, row: dict, i: int) -> Node | None:
        name = _name(row.get("NAME", ""), "nodes")
        m = _NODE_STATUS.match(row.get("STATUS", ""))
        if not name or not m:
            return None
        ev = self.doc.evidence(i)
        ready = {"Ready": "True", "NotReady": "False"}.get(m.group(1), "Unknown")
        labels = parse_label_string(row.get("LABELS"))
        fields = {"kernel_version": "KERNEL-VERSION", "os_image": "OS-IMAGE", "container_runtime": "CONTAINER-RUNTIME", "kubelet_version": "VERSION"}
        values = {attr: _none(row.get(col)) for attr, col in fields.items()}
        evidence = {"name": ev, "condition:Ready": ev, "unschedulable": ev}
        evidence.update({attr: ev for attr, v in values.items() if v})
        evidence.update({f"label:{k}": ev for k in labels})
        return Node(
            name=name,
            labels=labels,
            conditions=(NodeCondition("Ready", ready, evidence=ev),),
            unschedulable="SchedulingDisabled" in m.group(2).split(","),
            evidence=evidence,
            artifact=self.doc.artifact,
            **values,
        )

    def _events(self, row: dict, i: int) -> Event | None:
        etype, reason = row.get("TYPE", ""), row.get("REASON", "")
        if not _EVENT_TYPE.match(etype) or not reason or " " in reason:
            return None
        last_seen = row.get("LAST SEEN") or row.get("LASTSEEN") or ""
        count, last, first = parse_interval(last_seen)
        obj = row.get("OBJECT") or (f"{row['KIND']}/{row['NAME']}" if row.get("NAME") and row.get("KIND") else None)
        if obj and "/" in obj:  # `kubectl events` prints Pod/x, `get events` pod/x: one spelling
            kind, _, oname = obj.partition("/")
            obj = f"{kind.lower()}/{oname}"
        source = _none(row.get("SOURCE"))
        node = source_node(source) or (obj.split("/", 1)[1] if obj and obj.startswith("node/") else None)
        return Event(
            reason=reason,
            message=row.get("MESSAGE", ""),
            type=etype,
            namespace=row.get("NAMESPACE") or self.namespace,
            object=obj or None,
            source=source,
            node=node,
            count=to_int(row.get("COUNT")) or count,
            age=last_seen or None,
            first_seen=row.get("FIRST SEEN") or row.get("FIRSTSEEN") or first,
            last_seen=last,
            evidence=self.doc.evidence(i),
        )


def parse_lines(doc: Document, start: int = 0, end: int | None = None) -> list:
    """Every table between lines[start:end] of a document (the describe parser hands over table regions)."""
    return _Tables(doc, start, len(doc.lines) if end is None else end).run()


def _kinds(doc: Document) -> tuple[tuple[str, ...], bool]:
    """The kinds of the tables near the top of a document, and whether the first non-blank line is a header.
    The table sniffers (one per kind) ask one after another about the same document: the last answer is kept."""
    global _last_kinds
    if _last_kinds[0] is doc:
        return _last_kinds[1]
    answer = _kinds_of(doc)
    _last_kinds = (doc, answer)
    return answer


_last_kinds: tuple = (None, ((), False))


def _kinds_of(doc: Document) -> tuple[tuple[str, ...], bool]:
    kinds: list[str] = []
    first = True
    at_top = False
    for line in doc.head(_SNIFF_LINES):
        cols = header_columns(line)
        if cols:
            kinds.append(table_kind(cols))
            at_top = at_top or first
        first = False
    return tuple(kinds), at_top


def _sniffer(kind: str):
    def sniff(doc: Document) -> int:
        kinds, at_top = _kinds(doc)
        known = [k for k in kinds if k != "other"]
        if not kinds and kind == "pods" and (cols := implied_header(doc.command)):
            ready_at = [c.name for c in cols].index("READY")
            rows = [split_row(ln, cols) for ln in doc.head(5)]
            return LIKELY + 20 if rows and all(r and _READY.match(r[ready_at]) for r in rows) else NO
        if not known:
            return NO
        mine = set(kinds) == {kind} if kind != "all" else len(set(kinds)) > 1
        if not mine:
            return NO
        return SURE if at_top else LIKELY + 10

    return sniff


def object_table(command: str | None) -> tuple[str, dict] | None:
    """(kind, column paths) when the command is `kubectl get <resource>` of a kind listed in _OBJECT_TABLES."""
    m = _GET_RESOURCE.search(command or "")
    if not m:
        return None
    res = m.group("res")
    for cand in (res, res[:-2] if res.endswith("es") else None, res[:-1] if res.endswith("s") else None):
        if cand in _OBJECT_TABLES:
            return _OBJECT_TABLES[cand]
    return None


def _sniff_objects(doc: Document) -> int:
    kinds, at_top = _kinds(doc)
    return LIKELY + 10 if object_table(doc.command) and kinds and set(kinds) == {"other"} and at_top else NO


def _parse(doc: Document) -> Iterator:
    return iter(parse_lines(doc))


get_pods = parser("kubectl.get-pods", "`kubectl get pods` table (any namespace/wide/labels variant)", _sniffer("pods"))(_parse)
get_daemonsets = parser("kubectl.get-daemonsets", "`kubectl get ds` table", _sniffer("daemonsets"))(_parse)
get_nodes = parser("kubectl.get-nodes", "`kubectl get nodes` table (wide, labels)", _sniffer("nodes"))(_parse)
get_events = parser("kubectl.get-events", "`kubectl get events` table (current and 1.x layouts)", _sniffer("events"))(_parse)
get_objects = parser("kubectl.get-objects", "`kubectl get runtimeclass|clusterpolicy|nvidiadriver|cm|deploy|resourceclaim` tables",
                     _sniff_objects)(_parse)
get_all = parser("kubectl.get-all", "several `kubectl get` tables in one document (`get all`)", _sniffer("all"))(_parse)


def _sniff_labels(doc: Document) -> int:
    head = doc.head(8)
    if len(head) < 3 or not _NAME.match(head[0].strip()):
        return NO
    labels = sum(1 for ln in head[1:] if _LABEL_LINE.match(ln))
    return SURE if labels >= 2 and _LABEL_LINE.match(head[1]) else NO


@parser("must-gather.node-labels", "GPU Operator must-gather `gpu_nodes.labels` (node name, then `- key=value`)", _sniff_labels)
def node_labels(doc: Document) -> Iterable[Node]:
    name: str | None = None
    labels: dict[str, str] = {}
    evidence: dict = {}

    def flush() -> Iterator[Node]:
        if name:
            yield Node(name=name, labels=dict(labels), evidence=dict(evidence), artifact=doc.artifact)

    for i, line in enumerate(doc.lines):
        text = line.strip()
        m = _LABEL_LINE.match(text)
        if m and name:
            labels[m.group("key")] = m.group("value")
            evidence[f"label:{m.group('key')}"] = doc.evidence(i)
        elif text.startswith("map[") and name:  # kubectl < 1.11 printed maps as map[k:v k2:v2]
            for pair in text[4:].rstrip("]").split():
                key, _, value = pair.partition("=")
                labels[key] = value
                evidence[f"label:{key}"] = doc.evidence(i)
        elif _NAME.match(text):
            yield from flush()
            name, labels, evidence = text, {}, {"name": doc.evidence(i)}
    yield from flush()
