"""One timeline across every source and node: the lines that mean something, on one clock.

A peermem race is solved by lining up two operators' logs and seeing the GPU Operator load
nvidia_peermem minutes before the Network Operator had MOFED ready. This view does that lining-up:

* Every log line a signature (knowledge/signatures.toml) recognises becomes a ``TimelineEntry`` that keeps
  its artifact and line, its tag, and a lane (`operator/component` from knowledge/operands.toml). Kubernetes
  events and container start/finish times join them. Untagged lines are kept only when an entry's time
  depends on them (the timestamped neighbours of an untimed line).
* Clocks are reconciled, and every inference is written down in ``notes``:
  - year-less stamps (klog, syslog) take the year of the other sources, then of the capture time;
  - zone-less stamps (MOFED, syslog, `dmesg -T`, Go's log, ISO without offset) take the zone a `date` line
    or the container's start time in the same pod proves, else the zone that makes them overlap the
    zone-aware sources and start together with them, else (for host logs only) the one non-UTC offset
    kubectl printed its times in (describe's `Start Time:`), else UTC — said so each time;
  - `dmesg` uptime becomes wall-clock time when the boot time follows from the same kernel messages seen
    with a wall-clock time (`dmesg -T`, journal, syslog with the uptime in the message), or from the node's
    /proc/uptime read by a probe at a known time, else it stays relative and is labelled so;
  - lines with no stamp (`set -x` traces, installer output) take the interval between their timestamped
    neighbours in the same container (or the container's start/finish, the end of the pod's init
    containers, the capture time) and are marked approximate;
  - event ages (`23m`, `(x4 over 8m21s)`) are anchored to the capture time (bundle manifest, a `date`
    command's output, else the newest timestamp in the artifacts) with the source named.
* Phase durations come from the [[phase]] table of knowledge/ordering.toml.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from functools import cache
from itertools import compress, groupby, repeat
from operator import attrgetter, eq, not_

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.logs import Logs, Signature, signatures
from gpusleuth.facts.operands import OperandSpec, operand_table, spec_for, spec_for_name
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.knowledge import table
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.host import Uptime
from gpusleuth.model.k8s import Pod
from gpusleuth.model.logs import ContainerLog, LogLine
from gpusleuth.model.report import TimelineEntry
from gpusleuth.parsers.timestamps import BY_ID, YEARLESS, fixed_zone, format_duration, parse_event_age

UTC = timezone.utc
ZONE_STEP_MIN = 15  # zone offsets are whole quarter hours
ALIGN_SLACK = timedelta(minutes=2)  # UTC is kept when it aligns this nearly as well as the best zone
START_MATCH = timedelta(minutes=10)  # a container's first line is this close after its start time
_SEVERITY_RANK = {"critical": 0, "error": 1, "warning": 2, "info": 3}
_WHO, _ARTIFACT, _LINE, _TIME = attrgetter("pod", "container"), attrgetter("artifact"), attrgetter("line"), attrgetter("time")
_WHO_WHERE = attrgetter("pod", "container", "artifact")
_NODE = attrgetter("node")
_MESSAGE, _FORMAT, _TZINFO = attrgetter("message"), attrgetter("time_format"), attrgetter("tzinfo")
_KERNEL_LANE = "node/kernel"
# Entries made from pod status times rather than log lines; rules and phases may name them like signatures.
STATUS_STARTED, STATUS_TERMINATED = "status.started", "status.terminated"
_HASH_SUFFIX = re.compile(r"-(?:[0-9a-f]{8,10}-)?[a-z0-9]{5}$")
# Terminal control sequences a script wrote (openibd's "[60G[  OK  ]"), with or without the ESC a paste lost.
_CONTROL = re.compile(r"\x1b?\[\d{1,3}(?:;\d{1,3})*[A-HJKSTfmG]")


def display(text: str) -> str:
    """A log message as a timeline shows it: control sequences gone, one line, at most 400 characters."""
    return " ".join(_CONTROL.sub(" ", text).split())[:400]


def hhmm(t: datetime | None) -> str:
    return t.astimezone(UTC).strftime("%H:%M:%S") if t else "?"


def when(e: TimelineEntry) -> str:
    """11:58:39 exact; ≈11:56:41 placed by another source; ~11:54–11:56 between neighbours; ≥/≤ half-open."""
    if e.time and not e.approximate:
        return hhmm(e.time)
    if e.earliest and e.latest:
        a, b = e.earliest.astimezone(UTC), e.latest.astimezone(UTC)
        if a == b:
            return "≈" + hhmm(a)
        return f"~{a:%H:%M}" if f"{a:%H:%M}" == f"{b:%H:%M}" else f"~{a:%H:%M}–{b:%H:%M}"
    if e.earliest:
        return f"≥{hhmm(e.earliest)}"
    if e.latest:
        return f"≤{hhmm(e.latest)}"
    return "?"


def sort_time(e: TimelineEntry) -> datetime | None:
    return e.time or e.earliest or e.latest


@dataclass(frozen=True)
class Selector:
    """Which entries a rule or phase means (see the header of knowledge/ordering.toml)."""

    label: str = ""
    signatures: frozenset = frozenset()
    tags: frozenset = frozenset()
    components: frozenset = frozenset()
    containers: frozenset = frozenset()

    @classmethod
    def from_row(cls, row: dict | None) -> "Selector | None":
        if not row:
            return None
        return cls(row.get("label", ""), frozenset(row.get("signatures", ())), frozenset(row.get("tags", ())),
                   frozenset(row.get("components", ())), frozenset(row.get("containers", ())))


@dataclass(frozen=True)
class Phase:
    name: str
    label: str
    node: str | None
    start: TimelineEntry
    end: TimelineEntry | None

    @property
    def bounds(self) -> tuple[float, float] | None:
        """Shortest and longest duration the start and end times allow, in seconds (equal when both are exact)."""
        if self.end is None:
            return None
        s_lo, s_hi = interval(self.start)
        e_lo, e_hi = interval(self.end)
        if None in (s_lo, s_hi, e_lo, e_hi):
            return None
        return max(0.0, (e_lo - s_hi).total_seconds()), (e_hi - s_lo).total_seconds()

    def describe(self) -> str:
        span = f"({when(self.start)} → {when(self.end)})" if self.end else ""
        b = self.bounds
        if self.end is None:
            return f"{self.name}: started {when(self.start)}; {self.label} not reached in the artifacts"
        if b is None:
            return f"{self.name}: {self.label} {span}, duration unknown"
        lo, hi = b
        if hi - lo < 1:
            return f"{self.name}: {format_duration(lo)} {self.label} {span}"
        if hi - lo <= max(60.0, 0.1 * hi):
            return f"{self.name}: ≈{format_duration((lo + hi) / 2)} {self.label} {span}"
        return f"{self.name}: {format_duration(lo)}–{format_duration(hi)} {self.label} {span} (untimed lines bound it)"


def interval(e: TimelineEntry) -> tuple[datetime | None, datetime | None]:
    """Earliest and latest time an entry can have happened (equal for an exact time; None where open)."""
    if e.time and not e.approximate:
        return e.time, e.time
    return e.earliest, e.latest


_NO_META = (frozenset(), frozenset(), None, None, None)


def median(values):
    """statistics.median (the middle value, or the mean of the two middle ones), without the ~4 ms of importing
    statistics and its dependencies on every run that infers a clock."""
    data = sorted(values)
    n = len(data)
    if not n:
        raise ValueError("no median for empty data")
    return data[n // 2] if n % 2 else (data[n // 2 - 1] + data[n // 2]) / 2


@dataclass
class Timeline:
    entries: list[TimelineEntry]  # timed ones by time, then the ones that stayed relative or unknown
    notes: list[str]  # every inference made to put the sources on one clock
    capture: datetime | None = None
    capture_source: str | None = None  # where the capture time comes from (manifest, `date` output, newest stamp)
    phases: list[Phase] = field(default_factory=list)
    _meta: dict = field(default_factory=dict, repr=False)  # id(entry) -> (signature ids, tags, component, pod, namespace)
    # Indexes built on first use (select is called per phase and per node: a scan of every entry each time
    # made fleet-size timelines quadratic): signature/tag -> entry positions; selector -> {node -> positions}.
    _by_key: dict | None = field(default=None, repr=False, compare=False)
    _by_sel: dict = field(default_factory=dict, repr=False, compare=False)
    _nodes: tuple | None = field(default=None, repr=False, compare=False)

    def signatures_of(self, e: TimelineEntry) -> frozenset:
        return self._meta.get(id(e), _NO_META)[0]

    def tags_of(self, e: TimelineEntry) -> frozenset:
        return self._meta.get(id(e), _NO_META)[1]

    def component_of(self, e: TimelineEntry) -> str | None:
        return self._meta.get(id(e), _NO_META)[2]

    def pod_of(self, e: TimelineEntry) -> tuple[str | None, str | None]:
        """(pod, namespace) that wrote the entry, when known."""
        return self._meta.get(id(e), _NO_META)[3:5]

    def matches(self, sel: Selector, e: TimelineEntry) -> bool:
        sigs, tags, comp = self._meta.get(id(e), _NO_META)[:3]
        if not ((sel.signatures and sigs & sel.signatures) or (sel.tags and tags & sel.tags)):
            return False
        if sel.components and comp not in sel.components:
            return False
        return not sel.containers or e.container in sel.containers

    def select(self, sel: Selector, node: str | None = None, any_node: bool = True) -> list[TimelineEntry]:
        """Entries sel means, on node (and, with any_node, those whose node is unknown), in timeline order."""
        by_node = self._selected(sel)
        if node is None:
            if not any_node:
                return [self.entries[i] for i in by_node.get(None, ())]
            positions = sorted(i for v in by_node.values() for i in v)
        elif any_node and None in by_node and node in by_node:
            positions = sorted(by_node[node] + by_node[None])
        else:
            positions = by_node.get(node) or (by_node.get(None, ()) if any_node else ())
        return [self.entries[i] for i in positions]

    def _selected(self, sel: Selector) -> dict:
        """{node -> positions of the entries sel matches}, from the signature and tag index (cached per selector)."""
        if self._by_key is None or self._by_key.get("#") != len(self.entries):
            self._by_sel = {}
            index: dict = {"#": len(self.entries)}
            for i, e in enumerate(self.entries):
                sigs, tags = self._meta.get(id(e), _NO_META)[:2]
                for s in sigs:
                    index.setdefault(("s", s), []).append(i)
                for t in tags:
                    index.setdefault(("t", t), []).append(i)
            self._by_key = index
        hit = self._by_sel.get(sel)
        if hit is None:
            candidates = {i for s in sel.signatures for i in self._by_key.get(("s", s), ())}
            candidates.update(i for t in sel.tags for i in self._by_key.get(("t", t), ()))
            hit = {}
            for i in sorted(candidates):
                e = self.entries[i]
                if self.matches(sel, e):
                    hit.setdefault(e.node, []).append(i)
            self._by_sel[sel] = hit
        return hit

    def nodes(self) -> list[str | None]:
        if self._nodes is None or self._nodes[0] != len(self.entries):  # asked per phase row: kept while entries stay
            self._nodes = (len(self.entries), sorted(set(filter(None, map(_NODE, self.entries)))) or [None])
        return list(self._nodes[1])

    def lanes(self) -> list[str]:
        return list(dict.fromkeys(e.source for e in self.entries if e.source))


# ---- who wrote each line ---------------------------------------------------------------------------------


@cache
def _specs() -> tuple[OperandSpec, ...]:
    return operand_table()[0]


def _spec_for_name(pod: str | None, pod_obj: Pod | None) -> OperandSpec | None:
    if pod_obj is not None:
        return spec_for(pod_obj)
    if pod:
        return spec_for_name(pod)
    return None


def _workload(pod: str) -> str:
    return _HASH_SUFFIX.sub("", pod)


@dataclass(eq=False)  # identity: streams are keys of the bounds tables
class _Stream:
    """The lines of one container in one artifact, in file order: the unit clocks are inferred for."""

    log: ContainerLog
    pod: str | None
    container: str | None
    lines: list[LogLine] = field(default_factory=list)
    node: str | None = None
    namespace: str | None = None
    component: str | None = None
    lane: str | None = None
    init: bool = False
    foreign: bool = False  # some line's artifact is not the log's (the parser never makes such a line)
    formats: tuple = ()  # the lines' time formats (None: no time), in order of first use
    years: dict = field(default_factory=dict)  # format id -> inferred year
    zones: dict = field(default_factory=dict)  # format id -> tzinfo
    boot: datetime | None = None
    process_start: datetime | None = None
    start: datetime | None = None  # container start/finish from the pod status (aware)
    finish: datetime | None = None

    @property
    def key(self) -> tuple:
        return (self.log.artifact, self.pod, self.container)

    @property
    def name(self) -> str:
        who = "/".join(x for x in (self.pod, self.container) if x)
        return f"{self.log.artifact} ({who})" if who else self.log.artifact

    def resolve(self, ln: LogLine) -> datetime | None:
        """ln's time in UTC with this stream's inferred year, zone and boot time; None when unknown."""
        t = ln.time
        if t is None:
            if ln.elapsed is None:
                return None
            base = self.boot if BY_ID.get(ln.time_format or "") is not None and BY_ID[ln.time_format].relative == "boot" else self.process_start
            return base + timedelta(seconds=ln.elapsed) if base else None
        fmt = BY_ID.get(ln.time_format or "")
        if fmt is not None and not fmt.has_year and t.year == YEARLESS:
            year = self.years.get(fmt.id)
            if year is None:
                return None
            try:
                t = t.replace(year=year)
            except ValueError:  # Feb 29 in a year that has none: the stamp cannot be right
                return None
        if t.tzinfo is None:
            t = t.replace(tzinfo=self.zones.get(ln.time_format, UTC))
        return t.astimezone(UTC)


# ---- building --------------------------------------------------------------------------------------------


def _optional(facts: Facts, cls):
    try:
        return facts.get(cls)
    except NotApplicable:
        return None


@combiner(Timeline)
def build_timeline(facts: Facts) -> Timeline:
    logs = _optional(facts, Logs)
    cluster = _optional(facts, Cluster)
    if logs is None and (cluster is None or not (cluster.events or any(p.containers for p in cluster.pods))):
        raise NotApplicable("no logs, events or container start times to put on a timeline")
    return _Builder(facts, logs, cluster).build()


class _Builder:
    def __init__(self, facts: Facts, logs: Logs | None, cluster: Cluster | None):
        self.facts, self.logs, self.cluster = facts, logs, cluster
        self.notes: list[str] = []
        self.streams: list[_Stream] = []
        self.pods: dict[str, Pod] = {p.name: p for p in (cluster.pods if cluster else [])}
        self.capture: datetime | None = None
        self.capture_source = ""  # where the capture time comes from, for notes
        self.capture_bound = False  # True when it is the real capture time (an upper bound of every line)
        self.capture_log: str | None = None  # the artifact that is only the `date` printed at capture
        self.entries: list[TimelineEntry] = []
        self.meta: dict = {}
        self._sets: dict[frozenset, frozenset] = {}  # one copy of each distinct signature / tag set
        self._specs: dict[int, tuple] = {}  # id(pod) -> (pod, its operand row): each pod's row worked out once

    def build(self) -> Timeline:
        self._capture_declared()
        if self.logs is not None:
            self._split_streams()
            self._infer_years()
            self._infer_zones()
            self._infer_boot()
            self._log_entries()
        if self.cluster is not None:
            self._status_entries()
        self._capture_fallback()
        if self.cluster is not None:
            self._event_entries()
        # ties broken by lane, not by file name: renaming artifacts must not reorder the timeline
        timed = sorted((e for e in self.entries if sort_time(e)), key=lambda e: (sort_time(e), e.source or "", e.artifact, e.line or 0))
        untimed = sorted((e for e in self.entries if not sort_time(e)), key=lambda e: (e.artifact, e.line or 0))
        tl = Timeline(timed + untimed, self.notes, self.capture, self.capture_source or None, _meta=self.meta)
        tl.phases = _phases(tl)
        if not tl.entries:
            raise NotApplicable("no log line, event or container status the timeline knows")
        return tl

    # -- capture time --

    def _capture_declared(self) -> None:
        if self.facts.capture_time is not None:
            self.capture = _aware(self.facts.capture_time)
            self.capture_source, self.capture_bound = "the bundle manifest", True
            return
        for log in (self.logs.logs if self.logs else []):
            if 0 < len(log.lines) <= 3 and all(ln.time_format == "date" and ln.time is not None and ln.time.tzinfo for ln in log.lines):
                ln = log.lines[-1]
                self.capture = ln.time.astimezone(UTC)
                self.capture_source, self.capture_bound = f"the `date` output at {ln.artifact}:{ln.line}", True
                self.capture_log = log.artifact
                return

    def _capture_fallback(self) -> None:
        if self.capture is not None:
            self.notes.append(f"capture time {hhmm(self.capture)} UTC from {self.capture_source}")
            return
        times = [(e.time, f"{e.artifact}:{e.line}") for e in self.entries if e.time and not e.approximate]
        times += [(_aware(p.start_time), p.start_evidence.cite()) for p in (self.cluster.pods if self.cluster else [])
                  if p.start_time is not None and p.start_evidence is not None]  # a pod's `Start Time:` precedes the capture too
        newest = max(times, default=None, key=lambda x: x[0])
        if newest is not None:
            self.capture = newest[0]
            self.capture_source = f"the newest timestamp in the artifacts ({newest[1]})"
            self.notes.append(f"no capture time was recorded; {self.capture_source}, {hhmm(newest[0])} UTC, stands in for it "
                              "(it can only be earlier than the real one, so ages anchored to it may come out early)")

    # -- streams --

    def _split_streams(self) -> None:
        by_key: dict[tuple, _Stream] = {}
        for log in self.logs.logs:
            # a log's containers come in runs of lines; the artifact in the key tells, in the same pass, whether every
            # line is of the log's artifact (then its signatures are looked up by line number alone)
            for (lpod, lctr, art), run in groupby(log.lines, _WHO_WHERE):
                pod, ctr = lpod or log.pod, lctr or log.container
                key = (log.artifact, pod, ctr)
                s = by_key.get(key)
                if s is None:
                    s = by_key[key] = _Stream(log, pod, ctr)
                s.lines.extend(run)
                if art != log.artifact:
                    s.foreign = True
        for s in by_key.values():  # the formats a stream uses, read by the year and zone passes (one C pass each)
            s.formats = tuple(dict.fromkeys(map(_FORMAT, s.lines)))
        comp_hint: dict[tuple, str] | None = None  # stream key -> the component its signatures name; made when needed
        for s in by_key.values():
            pod_obj = self.pods.get(s.pod) if s.pod else None
            spec = self._spec_of(s.pod, pod_obj)
            if spec is None:
                comp_hint = self._component_hints() if comp_hint is None else comp_hint
                if s.key in comp_hint:
                    spec = next((x for x in _specs() if x.name == comp_hint[s.key]), None)
            s.node = s.log.node or (pod_obj.node if pod_obj else None)
            s.namespace = s.log.namespace or (pod_obj.namespace if pod_obj else None)
            if s.log.kind in ("kernel", "journal") and spec is None:
                s.lane, s.component = _KERNEL_LANE if s.log.kind == "kernel" else "node/journal", s.log.kind
            elif spec is not None:
                s.component, s.lane = spec.name, f"{spec.operator}/{spec.name}"
                s.init = bool(s.container and s.container in spec.init_containers)
            else:
                base = _workload(s.pod) if s.pod else s.log.artifact.rsplit("/", 1)[-1]
                s.component, s.lane = base, f"{s.namespace or 'other'}/{base}"
            if pod_obj is not None and s.container:
                cs = pod_obj.container(s.container)
                if cs is not None:
                    s.init = s.init or cs.init
                    start, finish = (cs.last_started_at, cs.last_finished_at) if s.log.previous else (cs.started_at, cs.finished_at)
                    s.start, s.finish = (start and _aware(start)), (finish and _aware(finish))
                    s.process_start = s.start
        self.streams = list(by_key.values())

    def _spec_of(self, pod: str | None, pod_obj: Pod | None) -> OperandSpec | None:
        """_spec_for_name, once per pod object (a pod's streams and its status entries all ask)."""
        if pod_obj is None:
            return _spec_for_name(pod, None)
        hit = self._specs.get(id(pod_obj))
        if hit is None or hit[0] is not pod_obj:
            hit = self._specs[id(pod_obj)] = (pod_obj, spec_for(pod_obj))
        return hit[1]

    def _component_hints(self) -> dict[tuple, str]:
        hints: dict[tuple, str] = {}
        for m in self.logs.all_matches():
            if m.signature.component:
                hints.setdefault((m.log.artifact, m.line.pod or m.log.pod, m.line.container or m.log.container), m.signature.component)
        return hints

    # -- years --

    def _infer_years(self) -> None:
        refs: dict[str | None, list[datetime]] = defaultdict(list)
        for s in self.streams:
            for ln in (_first_timed(s.lines), _last_timed(s.lines)):
                if ln is not None and ln.time is not None and BY_ID[ln.time_format].has_year:
                    refs[s.node].append(ln.time.replace(tzinfo=None))
        for pod in (self.cluster.pods if self.cluster else []):
            for cs in pod.containers:  # status times from describe/JSON carry their year
                for t in (cs.started_at, cs.finished_at, cs.last_started_at, cs.last_finished_at):
                    if t is not None:
                        refs[pod.node].append(_aware(t).replace(tzinfo=None))
        everything = [t for ts in refs.values() for t in ts]
        for s in self.streams:
            # the formats in order of first use (a set built in the lines' order, as a pass over every line built it)
            for fid in {f for f in s.formats if f and not BY_ID[f].has_year}:
                first = next(ln for ln in s.lines if ln.time_format == fid and ln.time is not None)
                pool, where = (refs.get(s.node), "the other sources of the same node") if s.node and refs.get(s.node) else (everything, "the other sources")
                if pool:
                    ref, why = datetime.fromtimestamp(median(t.replace(tzinfo=UTC).timestamp() for t in pool), UTC).replace(tzinfo=None), where
                elif self.capture:
                    ref, why = self.capture.replace(tzinfo=None), "the capture time"
                else:
                    ref, why = datetime.now(UTC).replace(tzinfo=None), "today's date (no source in the artifacts carries a year)"
                year = min((ref.year - 1, ref.year, ref.year + 1), key=lambda y: abs(_with_year(first.time, y) - ref))
                s.years[fid] = year
                self.notes.append(f"{BY_ID[fid].id} lines of {s.name} carry no year; {year} taken from {why}")

    # -- zones --

    def _aware_points(self) -> tuple[dict, dict]:
        """node -> [(first, last)] spans and node -> [start times] of everything whose zone is known."""
        spans: dict[str | None, list[tuple[datetime, datetime]]] = defaultdict(list)
        starts: dict[str | None, list[datetime]] = defaultdict(list)
        for s in self.streams:
            if s.log.artifact == self.capture_log:
                continue  # the capture time bounds everything; it is not a moment of activity
            aware = [ln for ln in (_first_timed(s.lines, aware=True), _last_timed(s.lines, aware=True)) if ln is not None]
            if aware:
                a, b = (s.resolve(aware[0]), s.resolve(aware[-1]))
                if a and b:
                    spans[s.node].append((a, b))
                    starts[s.node].append(a)
            for t in (s.start, s.finish):
                if t is not None:
                    spans[s.node].append((t, t))
            if s.start is not None:
                starts[s.node].append(s.start)
        for pod in (self.cluster.pods if self.cluster else []):
            if pod.start_time is not None:  # the pod's `Start Time:` is zone-aware activity too
                spans[pod.node].append((_aware(pod.start_time), _aware(pod.start_time)))
                starts[pod.node].append(_aware(pod.start_time))
            for cs in pod.containers:  # container start/finish times of the pod status are zone-aware activity too
                for t, is_start in ((cs.started_at, True), (cs.finished_at, False), (cs.last_started_at, True), (cs.last_finished_at, False)):
                    if t is not None:
                        spans[pod.node].append((_aware(t), _aware(t)))
                        if is_start:
                            starts[pod.node].append(_aware(t))
        return spans, starts

    def _infer_zones(self) -> None:
        spans, starts = self._aware_points()
        all_spans = [x for v in spans.values() for x in v]
        all_starts = [x for v in starts.values() for x in v]
        date_zones = self._date_zones()
        client = self._client_zone()
        for s in self.streams:
            naive = _naive_formats(s.lines)
            for fid in naive:
                lines = [ln for ln in s.lines if ln.time_format == fid and ln.time is not None]
                s.zones[fid] = UTC
                lo, hi = s.resolve(lines[0]), s.resolve(lines[-1])  # as if UTC, with the year fixed
                if lo is None or hi is None:
                    continue
                lo, hi = lo.replace(tzinfo=None), hi.replace(tzinfo=None)
                what = f"{fid} times of {s.name}"
                zone, why = self._zone_from_pod(s, date_zones)
                if zone is None and s.start is not None:
                    zone, why = _zone_from_start(lo, s.start)
                if zone is None:
                    node_spans = spans.get(s.node) if s.node and spans.get(s.node) else all_spans
                    node_starts = starts.get(s.node) if s.node and starts.get(s.node) else all_starts
                    capture = self.capture if self.capture_bound else None
                    host = s.log.kind in ("kernel", "journal") or s.pod is None
                    hint = client if host or client[0] is None else (
                        None, "a container's clock is UTC unless its image or pod sets TZ, so the kubectl client's zone is not taken for it")
                    zone, why = _zone_by_overlap(lo, hi, node_spans, node_starts, capture, hint)
                s.zones[fid] = zone or UTC
                self.notes.append(f"{what} have no zone; {_zone_name(zone or UTC)} {why}")

    def _client_zone(self) -> tuple[tzinfo | None, str]:
        """The zone kubectl's client printed its times in (describe's `Start Time:`/`Started:`, event times), when
        the artifacts show exactly one non-UTC offset, with the line it came from; else None and why not. UTC
        times do not count against it: kubectl's JSON/YAML prints UTC whatever the client's zone."""
        seen: dict[timedelta, Evidence] = {}
        for pod in (self.cluster.pods if self.cluster else []):
            times = [(pod.start_time, pod.start_evidence)]
            times += [(t, cs.evidence) for cs in pod.containers
                      for t in (cs.started_at, cs.finished_at, cs.last_started_at, cs.last_finished_at)]
            for t, ev in times:
                if t is not None and ev is not None and t.utcoffset():
                    seen.setdefault(t.utcoffset(), ev)
        for e in (self.cluster.events if self.cluster else []):
            if e.time is not None and e.evidence is not None and e.time.utcoffset():
                seen.setdefault(e.time.utcoffset(), e.evidence)
        shown = [f"{_zone_name(fixed_zone(int(off.total_seconds() // 60)))} at {ev.cite()}" for off, ev in sorted(seen.items())]
        if len(seen) == 1:
            off, ev = next(iter(seen.items()))
            return fixed_zone(int(off.total_seconds() // 60)), (f"the zone kubectl printed its times in ({ev.cite()}: "
                                                                 f"{ev.text.strip()}), taken as the site's zone for host logs")
        if seen:
            return None, f"kubectl times show {len(seen)} different offsets ({', '.join(shown)}), so no client zone is preferred"
        return None, ""

    def _date_zones(self) -> dict[tuple, tuple[tzinfo, LogLine]]:
        """(artifact, pod) -> the zone a `date` line with a zone name proved for that pod's containers."""
        out: dict[tuple, tuple[tzinfo, LogLine]] = {}
        for s in self.streams:
            if "date" not in s.formats:  # only a stream that has `date` lines is read line by line
                continue
            for ln in s.lines:
                if ln.time_format == "date" and ln.time is not None and ln.time.tzinfo is not None:
                    out.setdefault((s.log.artifact, s.pod), (ln.time.tzinfo, ln))
        return out

    def _zone_from_pod(self, s: _Stream, date_zones: dict) -> tuple[tzinfo | None, str]:
        hit = date_zones.get((s.log.artifact, s.pod))
        if hit is None or not s.pod:
            return None, ""
        zone, ln = hit
        return zone, f"from the `date` output the same pod printed at {ln.artifact}:{ln.line} ({ln.raw.strip()})"

    # -- dmesg uptime --

    def _infer_boot(self) -> None:
        kernel = [s for s in self.streams if s.log.kind in ("kernel", "journal")]
        uptimes = {u.node: u for u in self.facts.all(Uptime) if u.node and u.read_at is not None}
        walls: dict[str, list[datetime]] = defaultdict(list)
        node_boots: dict[str | None, list[datetime]] = defaultdict(list)
        for s in kernel:
            for ln in s.lines:
                if ln.time is None:
                    continue
                t = s.resolve(ln)
                if t is None:
                    continue
                walls[ln.message].append(t)
                if ln.elapsed is not None:  # syslog/journal line with the printk uptime in it
                    node_boots[s.node].append(t - timedelta(seconds=ln.elapsed))
        for s in kernel:
            rel = [ln for ln in s.lines if ln.time is None and ln.elapsed is not None]
            if not rel:
                continue
            boots = [w - timedelta(seconds=ln.elapsed) for ln in rel for w in walls.get(ln.message, ())]
            source = "the same kernel messages printed with a wall-clock time"
            if not boots and s.node and node_boots.get(s.node):
                boots, source = node_boots[s.node], f"syslog/journal lines of node {s.node} that carry the uptime"
            up = uptimes.get(s.node) if s.node else None
            if not boots and up is not None:
                boots = [up.read_at - timedelta(seconds=up.seconds)]
                source = (f"/proc/uptime of node {s.node} ({up.evidence.cite()}: {up.seconds:.0f} s) read at "
                          f"{up.read_at.isoformat(timespec='seconds')} on the cluster's clock (good to the few seconds the probe ran)")
            if not boots:
                self.notes.append(f"dmesg uptimes in {s.name} stay relative to boot: no wall-clock line of the same boot to anchor them")
                continue
            mid = median(b.timestamp() for b in boots)
            close = [b for b in boots if abs(b.timestamp() - mid) <= 2]
            if len(close) * 2 < len(boots):
                self.notes.append(f"dmesg uptimes in {s.name} stay relative: the wall-clock lines give inconsistent boot times (several boots?)")
                continue
            s.boot = datetime.fromtimestamp(median(b.timestamp() for b in close), UTC)
            self.notes.append(f"dmesg uptimes in {s.name} converted with boot time {s.boot.isoformat(timespec='seconds')} derived from {source}")

    # -- entries --

    def _entry(self, *, time, text, artifact, line, tag, sig, lane, node, container, component, sigs=frozenset(), tags=frozenset(),
               earliest=None, latest=None, approximate=False, note=None, pod=None, namespace=None) -> TimelineEntry:
        e = TimelineEntry(time=time, text=text, artifact=artifact, line=line, tag=tag, source=lane, node=node, signature=sig,
                          container=container, earliest=earliest, latest=latest, approximate=approximate, note=note)
        self.entries.append(e)
        sig_set, tag_set = frozenset(sigs), frozenset(tags)  # (frozenset of a frozenset is that set)
        if sig and sig not in sig_set:
            sig_set = sig_set | {sig}
        if tag and tag not in tag_set:
            tag_set = tag_set | {tag}
        # entries of one signature share one set (a fleet has thousands of entries per signature): kept once
        self.meta[id(e)] = (self._sets.setdefault(sig_set, sig_set), self._sets.setdefault(tag_set, tag_set), component, pod, namespace)
        return e

    def _log_entries(self) -> None:
        by_line = self.logs.signatures_at()
        by_artifact: dict[str, dict[int, tuple]] = defaultdict(dict)  # artifact -> {line number: its signatures}
        for (artifact, number), sigs in by_line.items():
            by_artifact[artifact][number] = sigs
        # Per stream, the indexes of its recognised lines (not a key tuple and a (stream, index) pair per line: a
        # fleet recognises hundreds of thousands of lines, and those took more memory than the timeline keeps).
        # A line belongs to one stream, and every entry is sorted by (time, lane, artifact, line) in the end, so
        # building them stream by stream gives the timeline that a pass in the signature map's order gave.
        recognised: list[tuple[_Stream, list[int], list]] = []
        for s in self.streams:
            idx, sigs_at = _recognised(s.lines, s.log.artifact, by_artifact, by_line, not s.foreign)
            if idx:
                recognised.append((s, idx, sigs_at))
        del by_artifact
        # Polling loops recognise the same message thousands of times: group the lines by message first, then
        # give each group its shown text and most severe signature once.
        shown: dict[str, str] = {}  # display() of each distinct message
        heads: dict[int, dict[int, tuple[int, int]]] = {}  # id(stream) -> {first index: (count, last index)}
        kept: list[tuple[_Stream, list[int], list]] = []  # stream, indexes kept, their signatures
        for s, idx, sigs_at in recognised:
            lines = s.lines
            by_msg: dict[str, list[int]] = defaultdict(list)  # message -> positions in idx
            for k, msg in enumerate(map(_MESSAGE, map(lines.__getitem__, idx))):
                by_msg[msg].append(k)
            repeats: dict[tuple, list[int]] = defaultdict(list)  # (signature, text) -> indexes
            for msg, ks in by_msg.items():
                if msg not in shown:
                    shown[msg] = display(msg)
                sigs = sigs_at[ks[0]]
                if all(sigs_at[k] == sigs for k in ks):  # as always when each line has its own (artifact, line)
                    repeats[(_primary(sigs).id, shown[msg])].extend(map(idx.__getitem__, ks))
                else:
                    for k in ks:
                        repeats[(_primary(sigs_at[k]).id, shown[msg])].append(idx[k])
            mine, skipped = _runs(repeats)
            if mine:
                heads[id(s)] = mine
            if skipped:
                keep = [k for k, i in enumerate(idx) if i not in skipped]
                idx, sigs_at = [idx[k] for k in keep], [sigs_at[k] for k in keep]
            kept.append((s, idx, sigs_at))
        del recognised
        bounds = self._bounds(kept, {})
        anchors = self._same_events(kept, bounds)
        if anchors:
            bounds = self._bounds(kept, anchors)
        context: set[tuple] = set()
        sets_of: dict[int, tuple] = {}  # id of a signature tuple (the map shares one per combination) -> (it, ids, tags)
        for s, idx, sigs_at in kept:
            mine = heads.get(id(s), {})
            for i, sigs in zip(idx, sigs_at):
                ln = s.lines[i]
                g = _primary(sigs)
                t = s.resolve(ln)
                known = sets_of.get(id(sigs))
                if known is None or known[0] is not sigs:
                    known = sets_of[id(sigs)] = (sigs, frozenset(x.id for x in sigs), frozenset(x.tag for x in sigs))
                kw = dict(text=shown[ln.message], artifact=ln.artifact, line=ln.line, tag=g.tag, sig=g.id, lane=s.lane,
                          node=s.node, container=s.container, component=s.component, sigs=known[1], tags=known[2],
                          pod=s.pod, namespace=s.namespace)
                if i in mine:
                    count, last = mine[i]
                    kw["note"] = f"seen {count} times in this container, the last at line {s.lines[last].line}; the ones between are left out"
                if t is not None:
                    self._entry(time=t, **kw)
                elif ln.elapsed is not None:
                    self._entry(time=None, **_noted(kw, f"+{ln.elapsed:.3f} s after boot (boot time unknown: kept relative)"))
                elif (s.key, i) in anchors:
                    at, why = anchors[(s.key, i)]
                    self._entry(time=None, earliest=at, latest=at, approximate=True, **_noted(kw, why))
                else:
                    lo, hi, why, ctx = bounds.get((s.key, i), (None, None, "", ()))
                    context.update(ctx)
                    self._entry(time=None, earliest=lo, latest=hi, approximate=bool(lo or hi),
                                **_noted(kw, why or "no timestamp and no timestamped neighbour"))
        for s, i in sorted(context, key=lambda x: (x[0].log.artifact, x[1])):
            ln = s.lines[i]
            if (ln.artifact, ln.line) in by_line:
                continue
            self._entry(time=s.resolve(ln), text=display(ln.message), artifact=ln.artifact, line=ln.line, tag=None, sig=None,
                        lane=s.lane, node=s.node, container=s.container, component=s.component,
                        note="timestamped neighbour that bounds an untimed entry")

    def _same_events(self, kept: list, bounds: dict) -> dict:
        """(stream key, index) -> (time, why) for untimed lines that another source records with a time: the
        container's `modprobe` failure and the kernel's complaint about the same insert (ordering.toml
        [[same_event]]). Only a single candidate inside the untimed line's interval counts. kept: (stream, indexes,
        their signatures) of the recognised lines."""
        out: dict = {}
        for row in _same_event_rows():
            a_ids, b_ids = set(row["a"]), set(row["b"])
            timed_b: dict[str | None, list] = defaultdict(list)  # node -> [(time, line)], sorted below
            for s, idx, sigs_at in kept:
                for i, sigs in zip(idx, sigs_at):
                    if b_ids & {g.id for g in sigs}:
                        t = s.resolve(s.lines[i])
                        if t is not None:
                            timed_b[s.node].append((t, s.lines[i]))
            if not timed_b:
                continue
            for v in timed_b.values():
                v.sort(key=lambda x: x[0])
            everywhere = sorted((x for v in timed_b.values() for x in v), key=lambda x: x[0])
            for s, idx, sigs_at in kept:
                for i, sigs in zip(idx, sigs_at):
                    if not a_ids & {g.id for g in sigs}:
                        continue
                    if s.lines[i].time is not None:
                        continue
                    lo, hi, _why, _ctx = bounds.get((s.key, i), (None, None, "", ()))
                    pools = [everywhere] if s.node is None else [timed_b.get(s.node, []), timed_b.get(None, [])]
                    fits = [x for pool in pools for x in _within(pool, lo, hi)]
                    if len(fits) == 1:
                        t, kl = fits[0]
                        out[(s.key, i)] = (t, f"no timestamp; it is {row['label']}, which {kl.artifact}:{kl.line} records at {hhmm(t)}")
        return out

    def _bounds(self, kept: list, anchors: dict) -> dict:
        """(stream key, index) -> (earliest, latest, note, context lines) for the untimed lines of kept ((stream,
        indexes, signatures) of the recognised lines) that need a time.

        anchors: lines placed by _same_events; they bound their neighbours like timestamped lines do."""
        want: dict[int, set[int]] = defaultdict(set)
        for s, idx, _ in kept:
            lines = s.lines
            if all(map(_TIME, map(lines.__getitem__, idx))):  # all timed (a datetime is never false): a C pass
                continue
            for i in idx:
                if lines[i].time is None and lines[i].elapsed is None:
                    want[id(s)].add(i)
        if not want:  # every recognised line has a time (a fleet of stamped logs): nothing to bound
            return {}
        init_end = self._init_ends()
        out = {}
        for s in self.streams:
            idx = want.get(id(s))
            if not idx:
                continue

            def at(i: int) -> datetime | None:
                return anchors[(s.key, i)][0] if (s.key, i) in anchors else s.resolve(s.lines[i])

            # the nearest timestamped (or anchored) line before and after each untimed line that needs one
            placed = {i for (key, i) in anchors if key == s.key}
            timed = sorted(placed.union(i for i, t in enumerate(map(_TIME, s.lines)) if t is not None))
            prev: dict[int, int] = {}
            nxt: dict[int, int] = {}
            for i in idx:
                if i in placed:
                    continue
                k = bisect.bisect_left(timed, i)
                if k > 0:
                    prev[i] = timed[k - 1]
                if k < len(timed):
                    nxt[i] = timed[k]
            for i in idx:
                lo = hi = None
                why, ctx = [], []
                if i in prev and (t := at(prev[i])):
                    lo = t
                    why.append(f"after line {s.lines[prev[i]].line} ({hhmm(t)})")
                    ctx.append((s, prev[i]))
                elif s.start:
                    lo = s.start
                    why.append(f"after the container started ({hhmm(s.start)})")
                elif not s.init and init_end.get((s.log.artifact, s.pod)):
                    lo, ln0 = init_end[(s.log.artifact, s.pod)]
                    why.append(f"after the pod's init containers finished (last init line {ln0.line}, {hhmm(lo)})")
                if i in nxt and (t := at(nxt[i])):
                    hi = t
                    why.append(f"before line {s.lines[nxt[i]].line} ({hhmm(t)})")
                    ctx.append((s, nxt[i]))
                elif s.finish:
                    hi = s.finish
                    why.append(f"before the container finished ({hhmm(s.finish)})")
                elif self.capture is not None and self.capture_bound:
                    hi = self.capture
                    why.append(f"before the capture ({hhmm(self.capture)})")
                if lo and hi and lo > hi:
                    out[(s.key, i)] = (None, None, "no timestamp; its neighbours' times disagree, so no interval is given", ())
                    continue
                note = ("no timestamp: " + " and ".join(why) + " in the same container") if why else ""
                out[(s.key, i)] = (lo, hi, note, tuple(c for c in ctx if s.lines[c[1]].time is not None))
        return out

    def _init_ends(self) -> dict[tuple, tuple[datetime, LogLine]]:
        """(artifact, pod) -> time and line of the last timestamped line of its init containers."""
        out: dict[tuple, tuple[datetime, LogLine]] = {}
        for s in self.streams:
            if not s.init:
                continue
            ln = _last_timed(s.lines)
            t = s.resolve(ln) if ln else None
            if t and (out.get((s.log.artifact, s.pod)) is None or out[(s.log.artifact, s.pod)][0] < t):
                out[(s.log.artifact, s.pod)] = (t, ln)
        return out

    def _status_entries(self) -> None:
        for pod in self.cluster.pods:
            spec = self._spec_of(pod.name, pod)
            component = spec.name if spec else _workload(pod.name)
            lane = f"{spec.operator}/{spec.name}" if spec else f"{pod.namespace or 'other'}/{component}"
            for cs in pod.containers:
                if cs.evidence is None:
                    continue
                ev = cs.evidence
                common = dict(artifact=ev.artifact, line=ev.line, lane=lane, node=pod.node, container=cs.name, component=component,
                              pod=pod.name, namespace=pod.namespace)
                for started, finished, reason, code in (
                    (cs.started_at, cs.finished_at, cs.reason, cs.exit_code),
                    (cs.last_started_at, cs.last_finished_at, cs.last_reason, cs.last_exit_code),
                ):
                    if started:
                        self._entry(time=_aware(started), text=f"container {cs.name} of {pod.name} started", tag="component-start",
                                    sig=STATUS_STARTED, **common)
                    if finished:
                        crashed = (code not in (None, 0)) or (reason not in (None, "Completed"))
                        self._entry(time=_aware(finished), tag="container-crash" if crashed else "install-end", sig=STATUS_TERMINATED,
                                    text=f"container {cs.name} of {pod.name} terminated" + (f": {reason}" if reason else "") + (f" (exit {code})" if code is not None else ""),
                                    **common)

    def _event_entries(self) -> None:
        sigs, matcher = signatures()
        anchored = False
        for e in self.cluster.events:
            text = f"{e.reason}: {e.message}"
            hit = [sigs[i] for i in (matcher.Match(text) or ())]
            if not hit or e.evidence is None:
                continue
            g = min(hit, key=lambda x: _SEVERITY_RANK.get(x.severity, 9))
            pod_name = (e.object or "").rsplit("/", 1)[-1]
            pod = self.pods.get(pod_name)
            spec = _spec_for_name(pod_name, pod)
            component = spec.name if spec else (_workload(pod_name) if pod_name else None)
            lane = f"{spec.operator}/{spec.name}" if spec else f"{e.namespace or 'other'}/{component}"
            kw = dict(text=display(f"{e.object or ''} {text}"), artifact=e.evidence.artifact, line=e.evidence.line, tag=g.tag,
                      sig=g.id, lane=lane, node=e.node or (pod.node if pod else None), container=None, component=component,
                      sigs={x.id for x in hit}, tags={x.tag for x in hit}, pod=pod_name or None, namespace=e.namespace)
            if e.time is not None:
                self._entry(time=_aware(e.time), **kw)
                continue
            last, first, count = parse_event_age(e.age or e.last_seen)
            age = first or last
            if age is None or self.capture is None:
                self._entry(time=None, note=f"event age {e.age or '?'!r} cannot be placed: no capture time", **kw)
                continue
            anchored = True
            self._entry(time=None, earliest=self.capture - age - _age_precision(age), latest=self.capture - age, approximate=True,
                        note=f"event {'first ' if first else ''}seen {format_duration(age.total_seconds())} before the capture"
                        + (f" (x{count})" if count else ""), **kw)
        if anchored:
            self.notes.append(f"event ages are anchored to the capture time from {self.capture_source}")


# ---- helpers ---------------------------------------------------------------------------------------------


RUN_MIN = 3  # a line recognised this often in one container (a polling loop) keeps only its first and last occurrence
# `set -x` printing the echo that prints the next line: the same words twice, once as shell code.
_ECHO_TRACE = re.compile(r"^\++ (?:echo|printf)\b")


def _primary(sigs: list[Signature]) -> Signature:
    """The most severe of the signatures a line matches (the first of equals)."""
    return sigs[0] if len(sigs) == 1 else min(sigs, key=lambda g: _SEVERITY_RANK.get(g.severity, 9))


def _runs(repeats: dict[tuple, list[int]]) -> tuple[dict[int, tuple[int, int]], set[int]]:
    """Lines recognised again and again in one container (a polling loop, even interleaved with another
    loop's line), given as (signature, text) -> [line index]: {first index: (count, last index)} and the
    indexes in between, which the timeline leaves out."""
    heads: dict = {}
    skipped: set = set()
    for hits in repeats.values():
        if len(hits) >= RUN_MIN:
            hits.sort()
            heads[hits[0]] = (len(hits), hits[-1])
            skipped.update(hits[1:-1])
    return heads, skipped


def _recognised(lines: list[LogLine], artifact: str, by_artifact: dict[str, dict[int, tuple]],
                by_line: dict, one_artifact: bool | None = None) -> tuple[list[int], list[tuple]]:
    """(indexes, signatures) of the lines a signature recognised, but not the shell trace of an `echo`, found at C
    speed: by line number alone when every line is of the stream's artifact (as the parser makes them; one_artifact
    says so when the caller knows, None: tested here), else by the full key."""
    if one_artifact is None:
        one_artifact = all(map(eq, map(_ARTIFACT, lines), repeat(artifact)))
    if one_artifact:
        at = by_artifact.get(artifact)
        if not at:
            return [], []
        found = list(map(at.get, map(_LINE, lines)))  # a line's signatures (a non-empty tuple), or None
    else:
        found = list(map(by_line.get, zip(map(_ARTIFACT, lines), map(_LINE, lines))))
    idx = list(compress(range(len(lines)), found))
    sigs_at = list(filter(None, found))
    echo = list(map(_ECHO_TRACE.match, map(_MESSAGE, map(lines.__getitem__, idx))))
    if any(echo):
        keep = list(map(not_, echo))
        idx, sigs_at = list(compress(idx, keep)), list(compress(sigs_at, keep))
    return idx, sigs_at


def _noted(kw: dict, note: str) -> dict:
    """kw with note added to any note already there (a repeat count)."""
    return {**kw, "note": f"{kw['note']}; {note}" if kw.get("note") else note}


def _within(pool: list, lo: datetime | None, hi: datetime | None, limit: int = 2) -> list:
    """Up to `limit` items of a time-sorted [(time, x)] pool inside [lo, hi] (open ends allowed)."""
    keys = [t for t, _ in pool]
    a = bisect.bisect_left(keys, lo) if lo is not None else 0
    b = bisect.bisect_right(keys, hi) if hi is not None else len(pool)
    return pool[a:min(b, a + limit)]


def _naive_formats(lines: list[LogLine]) -> list[str]:
    """The formats of the lines whose time has no zone, sorted; at C speed when every time has one (a stamped log)."""
    if None not in set(map(_TZINFO, filter(None, map(_TIME, lines)))):  # a datetime is never false
        return []
    return sorted({ln.time_format for ln in lines if ln.time is not None and ln.time.tzinfo is None})


def _first_timed(lines: list[LogLine], aware: bool = False) -> LogLine | None:
    if lines and (t := lines[0].time) is not None and (not aware or t.tzinfo is not None):  # a stamped log: no generator
        return lines[0]
    return next((ln for ln in lines if ln.time is not None and (not aware or ln.time.tzinfo is not None)), None)


def _last_timed(lines: list[LogLine], aware: bool = False) -> LogLine | None:
    if lines and (t := lines[-1].time) is not None and (not aware or t.tzinfo is not None):
        return lines[-1]
    return next((ln for ln in reversed(lines) if ln.time is not None and (not aware or ln.time.tzinfo is not None)), None)


def _with_year(t: datetime, year: int) -> datetime:
    try:
        return t.replace(year=year, tzinfo=None)
    except ValueError:
        return t.replace(year=year, day=28, tzinfo=None)


def _aware(t: datetime) -> datetime:
    """A status time as UTC; a naive one (a parser that dropped the zone) is taken as UTC, as the API writes it."""
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).astimezone(UTC)


def _age_precision(age: timedelta) -> timedelta:
    """How much a kubectl age hides (HumanDuration: `8m21s` to the second, `23m` to the minute, `5h` to the hour)."""
    s = age.total_seconds()
    if s < 600:
        return timedelta(seconds=1)
    if s < 8 * 3600:
        return timedelta(minutes=1)
    if s < 8 * 86400:
        return timedelta(hours=1)
    return timedelta(days=1)


def _zone_name(z: tzinfo) -> str:
    off = z.utcoffset(None)
    if not off:
        return "UTC"
    minutes = int(off.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _zone_from_start(first: datetime, started: datetime) -> tuple[tzinfo | None, str]:
    """The zone that puts a container's first line just after the start time its pod status shows."""
    diff = first - started.astimezone(UTC).replace(tzinfo=None)
    minutes = round(diff.total_seconds() / 60 / ZONE_STEP_MIN) * ZONE_STEP_MIN
    residual = diff - timedelta(minutes=minutes)
    if timedelta(0) - timedelta(seconds=5) <= residual <= START_MATCH and abs(minutes) <= 14 * 60:
        return fixed_zone(minutes), f"puts its first line {int(residual.total_seconds())} s after the container's start time in the pod status ({hhmm(started)} UTC)"
    return None, ""


def _zone_by_overlap(lo: datetime, hi: datetime, spans: list, starts: list, capture: datetime | None,
                     client: tuple[tzinfo | None, str] | None = None) -> tuple[tzinfo | None, str]:
    """The zone that makes [lo, hi] (naive) overlap the zone-aware spans and start with one of them; a zone
    that puts the lines after the capture time is impossible. When overlap cannot decide and UTC would be
    assumed, client (the kubectl client's zone and where it shows, from _client_zone) is preferred; a
    client zone of None only adds its reason to the assumption."""
    candidates = []
    for minutes in range(-12 * 60, 14 * 60 + 1, ZONE_STEP_MIN):
        off = timedelta(minutes=minutes)
        a, b = (lo - off).replace(tzinfo=UTC), (hi - off).replace(tzinfo=UTC)
        if capture is None or b <= capture + timedelta(seconds=1):
            candidates.append((minutes, a, b))
    if not candidates:
        return None, "assumed: every zone would put them after the capture time, so the stamps themselves are suspect"
    utc_ok = any(m == 0 for m, _, _ in candidates)
    if not spans:
        if utc_ok:
            return _undecided(client, candidates, "no zone-aware source to compare with")
        m = min(candidates, key=lambda c: abs(c[0]))[0]
        return fixed_zone(m), "guessed: no zone-aware source to compare with and UTC would put them after the capture time"
    env_lo = min(a for a, _ in spans) - timedelta(minutes=5)
    env_hi = max(b for _, b in spans) + timedelta(minutes=5)
    length = (hi - lo).total_seconds()
    scored = []
    for minutes, a, b in candidates:
        overlap = (min(b, env_hi) - max(a, env_lo)).total_seconds()
        frac = (overlap / length) if length > 0 else (1.0 if env_lo <= a <= env_hi else 0.0)
        if frac >= 0.5:
            dist = min((abs(a - s) for s in starts), default=timedelta(days=9999))
            scored.append((dist, abs(minutes), minutes))
    if not scored:
        return _undecided(client, candidates, "no zone makes them overlap the zone-aware sources") if utc_ok else (
            None, "assumed UTC although no zone makes them overlap the zone-aware sources")
    best = min(scored)
    utc = next((x for x in scored if x[2] == 0), None)
    if utc is not None and utc[0] <= best[0] + ALIGN_SLACK:
        aligned = f" and start with one of them (within {format_duration(utc[0].total_seconds())})" if utc[0] < timedelta(days=1) else ""
        return UTC, f"is consistent: in UTC they overlap the zone-aware sources{aligned}"
    zone = fixed_zone(best[2])
    rivals = [x for x in scored if x is not best and x[0] <= best[0] + ALIGN_SLACK]
    doubt = f"; {len(rivals)} other zone(s) fit almost as well, so treat it as a guess" if rivals else ""
    return zone, (f"inferred: only with it do they overlap the zone-aware sources and start together with one of them "
                  f"(within {format_duration(best[0].total_seconds())}){doubt}")


def _undecided(client: tuple[tzinfo | None, str] | None, candidates: list, reason: str) -> tuple[tzinfo, str]:
    """UTC, or the kubectl client's zone when one is known and possible, for lines whose zone overlap left open."""
    zone, why = client or (None, "")
    if zone is not None and any(timedelta(minutes=m) == zone.utcoffset(None) for m, _, _ in candidates):
        return zone, f"preferred over UTC: {reason}, and it is {why}"
    return UTC, f"assumed: {reason}" + (f"; {why}" if why else "")


@cache
def _same_event_rows() -> tuple[dict, ...]:
    return tuple(table("ordering").get("same_event", []))


@cache
def _phase_rows() -> tuple[tuple[str, str, Selector, Selector], ...]:
    return tuple((p["name"], p.get("label", ""), Selector.from_row(p["start"]), Selector.from_row(p["end"])) for p in table("ordering").get("phase", []))


def _phases(tl: Timeline) -> list[Phase]:
    out = []
    for name, label, start_sel, end_sel in _phase_rows():
        for node in tl.nodes():
            starts = [e for e in tl.select(start_sel, node) if sort_time(e)]
            if not starts:
                continue
            start = min(starts, key=lambda e: (interval(e)[1] or sort_time(e), sort_time(e)))  # surely started by then
            ends = [e for e in tl.select(end_sel, node) if sort_time(e) and sort_time(e) >= sort_time(start)]
            out.append(Phase(name, label, node, start, min(ends, key=sort_time) if ends else None))
    return out


__all__ = ["Phase", "Selector", "Timeline", "hhmm", "interval", "sort_time", "when"]
