"""`kubectl describe` of pods, nodes and daemonsets: whole, several concatenated, or pasted fragments.

The layout is kubectl's (k8s.io/kubectl/pkg/describe/describe.go): top-level `Key:<tab>value` lines at
column 0, multi-line values (Labels, Taints, Tolerations) continued on indented lines, two-space levels
below (`Containers:` / `  name:` / `    State:` / `      Reason:`), tabwriter-aligned tables (node
Conditions, Non-terminated Pods, Allocated resources, Events), then Events last. Objects start at a
`Name:` line at column 0. Text before the first `Name:` is a fragment (a paste that begins at
`Capacity:`, `Events:` or in the middle of `Containers:`): what it shows is kept, with the name left None.

Events: the current `Type Reason Age From Message` table (ages like `2m (x832 over 3h28m)`), the 1.x
`FirstSeen LastSeen Count From SubObjectPath Type Reason Message` table, the old `kubelet, <node>` From,
and messages that continue on following lines (kubectl prints a message's newlines as they are, which
also ends tabwriter's alignment, so rows after such a message are split by their contents).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator

from gpusleuth.model.document import Document
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.k8s import ContainerStatus, DaemonSet, Event, Node, NodeCondition, Pod, Taint
from gpusleuth.parsers import kubectl_table
from gpusleuth.parsers.base import LIKELY, NO, SURE, parser
from gpusleuth.parsers.k8s_common import (
    GPU_RESOURCE,
    kubectl_status,
    namespace_from_command,
    parse_interval,
    parse_time,
    resource_totals,
    source_node,
    to_int,
)

_NAME_LINE = re.compile(r"^Name:\s+(?P<name>\S+)\s*$")
_POD_ERROR = re.compile(r"^Pod '(?P<name>[^']+)': error ")
_KEY = re.compile(r"^(?P<key>[A-Z][A-Za-z0-9 ./()-]*?):(?:\s+(?P<value>.*?))?\s*$")
_SUB = re.compile(r"^(?P<indent>\s+)(?P<key>[^\s:][^:]*?):(?:\s+(?P<value>.*?))?\s*$")
_CONTAINER_NAME = re.compile(r"^(?P<indent>\s+)(?P<name>[a-z0-9]([-a-z0-9.]*[a-z0-9])?):\s*$")
_DASHES = re.compile(r"^\s*-{2,}(\s+-{2,})*\s*$")
_TAINT = re.compile(r"^(?P<key>[^=:\s]+)(?:=(?P<value>[^:\s]*))?:(?P<effect>NoSchedule|PreferNoSchedule|NoExecute)$")
_TOLERATION = re.compile(r"^(?P<key>[^=:\s]*)(?:=(?P<value>[^:\s]*))?(?::(?P<effect>[A-Za-z]+))?\s*(?P<exists>op=Exists)?(?:\s*for (?P<secs>\d+)s)?$")
_CONDITION_ROW = re.compile(
    r"^\s+(?P<type>\S+)\s+(?P<status>True|False|Unknown)\s+(?P<hb>.*?(?:\d{2}:\d{2}:\d{2} [+-]\d{4}|<unknown>|<unset>))\s+"
    r"(?P<tr>.*?(?:\d{2}:\d{2}:\d{2} [+-]\d{4}|<unknown>|<unset>))\s+(?P<reason>\S+)\s+(?P<message>.*)$"
)
_ALLOCATED_ROW = re.compile(r"^\s+(?P<res>\S+)\s+(?P<req>\S+)(?: \(\d+%\))?\s+(?P<lim>\S+)(?: \(\d+%\))?\s*$")
_EVENT_ROW = re.compile(
    r"^\s+(?P<type>[A-Z][A-Za-z]+)\s+(?P<reason>\S+)\s+(?P<age><unknown>|<invalid>|\S+(?: \(x\d+ over [^)]*\))?)\s+(?P<rest>\S.*)$"
)
_AGE = re.compile(r"^(<unknown>|<invalid>|\d+[smhdy]\S*|\S+ \(x\d+ over [^)]*\))$")
_TWO_SPACES = re.compile(r"\s{2,}")
_DESCRIBE_CMD = re.compile(
    r"\bdescribe\s+(?:(?:-n|--namespace)[= ]\S+\s+)?(?P<kind>pods?|po|nodes?|no|daemonsets?|ds)(?:\s+|/)(?P<name>[a-z0-9][a-z0-9.-]*)(?:\s|$)"
)
_COMMAND_KINDS = {"po": "pod", "pod": "pod", "pods": "pod", "no": "node", "node": "node", "nodes": "node",
                  "ds": "daemonset", "daemonset": "daemonset", "daemonsets": "daemonset"}
_TOKEN = re.compile(r"\S+")
_PHRASE = re.compile(r"\S+(?: \S+)*")

_POD_KEYS = {
    "Priority", "Priority Class Name", "Runtime Class Name", "Service Account", "Node", "Start Time", "Status",
    "IP", "IPs", "Controlled By", "NominatedNodeName", "Init Containers", "Containers", "Ephemeral Containers",
    "Readiness Gates", "Volumes", "QoS Class", "Node-Selectors", "Tolerations", "Topology Spread Constraints",
    "Termination Grace Period", "SeccompProfile", "Resources",
}
_NODE_KEYS = {
    "Roles", "Taints", "Unschedulable", "Lease", "Addresses", "Capacity", "Allocatable", "System Info", "PodCIDR",
    "PodCIDRs", "ProviderID", "ExternalID", "Non-terminated Pods", "Allocated resources",
}
_DS_KEYS = {
    "Node-Selector", "Desired Number of Nodes Scheduled", "Current Number of Nodes Scheduled",
    "Number of Nodes Scheduled with Up-to-date Pods", "Number of Nodes Scheduled with Available Pods",
    "Number of Nodes Misscheduled",
}
_COMMON_KEYS = {"Name", "Namespace", "Labels", "Annotations", "CreationTimestamp", "Selector", "Pods Status",
                "Pod Template", "Conditions", "Reason", "Message", "Events"}
_TOP_KEYS = _POD_KEYS | _NODE_KEYS | _DS_KEYS | _COMMON_KEYS
_FRAGMENT_KEYS = (_POD_KEYS | _NODE_KEYS | _DS_KEYS | {"Events"}) - {"Node", "Status", "IP", "Priority"}
_CONTAINER_FIELDS = {"State", "Last State", "Restart Count", "Container ID", "Image ID", "Ready", "Image"}
_SYSTEM_INFO = {
    "Kernel Version": "kernel_version", "OS Image": "os_image",
    "Container Runtime Version": "container_runtime", "Kubelet Version": "kubelet_version",
}
_STATES = {"Running": "running", "Waiting": "waiting", "Terminated": "terminated"}


@dataclass
class _Section:
    key: str | None
    value: str
    line: int
    body: list[int] = field(default_factory=list)


@dataclass
class _State:
    state: str | None = None
    reason: str | None = None
    message: str | None = None
    exit_code: int | None = None
    started: str | None = None
    finished: str | None = None


@dataclass
class _Container:
    name: str | None
    init: bool
    image: str | None = None
    current: _State = field(default_factory=_State)
    last: _State = field(default_factory=_State)
    ready: bool | None = None
    restarts: int | None = None
    requests: dict = field(default_factory=dict)
    limits: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)
    state_line: int | None = None
    first_line: int = 0

    def status(self, doc: Document) -> ContainerStatus:
        cur, last = self.current, self.last
        return ContainerStatus(
            name=self.name,
            init=self.init,
            image=self.image,
            state=cur.state,
            reason=cur.reason,
            message=cur.message,
            exit_code=cur.exit_code,
            ready=self.ready,
            restarts=self.restarts,
            started_at=parse_time(cur.started),
            finished_at=parse_time(cur.finished),
            last_reason=last.reason,
            last_message=last.message,
            last_exit_code=last.exit_code,
            last_started_at=parse_time(last.started),
            last_finished_at=parse_time(last.finished),
            evidence=doc.evidence(self.state_line if self.state_line is not None else self.first_line),
        )


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _top_key(line: str) -> tuple[str, str] | None:
    if not line or line[0] == " ":
        return None
    m = _KEY.match(line)
    if m and m.group("key") in _TOP_KEYS:
        return m.group("key"), (m.group("value") or "").strip()
    return None


def _value(by_key: dict[str | None, _Section], key: str) -> str | None:
    """A top-level field's value on its own line (None when absent or empty)."""
    sec = by_key.get(key)
    return sec.value or None if sec else None


def _values(doc: Document, sec: _Section) -> list[tuple[int, str]]:
    """A multi-line value (Labels, Taints, Tolerations, Node-Selectors): the key line's value, then one per line."""
    out = []
    if sec.value and sec.value != "<none>":
        out.append((sec.line, sec.value))
    for i in sec.body:
        text = doc.lines[i].strip()
        if text and text != "<none>":
            out.append((i, text))
    return out


def _labels(doc: Document, sec: _Section) -> tuple[dict, dict]:
    labels, evidence = {}, {}
    for i, text in _values(doc, sec):
        key, eq, value = text.partition("=")
        if eq and key and " " not in key:
            labels[key] = value
            evidence[f"label:{key}"] = doc.evidence(i)
    return labels, evidence


def _sections(doc: Document, start: int, end: int) -> tuple[list[_Section], list[int]]:
    """Top-level sections of one object, and the lines before the first one (a fragment's head)."""
    sections: list[_Section] = []
    pre: list[int] = []
    in_events = False
    for i in range(start, end):
        line = doc.lines[i]
        top = None if in_events else _top_key(line)
        if top:
            sections.append(_Section(top[0], top[1], i))
            in_events = top[0] == "Events"
        elif sections:
            sections[-1].body.append(i)
        else:
            pre.append(i)
    return sections, pre


def _segments(doc: Document) -> Iterator[tuple[str, int, int]]:
    """("object"|"table", start, end) regions: objects start at `Name:`, tables at a `kubectl get` header."""
    lines = doc.lines
    starts: list[tuple[str, int]] = [("object", 0)]
    for i, line in enumerate(lines):
        if _NAME_LINE.match(line) or _POD_ERROR.match(line):
            starts.append(("object", i))
        elif line[:1].isupper() and kubectl_table.header_columns(line):
            if starts[-1][0] != "table":
                starts.append(("table", i))
    for n, (kind, start) in enumerate(starts):
        end = starts[n + 1][1] if n + 1 < len(starts) else len(lines)
        if end > start:
            yield kind, start, end


def _object_kind(keys: set[str]) -> str:
    scores = {"pod": len(keys & _POD_KEYS), "node": len(keys & _NODE_KEYS), "daemonset": len(keys & _DS_KEYS)}
    kind, score = max(scores.items(), key=lambda kv: kv[1])
    return kind if score else "other"


def _looks_like_containers(doc: Document, lines: list[int]) -> bool:
    seen = set()
    for i in lines:
        m = _SUB.match(doc.lines[i])
        if m and m.group("key") in _CONTAINER_FIELDS:
            seen.add(m.group("key"))
    return len(seen) >= 2


def _containers(doc: Document, lines: list[int], init: bool) -> list[_Container]:
    """Container blocks: `  name:` then fields one level deeper; a fragment may begin inside a nameless block."""
    out: list[_Container] = []
    cur: _Container | None = None
    name_indent: int | None = None
    field_indent: int | None = None
    field_key: str | None = None
    state: _State | None = None
    sub_key: str | None = None
    sub_indent: int | None = None
    for i in lines:
        line = doc.lines[i]
        if not line.strip():
            continue
        indent = _indent(line)
        m = _CONTAINER_NAME.match(line)
        if m and (field_indent is None or indent < field_indent) and (name_indent is None or indent == name_indent):
            cur = _Container(m.group("name"), init, first_line=i)
            out.append(cur)
            name_indent, field_key, state = indent, None, None
            continue
        f = _SUB.match(line)
        if f and (field_indent is None or indent == field_indent) and (field_indent is not None or f.group("key") in _CONTAINER_FIELDS):
            if cur is None:
                cur = _Container(None, init, first_line=i)
                out.append(cur)
            field_indent, field_key, sub_key, sub_indent = indent, f.group("key"), None, None
            value = (f.group("value") or "").strip()
            state = None
            if field_key in ("State", "Last State"):
                state = cur.current if field_key == "State" else cur.last
                state.state = _STATES.get(value.split()[0] if value else "", value.lower() or None)
                if field_key == "State":
                    cur.state_line = i
            elif field_key == "Image":
                cur.image = value or None
            elif field_key == "Ready":
                cur.ready = {"True": True, "False": False}.get(value)
            elif field_key == "Restart Count":
                cur.restarts = to_int(value)
            continue
        if cur is None or field_key is None or (field_indent is not None and indent <= field_indent and indent > 0):
            continue
        if sub_indent is None and f:
            sub_indent = indent
        sub = f if f and indent == sub_indent else None
        if state is not None:
            if sub:
                sub_key = sub.group("key")
                value = (sub.group("value") or "").strip()
                if sub_key == "Reason":
                    state.reason = value or None
                elif sub_key == "Message":
                    state.message = value
                elif sub_key == "Exit Code":
                    state.exit_code = to_int(value)
                elif sub_key == "Started":
                    state.started = value
                elif sub_key == "Finished":
                    state.finished = value
            elif sub_key == "Message" and state.message is not None:
                state.message = f"{state.message}\n{line.strip()}"  # a message printed with its newlines
        elif field_key in ("Limits", "Requests") and sub:
            (cur.limits if field_key == "Limits" else cur.requests)[sub.group("key")] = (sub.group("value") or "").strip()
        elif field_key == "Environment" and sub:
            cur.env.setdefault(sub.group("key"), (sub.group("value") or "").strip())
    return out


def _header(line: str, words: bool = False) -> list[tuple[str, int]]:
    """Column names and starts of a describe table header; names may hold a space ("CPU Requests") since
    describe pads with two spaces at least. The 1.x events header padded with tabs: one word per column."""
    return [(m.group(), m.start()) for m in (_TOKEN if words else _PHRASE).finditer(line)]


def _cells(line: str, header: list[tuple[str, int]]) -> dict[str, str] | None:
    cols = tuple(kubectl_table.Column(name, start) for name, start in header)
    cells = kubectl_table.split_row(line, cols)
    return dict(zip((name for name, _ in header), cells)) if cells else None


class _Describe:
    def __init__(self, doc: Document):
        self.doc = doc
        self.namespace = namespace_from_command(doc.command)
        self.out: list = []
        self.target: tuple[str, str] | None = None  # (kind, name) a fragment belongs to, from its command

    def run(self) -> list:
        segments = list(_segments(self.doc))
        m = _DESCRIBE_CMD.search(self.doc.command or "")
        if m and sum(1 for kind, _, _ in segments if kind == "object") == 1 and not any(map(_NAME_LINE.match, self.doc.lines)):
            self.target = (_COMMAND_KINDS[m.group("kind")], m.group("name"))
        for kind, start, end in segments:
            if kind == "table":
                self.out.extend(kubectl_table.parse_lines(self.doc, start, end))
            else:
                self._object(start, end)
        return self.out

    # -- one object ------------------------------------------------------------------------------------

    def _object(self, start: int, end: int) -> None:
        doc = self.doc
        sections, pre = _sections(doc, start, end)
        by_key = {s.key: s for s in sections}
        name_sec = by_key.get("Name")
        name = name_sec.value if name_sec and name_sec.value else None
        pod_error = _POD_ERROR.match(doc.lines[start])
        if pod_error:
            name = pod_error.group("name")
        keys = set(by_key)
        pre_containers = _looks_like_containers(doc, pre)
        if pre_containers:
            keys.add("Containers")
        kind = "pod" if pod_error else _object_kind(keys)
        if name is None and self.target and kind in (self.target[0], "other"):
            kind, name = self.target
        namespace = _value(by_key, "Namespace") or self.namespace
        if kind == "pod":
            self._pod(name, namespace, by_key, pre if pre_containers else [], start)
        elif kind == "node":
            self._node(name, by_key)
        elif kind == "daemonset":
            self._daemonset(name, namespace, by_key)
        elif "Events" in by_key:
            self._events(by_key["Events"].body, name, namespace, None)
        if "Events" not in by_key and not pre_containers:  # a fragment that begins at the events table header
            self._events(pre, f"{kind}/{name}" if name and kind != "other" else name, namespace, None)

    def _pod(self, name, namespace, by_key: dict, pre: list[int], start: int) -> None:
        doc = self.doc
        inits = _containers(doc, by_key["Init Containers"].body, True) if "Init Containers" in by_key else []
        apps = _containers(doc, by_key["Containers"].body, False) if "Containers" in by_key else []
        if pre:  # a fragment that began inside a containers block: init containers when `Containers:` follows
            head = _containers(doc, pre, init="Containers" in by_key)
            inits, apps = (head + inits, apps) if "Containers" in by_key else (inits, head + apps)
        node_value = _value(by_key, "Node")
        node = node_value.split("/", 1)[0] if node_value and node_value != "<none>" else None
        phase_value = _value(by_key, "Status") or ""
        deleting = phase_value.startswith("Terminating")
        phase = None if deleting else (phase_value or None)
        ready_condition = None
        if "Conditions" in by_key:
            for i in by_key["Conditions"].body:
                parts = doc.lines[i].split()
                if len(parts) == 2 and parts[0] == "Ready":
                    ready_condition = parts[1] == "True"
        init_statuses, app_statuses = [c.status(doc) for c in inits], [c.status(doc) for c in apps]
        status, restarts = kubectl_status(phase, _value(by_key, "Reason"), init_statuses, app_statuses, ready_condition, deleting)
        containers = tuple(init_statuses + app_statuses)
        totals = resource_totals((c.init, c.requests, c.limits) for c in inits + apps)
        env: dict = {}
        for c in inits + apps:
            for k, v in c.env.items():
                env.setdefault(k, v)
        labels = _labels(doc, by_key["Labels"])[0] if "Labels" in by_key else {}
        selector = _labels(doc, by_key["Node-Selectors"])[0] if "Node-Selectors" in by_key else {}
        tolerations = tuple(t for _, text in _values(doc, by_key["Tolerations"]) if (t := _toleration(text))) if "Tolerations" in by_key else ()
        first = by_key["Name"].line if "Name" in by_key else (pre[0] if pre else start)
        whole = "Name" in by_key  # a fragment's STATUS/READY would be computed from part of the pod
        started = parse_time(_value(by_key, "Start Time"))
        if not containers and not whole:
            if "Events" in by_key:
                self._events(by_key["Events"].body, f"pod/{name}" if name else None, namespace, node)
            return
        self.out.append(
            Pod(
                name=name,
                namespace=namespace,
                node=node,
                status=status if whole else None,
                phase=phase,
                ready=f"{sum(1 for c in apps if c.ready)}/{len(apps)}" if apps and whole else None,
                restarts=restarts if whole else None,
                containers=containers,
                labels=labels,
                owner=_value(by_key, "Controlled By"),
                gpu_request=totals.get(GPU_RESOURCE, 0) if (inits or apps) and whole else None,
                resource_requests=totals if whole else {},
                runtime_class=_value(by_key, "Runtime Class Name"),
                node_selector=selector,
                tolerations=tolerations,
                env=env,
                images=tuple(c.image for c in inits + apps if c.image),
                start_time=started,
                start_evidence=doc.evidence(by_key["Start Time"].line) if started else None,
                evidence=doc.evidence(first),
            )
        )
        if "Events" in by_key:
            self._events(by_key["Events"].body, f"pod/{name}" if name else None, namespace, node)

    def _node(self, name, by_key: dict) -> None:
        doc = self.doc
        evidence: dict[str, Evidence] = {}
        if "Name" in by_key:
            evidence["name"] = doc.evidence(by_key["Name"].line)
        labels = {}
        if "Labels" in by_key:
            labels, label_ev = _labels(doc, by_key["Labels"])
            evidence.update(label_ev)
        taints = []
        if "Taints" in by_key:
            for i, text in _values(doc, by_key["Taints"]):
                m = _TAINT.match(text)
                if m:
                    ev = doc.evidence(i)
                    taints.append(Taint(m.group("key"), m.group("value"), m.group("effect"), ev))
                    evidence.setdefault(f"taint:{m.group('key')}", ev)
        unschedulable = None
        if "Unschedulable" in by_key:
            unschedulable = {"true": True, "false": False}.get(by_key["Unschedulable"].value.lower())
            evidence["unschedulable"] = doc.evidence(by_key["Unschedulable"].line)
        conditions = self._conditions(by_key["Conditions"].body) if "Conditions" in by_key else []
        for c in conditions:
            evidence[f"condition:{c.type}"] = c.evidence
        capacity = self._resources(by_key.get("Capacity"), "capacity", evidence)
        allocatable = self._resources(by_key.get("Allocatable"), "allocatable", evidence)
        info: dict[str, str] = {}
        if "System Info" in by_key:
            for i in by_key["System Info"].body:
                m = _SUB.match(doc.lines[i])
                attr = _SYSTEM_INFO.get(m.group("key")) if m else None
                if attr and m.group("value"):
                    info[attr] = m.group("value").strip()
                    evidence[attr] = doc.evidence(i)
        allocated: dict[str, str] = {}
        if "Allocated resources" in by_key:
            for i in by_key["Allocated resources"].body:
                m = _ALLOCATED_ROW.match(doc.lines[i])
                if m and m.group("res") not in ("Resource", "--------"):
                    allocated[m.group("res")] = m.group("req")
                    evidence[f"allocated:{m.group('res')}"] = doc.evidence(i)
        if not (name or capacity or allocatable or taints or conditions or info or allocated):
            if "Events" in by_key:
                self._events(by_key["Events"].body, None, None, None)
            return
        self.out.append(
            Node(
                name=name,
                labels=labels,
                taints=tuple(taints),
                capacity=capacity,
                allocatable=allocatable,
                conditions=tuple(conditions),
                unschedulable=unschedulable,
                allocated=allocated,
                evidence=evidence,
                artifact=doc.artifact,
                **info,
            )
        )
        if name and "Non-terminated Pods" in by_key:
            self._node_pods(by_key["Non-terminated Pods"].body, name)
        if "Events" in by_key:
            self._events(by_key["Events"].body, f"node/{name}" if name else None, None, name)

    def _daemonset(self, name, namespace, by_key: dict) -> None:
        doc = self.doc

        def num(key: str) -> int | None:
            return to_int(_value(by_key, key))

        selector = _value(by_key, "Node-Selector")
        if name:
            self.out.append(
                DaemonSet(
                    name=name,
                    namespace=namespace,
                    desired=num("Desired Number of Nodes Scheduled"),
                    current=num("Current Number of Nodes Scheduled"),
                    up_to_date=num("Number of Nodes Scheduled with Up-to-date Pods"),
                    available=num("Number of Nodes Scheduled with Available Pods"),
                    node_selector=None if selector in (None, "", "<none>") else selector,
                    evidence=doc.evidence(by_key["Name"].line),
                )
            )
        if "Events" in by_key:
            self._events(by_key["Events"].body, f"daemonset/{name}" if name else None, namespace, None)

    # -- tables inside a describe ---------------------------------------------------------------------

    def _resources(self, sec: _Section | None, prefix: str, evidence: dict) -> dict:
        out: dict[str, str] = {}
        for i in sec.body if sec else ():
            m = _SUB.match(self.doc.lines[i])
            if m and m.group("value"):
                out[m.group("key")] = m.group("value").strip()
                evidence[f"{prefix}:{m.group('key')}"] = self.doc.evidence(i)
        return out

    def _conditions(self, body: list[int]) -> list[NodeCondition]:
        doc = self.doc
        header: list[tuple[str, int]] = []
        out = []
        for i in body:
            line = doc.lines[i]
            if not line.strip() or _DASHES.match(line):
                continue
            if not header and line.split()[:2] == ["Type", "Status"]:
                header = _header(line)
                continue
            row = _cells(line, header) if header else None
            if not row or row.get("Status") not in ("True", "False", "Unknown"):
                m = _CONDITION_ROW.match(line)
                row = {"Type": m.group("type"), "Status": m.group("status"), "Reason": m.group("reason"), "Message": m.group("message")} if m else None
            if row:
                out.append(NodeCondition(row["Type"], row["Status"], row.get("Reason") or None, row.get("Message") or None, doc.evidence(i)))
        return out

    def _node_pods(self, body: list[int], node: str) -> None:
        doc = self.doc
        header: list[tuple[str, int]] = []
        for i in body:
            line = doc.lines[i]
            if not line.strip() or _DASHES.match(line):
                continue
            if not header:
                if line.split()[:2] == ["Namespace", "Name"]:
                    header = _header(line)
                continue
            row = _cells(line, header)
            if row and kubectl_table._NAME.match(row.get("Name", "")) and row.get("Namespace"):
                self.out.append(Pod(name=row["Name"], namespace=row["Namespace"], node=node, age=row.get("Age") or None, evidence=doc.evidence(i)))

    def _events(self, body: list[int], obj: str | None, namespace: str | None, node: str | None) -> None:
        doc = self.doc
        header: list[tuple[str, int]] = []
        old = False
        events: list[Event] = []
        for i in body:
            line = doc.lines[i]
            if not line.strip():
                if events:
                    break
                continue
            if _DASHES.match(line):
                continue
            tokens = line.split()
            if not header and tokens[:5] == ["Type", "Reason", "Age", "From", "Message"]:
                header = _header(line)
                continue
            if not header and [t.lower() for t in tokens[:3]] == ["firstseen", "lastseen", "count"]:
                header, old = _header(line, words=True), True
                continue
            if not header:
                continue
            ev = self._old_event(line, header) if old else self._event(line, header)
            if ev is None:
                if events and line.strip():  # the message went on to the next line
                    events[-1] = replace(events[-1], message=f"{events[-1].message}\n{line.strip()}")
                continue
            source_host = source_node(ev["from"])
            events.append(
                Event(
                    reason=ev["reason"],
                    message=ev["message"],
                    type=ev["type"],
                    namespace=namespace,
                    object=obj,
                    source=ev["from"] or None,
                    node=source_host or (node if (ev["from"] or "").startswith("kubelet") or (obj or "").startswith("node/") else None),
                    count=ev["count"],
                    age=ev["age"],
                    first_seen=ev["first"],
                    last_seen=ev["last"],
                    evidence=doc.evidence(i),
                )
            )
        self.out.extend(events)

    @staticmethod
    def _event(line: str, header: list[tuple[str, int]]) -> dict | None:
        row = _cells(line, header)
        if not (row and _AGE.match(row.get("Age", "")) and row.get("Type", "").isalpha() and row.get("Reason") and " " not in row["Reason"]):
            m = _EVENT_ROW.match(line)
            if not m:
                return None
            parts = _TWO_SPACES.split(m.group("rest").strip(), maxsplit=1)
            source, message = (parts[0], parts[1]) if len(parts) == 2 else ("", parts[0])
            row = {"Type": m.group("type"), "Reason": m.group("reason"), "Age": m.group("age"), "From": source, "Message": message}
        if row["Type"][:1].islower():
            return None
        count, last, first = parse_interval(row["Age"])
        return {"type": row["Type"], "reason": row["Reason"], "age": row["Age"], "from": row.get("From", ""),
                "message": row.get("Message", ""), "count": count, "last": last, "first": first}

    @staticmethod
    def _old_event(line: str, header: list[tuple[str, int]]) -> dict | None:
        row = _cells(line, header)
        if not row:
            return None
        row = {k.lower(): v for k, v in row.items()}
        if not (row.get("type", "").isalpha() and row.get("reason") and to_int(row.get("count")) is not None):
            return None
        return {"type": row["type"], "reason": row["reason"], "age": row.get("lastseen"), "from": row.get("from", ""),
                "message": row.get("message", ""), "count": to_int(row.get("count")), "last": row.get("lastseen"),
                "first": row.get("firstseen")}


def _toleration(text: str) -> dict | None:
    m = _TOLERATION.match(text)
    if not m or not any(m.group(g) for g in ("key", "effect", "exists")):
        return None
    out: dict = {"operator": "Exists" if m.group("exists") else "Equal"}
    for k in ("key", "value", "effect"):
        if m.group(k):
            out[k] = m.group(k)
    if m.group("secs"):
        out["tolerationSeconds"] = int(m.group("secs"))
    return out


def _sniff(doc: Document) -> int:
    # every document is sniffed: the per-line work stays in C (map/filter over compiled patterns)
    head = doc.head(80)
    keys = {m.group("key") for m in filter(None, map(_KEY.match, head))} & _TOP_KEYS  # what _top_key keeps
    if any(map(_NAME_LINE.match, head)) and len(keys & _DESCRIBED_KEYS) >= 2:
        return SURE
    if len(keys & _FRAGMENT_KEYS) >= 2:
        return LIKELY + 15
    if any(map(_EVENTS_HEADER.match, head)):
        return LIKELY + 15
    fields = {m.group("key") for m in filter(None, map(_SUB.match, head))} & _CONTAINER_FIELDS
    return LIKELY if len(fields) >= 3 else NO


_DESCRIBED_KEYS = _POD_KEYS | _NODE_KEYS | _DS_KEYS | {"Namespace", "Labels", "Annotations"}
# the first five words of the line are the events table's header (`line.split()[:5]`)
_EVENTS_HEADER = re.compile(r"\s*Type\s+Reason\s+Age\s+From\s+Message(?:\s|$)")


@parser("kubectl.describe", "`kubectl describe` of pods, nodes, daemonsets (whole, concatenated or fragments)", _sniff)
def describe(doc: Document) -> Iterable:
    return _Describe(doc).run()
