"""The GPU Operator and Network Operator operands, per node: which one failed, which are blocked behind it
(by whom, waiting on which marker), which run but log errors, and the root of each cascade.

Knowledge comes from knowledge/operands.toml (what each operand runs, which marker files it creates and
which container waits on which marker); observations come from the artifacts: pod and container states
(Cluster) and waiting / error lines (Logs). Blocked is never invented: a component is blocked only when its
own state says it has not started (Init:N/M, an init container running, a container not ready) and what it
waits on is known (from its waiting log line, or from the table for the init container it is stuck in).
A component with no pod in the artifacts is listed only when another one waits on it, as `unknown`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from itertools import compress, groupby
from operator import attrgetter, or_

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.logs import Logs, Signature
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.knowledge import table
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Component, ComponentState
from gpusleuth.model.k8s import ContainerStatus, Pod
from gpusleuth.model.layers import Layer
from gpusleuth.model.logs import ContainerLog, LogLine

# Pod / container states that mean "it ran and failed", as kubectl prints them.
CRASH_REASONS = frozenset({"CrashLoopBackOff", "Error", "OOMKilled", "RunContainerError", "StartError", "ContainerCannotRun"})
_FAILED_REASONS = CRASH_REASONS | {
    "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerError", "CreateContainerConfigError",
    "UnexpectedAdmissionError", "Evicted", "Failed", "ContainerStatusUnknown", "ErrImageNeverPull",
}
_INIT = re.compile(r"^Init:(\d+)/(\d+)$")
_READY = re.compile(r"^(\d+)/(\d+)$")
_ERROR_SEVERITIES = frozenset({"error", "critical"})
_ERROR_LEVELS = frozenset({"error", "fatal", "critical", "panic"})
# A running pod is "degraded" when errors keep coming or are still at the end of its log, not for one old line.
_REPEATED_ERRORS = 3
_RECENT_TAIL = 20


@dataclass(frozen=True, slots=True)
class Wait:
    """One thing one container of an operand waits for (a marker file, a node label or a condition)."""

    container: str
    marker: str | None = None
    node_label: str | None = None
    condition: str | None = None
    when: str | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class OperandSpec:
    """A row of knowledge/operands.toml."""

    name: str
    operator: str
    layer: Layer
    patterns: tuple[re.Pattern, ...]
    app_labels: tuple[tuple[str, str], ...]
    containers: tuple[str, ...]
    init_containers: tuple[str, ...]
    produces: tuple[str, ...]
    waits: tuple[Wait, ...]

    shared: frozenset[tuple[str, str]] = frozenset()  # labels other rows list too: alone they identify no row
    # (labels with a value, those of them only this row lists): set with `shared` by operand_table, else worked out per call
    split_labels: tuple | None = None

    def matches(self, pod: Pod) -> bool:
        """A label only this row lists, or all of the row's labels, or its pod-name pattern."""
        return self.matches_labels(pod.labels) or self.matches_name(pod.name)

    def matches_labels(self, pod_labels: dict) -> bool:
        """A label only this row lists, or all of the row's labels."""
        if self.split_labels is None:
            labels = [(k, v) for k, v in self.app_labels if v]
            own = [(k, v) for k, v in labels if (k, v) not in self.shared]
        else:
            labels, own = self.split_labels
        get = pod_labels.get
        if any(get(k) == v for k, v in own):
            return True
        return bool(labels) and all(get(k) == v for k, v in labels)

    def matches_name(self, name: str) -> bool:
        return any(p.search(name) for p in self.patterns)

    def marker_waits(self, container: str | None = None) -> list[Wait]:
        return [w for w in self.waits if w.marker and (container is None or w.container == container)]


@dataclass(frozen=True, slots=True)
class Marker:
    path: str
    producers: tuple[str, ...]  # produced_by first, then also_produced_by
    meaning: str = ""


@cache
def operand_table() -> tuple[tuple[OperandSpec, ...], dict[str, Marker]]:
    """knowledge/operands.toml as typed rows, loaded and compiled once."""
    raw = table("operands")
    specs = []
    for row in raw.get("component", []):
        specs.append(
            OperandSpec(
                name=row["name"],
                operator=row.get("operator", ""),
                layer=Layer(row["layer"]),
                patterns=tuple(re.compile(p) for p in row.get("pod_name_patterns", [])),
                app_labels=tuple(tuple(s.split("=", 1)) for s in row.get("app_labels", []) if "=" in s and "<" not in s),
                containers=tuple(row.get("containers", [])),
                init_containers=tuple(row.get("init_containers", [])),
                produces=tuple(row.get("produces", [])),
                waits=tuple(
                    Wait(w["container"], w.get("marker"), w.get("node_label"), w.get("condition"), w.get("when"), w.get("note"))
                    for w in row.get("waits_on", [])
                ),
            )
        )
    markers = {
        m["path"]: Marker(m["path"], (m["produced_by"], *m.get("also_produced_by", [])), m.get("meaning", ""))
        for m in raw.get("marker", [])
    }
    counts = Counter(label for spec in specs for label in set(spec.app_labels))
    shared = frozenset(label for label, n in counts.items() if n > 1)
    out = []
    for spec in specs:
        mine = shared & set(spec.app_labels)
        labels = tuple((k, v) for k, v in spec.app_labels if v)
        out.append(replace(spec, shared=mine, split_labels=(labels, tuple(kv for kv in labels if kv not in mine))))
    return tuple(out), markers


def spec_for(pod: Pod) -> OperandSpec | None:
    """The operand a pod belongs to (first table row whose labels or name pattern match). What decides it is the
    pod's name and its values of the label keys the table lists, so the answer is worked out once per such key
    (every view asks again for every pod)."""
    keys, _ = _label_keys()
    try:
        return _spec_of(pod.name, tuple(map(pod.labels.get, keys)))
    except TypeError:  # an unhashable label value (hostile input): no cache
        specs, _ = operand_table()
        return next((s for s in specs if s.matches(pod)), None)


def spec_for_name(name: str) -> OperandSpec | None:
    """spec_for a pod known by name alone (no labels): the first row whose pod-name pattern matches."""
    keys, _ = _label_keys()
    return _spec_of(name, (None,) * len(keys))


@cache
def _label_keys() -> tuple[tuple[str, ...], dict[str, int]]:
    """Every label key a row of the table lists, and each one's position."""
    specs, _ = operand_table()
    keys = tuple(sorted({k for s in specs for k, _ in s.app_labels}))
    return keys, {k: i for i, k in enumerate(keys)}


@lru_cache(maxsize=1 << 16)
def _spec_of(name: str, values: tuple) -> OperandSpec | None:
    """The first row whose labels or name pattern match. Which row's labels match first depends on the label values
    alone (a fleet has thousands of pod names and a few label combinations): only the rows before it are tried on
    the name."""
    specs, _ = operand_table()
    first = _first_by_labels(values)
    return next((s for s in specs[:first] if s.matches_name(name)), specs[first] if first < len(specs) else None)


@lru_cache(maxsize=1 << 12)
def _first_by_labels(values: tuple) -> int:
    """The position of the first row whose labels match a pod with these values of _label_keys(); len(rows) if none."""
    specs, _ = operand_table()
    keys, _ = _label_keys()
    labels = {k: v for k, v in zip(keys, values) if v is not None}
    return next((i for i, s in enumerate(specs) if s.matches_labels(labels)), len(specs))


def _is_error(ln: LogLine, sigs: list[Signature]) -> bool:
    return any(s.severity in _ERROR_SEVERITIES for s in sigs) or (ln.level or "").lower() in _ERROR_LEVELS


class ErrorKeys(frozenset):
    """The (artifact, line) keys of the error-signature lines, with the same keys as artifact -> line numbers (made
    on first use, kept with the set: the graph tests every operand pod's logs against one set)."""

    __slots__ = ("_numbers",)

    def by_artifact(self) -> dict[str, frozenset]:
        try:
            return self._numbers
        except AttributeError:
            found: dict = defaultdict(set)
            for artifact, number in self:
                found[artifact].add(number)
            self._numbers = {a: frozenset(v) for a, v in found.items()}
            return self._numbers


def _error_keys(sig_at: dict) -> ErrorKeys:
    """The (artifact, line) keys whose signatures make a line an error whatever its level: _is_error is then
    `level in _ERROR_LEVELS or key in these`, without walking the signatures of every line of every pod."""
    # A fleet has hundreds of thousands of recognised lines and a few distinct signature tuples (the map shares one
    # per combination): each distinct tuple is judged once, and the keys are picked by its id at C speed.
    values = list(sig_at.values())
    ids = list(map(id, values))
    verdict = {i: any(s.severity in _ERROR_SEVERITIES for s in sigs) for i, sigs in dict(zip(ids, values)).items()}
    return ErrorKeys(compress(sig_at, map(verdict.__getitem__, ids)))


def _errors(lines, err_keys: frozenset) -> list[tuple[int, LogLine]]:
    """(index, line) of the error lines (_is_error) among lines: each line's level and key tested at C speed (every
    operand pod's lines are read several times per run). err_keys: from _error_keys (any set of keys will do, at
    the cost of a key tuple per line)."""
    if not lines:
        return []
    levels = list(map(_LEVEL, lines))
    known = _LEVEL_IS_ERROR
    for level in set(levels).difference(known):
        known[level] = (level or "").lower() in _ERROR_LEVELS
    flags = map(known.__getitem__, levels)
    artifacts = set(map(_ARTIFACT, lines)) if isinstance(err_keys, ErrorKeys) else None
    if artifacts is not None and len(artifacts) == 1:  # lines of one artifact (as a parsed log's are): tested by
        numbers = err_keys.by_artifact().get(next(iter(artifacts)))  # line number, no key tuples, none if it has none
        if numbers:
            flags = map(or_, flags, map(numbers.__contains__, map(_LINE, lines)))
    elif err_keys and (artifacts is None or not artifacts.isdisjoint(err_keys.by_artifact())):
        flags = map(or_, flags, map(err_keys.__contains__, zip(map(_ARTIFACT, lines), map(_LINE, lines))))
    return [(i, lines[i]) for i in compress(range(len(lines)), flags)]


_LEVEL, _ARTIFACT, _LINE = attrgetter("level"), attrgetter("artifact"), attrgetter("line")
_LEVEL_IS_ERROR: dict = {}  # a line's level as written -> whether it is an error level


def _is_wait(sig: Signature) -> bool:
    return bool(sig.marker) and "wait" in sig.tag


@dataclass(frozen=True, slots=True)
class PodLog:
    """The lines of one log artifact that belong to one pod (a must-gather log mixes containers)."""

    log: ContainerLog
    lines: tuple[LogLine, ...]

    @property
    def container(self) -> str | None:
        return self.log.container or next((ln.container for ln in self.lines if ln.container), None)


@dataclass
class OperandGraph:
    """Every operand component seen, per node, classified."""

    components: list[Component]
    pods: dict[tuple[str, str | None], Pod]  # (component name, node) -> pod
    logs: dict[str, list[PodLog]]  # pod name -> its log lines
    signatures: dict[tuple[str, int], list[Signature]]  # (artifact, line) -> signatures that matched it
    specs: dict[str, OperandSpec] = field(default_factory=dict)
    observed: dict[tuple[str, str | None], Observation] = field(default_factory=dict)  # (name, node) -> own state
    # Built on first use, rebuilt if components change: name -> its components in list order; the first
    # component of each (name, node); each blocked component's root (fleet-size graphs made scans quadratic).
    _by_name: dict | None = field(default=None, repr=False, compare=False)
    _by_key: dict = field(default_factory=dict, repr=False, compare=False)
    _roots: dict | None = field(default=None, repr=False, compare=False)
    _indexed: tuple = field(default=(), repr=False, compare=False)
    _err_keys: frozenset | None = field(default=None, repr=False, compare=False)  # _error_keys(signatures), once

    def _index(self) -> None:
        if self._by_name is not None and self._indexed == (id(self.components), len(self.components)):
            return
        by_name: dict[str, list[Component]] = {}
        by_key: dict[tuple, Component] = {}
        for c in self.components:
            by_name.setdefault(c.name, []).append(c)
            by_key.setdefault((c.name, c.node), c)
        self._by_name, self._by_key, self._roots = by_name, by_key, None
        self._indexed = (id(self.components), len(self.components))

    def get(self, name: str, node: str | None = None) -> Component | None:
        self._index()
        exact = self._by_key.get((name, node))
        if exact is not None:
            return exact
        if node is not None:
            return self._by_key.get((name, None))
        same = self._by_name.get(name)
        return same[0] if same else None

    def by_state(self, state: ComponentState) -> list[Component]:
        return [c for c in self.components if c.state == state]

    def observation(self, c: Component) -> Observation | None:
        return self.observed.get((c.name, c.node)) if c.pod else None

    def crashlooping(self, c: Component) -> bool:
        """Failed by crashing (CrashLoopBackOff, Error, OOMKilled...), not by never starting."""
        o = self.observation(c)
        return c.state == ComponentState.FAILED and o is not None and (o.reason in CRASH_REASONS or "CrashLoopBackOff" in (o.status or ""))

    def pod_of(self, c: Component) -> Pod | None:
        return self.pods.get((c.name, c.node)) if c.pod else None

    def chain(self, c: Component) -> list[Component]:
        """c, what blocks it, what blocks that... up to the end of the chain (cycle-safe)."""
        out, seen = [c], {(c.name, c.node)}
        while out[-1].blocked_by:
            nxt = self.get(out[-1].blocked_by, out[-1].node)
            if nxt is None or (nxt.name, nxt.node) in seen:
                break
            seen.add((nxt.name, nxt.node))
            out.append(nxt)
        return out

    def root_of(self, c: Component) -> Component | None:
        end = self.chain(c)[-1]
        return end if end.state == ComponentState.FAILED else None

    def roots(self) -> list[Component]:
        """Failed components whose own dependencies are ok or unknown: where a cascade starts."""
        out = []
        for c in self.by_state(ComponentState.FAILED):
            spec = self.specs.get(c.name)
            deps = [self.get(p, c.node) for w in (spec.marker_waits() if spec else []) for p in _producers(w.marker)]
            if not any(d and d.state in (ComponentState.FAILED, ComponentState.BLOCKED) and d.name != c.name for d in deps):
                out.append(c)
        return out

    def blocked_behind(self, root: Component) -> list[Component]:
        self._index()
        if self._roots is None:  # every blocked component's root, worked out once: id(root) -> [blocked, in order]
            self._roots = {}
            for c in self.by_state(ComponentState.BLOCKED):
                r = self.root_of(c)
                if r is not None and r is not c:
                    self._roots.setdefault(id(r), []).append(c)
        return [c for c in self._roots.get(id(root), ()) if c is not root]

    def pod_logs(self, pod: str, container: str | None = None) -> list[PodLog]:
        return [pl for pl in self.logs.get(pod, []) if container is None or pl.container in (None, container)]

    def decisive_lines(self, pod: str, container: str | None = None, n: int = 3) -> list[LogLine]:
        """The last error lines before the crash, the decisive one last (see _decisive)."""
        if self._err_keys is None:
            self._err_keys = _error_keys(self.signatures)
        return _decisive(self.logs.get(pod, []), self.signatures, container, n, self._err_keys)


def _producers(marker: str | None) -> tuple[str, ...]:
    if not marker:
        return ()
    m = operand_table()[1].get(marker)
    return m.producers if m else ()


def marker(path: str | None) -> Marker | None:
    return operand_table()[1].get(path) if path else None


# ---------------------------------------------------------------------------------------------------------
# Observing one pod


@dataclass(frozen=True, slots=True)
class Observation:
    """What one pod shows by itself, before the graph is consulted."""

    phase: str  # failed | waiting | not-ready | running | done | pending | unknown
    status: str | None
    container: str | None = None  # the container that failed or is stuck
    reason: str | None = None
    evidence: tuple[Evidence, ...] = ()


def _status_text(pod: Pod) -> str | None:
    parts = [p for p in (pod.ready, pod.status) if p]
    text = " ".join(parts)
    if pod.restarts:
        text += f" ({pod.restarts} restart{'s' if pod.restarts > 1 else ''})"
    return text or None


def _observe(pod: Pod, spec: OperandSpec) -> Observation:
    status = pod.status or pod.phase or ""
    ev = tuple(e for e in [pod.evidence] if e)
    shown = _status_text(pod)
    inits = [c for c in pod.containers if c.init]
    mains = [c for c in pod.containers if not c.init]
    bad = next((c for c in [*inits, *mains] if _container_failed(c)), None)
    init_reason = status.removeprefix("Init:") if status.startswith("Init:") else None
    if bad is not None or status in _FAILED_REASONS or (init_reason in _FAILED_REASONS):
        name = bad.name if bad else None
        cev = (bad.evidence,) if bad is not None and bad.evidence else ()
        reason = (bad.reason or bad.last_reason) if bad else (init_reason or status)
        return Observation("failed", shown, name, reason, ev + cev)
    m = _INIT.match(status)
    if m or any(c.state in ("running", "waiting") for c in inits):
        stuck = next((c for c in inits if c.state != "terminated"), None)
        name = stuck.name if stuck else None
        if name is None and m and int(m.group(1)) < len(spec.init_containers):
            name = spec.init_containers[int(m.group(1))]
        cev = (stuck.evidence,) if stuck is not None and stuck.evidence else ()
        return Observation("waiting", shown, name, f"stuck in init container {name}" if name else f"stuck in {status}", ev + cev)
    if status in ("Completed", "Succeeded"):
        return Observation("done", shown, evidence=ev)
    if status in ("ContainerCreating", "Pending", "PodInitializing") or (not status and pod.phase == "Pending"):
        return Observation("pending", shown, reason=f"not started ({status or pod.phase})", evidence=ev)
    if status == "Running" or pod.phase == "Running":
        ready = _READY.match(pod.ready or "")
        unready = [c for c in mains if c.ready is False]
        if unready or (ready and ready.group(1) != ready.group(2)):
            name = unready[0].name if unready else None
            cev = (unready[0].evidence,) if unready and unready[0].evidence else ()
            return Observation("not-ready", shown, name, "running but not ready", ev + cev)
        return Observation("running", shown, evidence=ev)
    return Observation("unknown", shown, reason=f"pod status {status}" if status else "pod status not shown", evidence=ev)


def _container_failed(c: ContainerStatus) -> bool:
    if c.reason in CRASH_REASONS or c.reason in _FAILED_REASONS:
        return True
    return c.state == "terminated" and c.exit_code not in (None, 0)


# ---------------------------------------------------------------------------------------------------------
# Building the graph


_POD = attrgetter("pod")


def _index_logs(logs: Logs | None, pods: list[tuple[Pod, OperandSpec]]) -> tuple[dict[str, list[PodLog]], dict[tuple[str, int], list[Signature]]]:
    """Pod name -> its log lines; a log naming no pod goes to the only pod of the operand its signatures name.
    pods: the operand pods with their rows (spec_for, worked out once by the caller)."""
    by_pod: dict[str, list[PodLog]] = defaultdict(list)
    if logs is None:
        return by_pod, {}
    sig_at = logs.signatures_at()
    pods_of: dict[str, list[str]] = defaultdict(list)
    for p, spec in pods:
        pods_of[spec.name].append(p.name)
    for log in logs.logs:
        if log.kind not in ("container", "operator"):
            continue
        groups: dict[str | None, list[LogLine]] = defaultdict(list)
        for pod, run in groupby(log.lines, _POD):  # a log's pods come in runs of lines
            groups[pod or log.pod].extend(run)
        for pod, lines in groups.items():
            if pod is None:
                # waiting lines are printed alike by many operands: only the others say whose log it is
                named = {s.component for ln in lines for s in sig_at.get((ln.artifact, ln.line), []) if s.component and not _is_wait(s)}
                owners = [p for comp in named for p in pods_of.get(comp, [])]
                if len(owners) != 1:
                    continue
                pod = owners[0]
            # a log of one pod (the usual case) shares its own tuple of lines instead of a copy of it
            kept = log.lines if len(groups) == 1 and len(lines) == len(log.lines) and isinstance(log.lines, tuple) else tuple(lines)
            by_pod[pod].append(PodLog(log, kept))
    return by_pod, sig_at


def _error_lines(plogs: list[PodLog], sig_at: dict, container: str | None, previous: bool | None,
                 err_keys: frozenset | None = None) -> list[LogLine]:
    err_keys = _error_keys(sig_at) if err_keys is None else err_keys
    out = []
    for pl in plogs:
        if previous is not None and pl.log.previous != previous:
            continue
        for _, ln in _errors(pl.lines, err_keys):
            if container is None or (ln.container or pl.container) in (None, container):
                out.append(ln)
    return out


def _decisive(plogs: list[PodLog], sig_at: dict, container: str | None = None, n: int = 3,
              err_keys: frozenset | None = None) -> list[LogLine]:
    """The last error lines before the crash, the decisive one last: a known signature wins over a bare
    error level, and the crashed instance (`--previous`) is read before the current one."""
    if not plogs:
        return []
    err_keys = _error_keys(sig_at) if err_keys is None else err_keys
    for previous in (True, False):
        lines = _error_lines(plogs, sig_at, container, previous, err_keys)
        if lines:
            known = [ln for ln in lines if any(s.severity in _ERROR_SEVERITIES for s in sig_at.get((ln.artifact, ln.line), []))]
            decisive = (known or lines)[-1]
            before = lines[: lines.index(decisive)]
            return [*before[-(n - 1):], decisive] if n > 1 else [decisive]
    return []


def _wait_lines(pod_logs: list[PodLog], sig_at: dict) -> list[tuple[LogLine, Signature]]:
    """(line, signature) of every waiting signature in the pod's lines, in order; the lines' signatures looked up at
    C speed."""
    out = []
    for pl in pod_logs:
        lines = pl.lines
        found = list(map(sig_at.get, zip(map(_ARTIFACT, lines), map(_LINE, lines))))
        for i in compress(range(len(lines)), found):
            for s in found[i]:
                if _is_wait(s):
                    out.append((lines[i], s))
    return out


def _degraded(pod_logs: list[PodLog], sig_at: dict, err_keys: frozenset | None = None) -> list[LogLine]:
    """Error lines of the current (not --previous) logs, when they keep coming or are still at the end."""
    err_keys = _error_keys(sig_at) if err_keys is None else err_keys
    out = []
    for pl in pod_logs:
        if pl.log.previous:
            continue
        errs = _errors(pl.lines, err_keys)
        if len(errs) >= _REPEATED_ERRORS or (errs and errs[-1][0] >= len(pl.lines) - _RECENT_TAIL):
            out.extend(ln for _, ln in errs)
    return out


def build(cluster: Cluster | None, logs: Logs | None) -> OperandGraph:
    specs, _ = operand_table()
    spec_by_name = {s.name: s for s in specs}
    pods = [(p, spec_for(p)) for p in (cluster.pods if cluster else [])]
    pods = [(p, s) for p, s in pods if s is not None]
    if not pods:
        raise NotApplicable("no GPU Operator or Network Operator operand pods in the artifacts")
    pod_logs, sig_at = _index_logs(logs, pods)
    err_keys = _error_keys(sig_at)
    observed = {p.name: _observe(p, s) for p, s in pods}

    # First pass: the state each pod shows by itself.
    first: dict[tuple[str, str | None], tuple[Pod, OperandSpec, Observation]] = {}
    for p, s in pods:
        key = (s.name, p.node)
        if key in first:  # two pods of one DaemonSet on one node (or node unknown): keep the one in trouble
            if _rank(observed[p.name].phase) <= _rank(first[key][2].phase):
                continue
        first[key] = (p, s, observed[p.name])

    first_by_name: dict[str, list[tuple[str | None, tuple]]] = {}  # name -> [(node, entry)] in first's order
    for (k, nd), v in first.items():
        first_by_name.setdefault(k, []).append((nd, v))

    def producer(marker_path: str, node: str | None) -> tuple[str, tuple[Pod, OperandSpec, Observation] | None]:
        names = _producers(marker_path)
        seen = [(n, first.get((n, node)) or (first.get((n, None)) if node is not None else next(iter(first_by_name.get(n, ())), (None, None))[1]))
                for n in names]
        for n, v in seen:  # prefer a producer that is itself in trouble: it is the one that explains the wait
            if v is not None and v[2].phase not in ("running", "done"):
                return n, v
        for n, v in seen:
            if v is not None:
                return n, v
        return (names[0], None) if names else ("", None)

    components: list[Component] = []
    unknown_needed: dict[tuple[str, str | None], list[str]] = {}
    first_names = {k for k, _ in first}
    for (name, node), (p, s, o) in first.items():
        plogs = pod_logs.get(p.name, [])
        state, blocked_by, waiting_on, reason, ev = _classify(p, s, o, plogs, sig_at, cluster, producer, node, err_keys)
        if blocked_by and blocked_by not in first_names:
            unknown_needed.setdefault((blocked_by, node), []).append(f"{name} waits on {waiting_on}")
        components.append(
            Component(name, node, s.layer, state, p.name, p.namespace, o.status, blocked_by, waiting_on, reason, ev)
        )
    for (name, node), why in unknown_needed.items():
        spec = spec_by_name.get(name)
        if spec is None:
            continue
        components.append(
            Component(name, node, spec.layer, ComponentState.UNKNOWN, reason=f"no pod in the artifacts; {'; '.join(why)}")
        )
    components.sort(key=lambda c: (c.node or "", _STATE_ORDER[c.state], c.layer.rank, c.name))
    return OperandGraph(
        components=components,
        pods={(n, nd): v[0] for (n, nd), v in first.items()},
        logs=dict(pod_logs),
        signatures=sig_at,  # the logs' own map, shared (read-only), not a copy of it
        _err_keys=err_keys,
        specs=spec_by_name,
        observed={k: v[2] for k, v in first.items()},
    )


_STATE_ORDER = {ComponentState.FAILED: 0, ComponentState.BLOCKED: 1, ComponentState.DEGRADED: 2, ComponentState.OK: 3, ComponentState.UNKNOWN: 4}


def _rank(phase: str) -> int:
    return {"failed": 5, "waiting": 4, "not-ready": 3, "pending": 2, "unknown": 1}.get(phase, 0)


def _classify(p: Pod, s: OperandSpec, o: Observation, plogs: list[PodLog], sig_at: dict, cluster: Cluster | None, producer, node,
              err_keys: frozenset | None = None):
    """(state, blocked_by, waiting_on, reason, evidence) of one pod."""
    ev = list(o.evidence)
    if o.phase == "failed":
        lines = _decisive(plogs, sig_at, o.container, err_keys=err_keys)
        ev.extend(ln.evidence() for ln in lines)
        where = o.container or (lines[-1].container if lines else None)
        reason = f"{o.reason} in {where}" if where else o.reason
        if lines:
            reason = f"{reason}: {lines[-1].message.strip()[:160]}"
        return ComponentState.FAILED, None, None, reason, tuple(ev)
    if o.phase in ("running", "done"):
        errors = _degraded(plogs, sig_at, err_keys)
        if errors:
            ev.extend(ln.evidence() for ln in errors[-3:])
            return ComponentState.DEGRADED, None, None, f"running, but its log shows errors: {errors[-1].message.strip()[:160]}", tuple(ev)
        return ComponentState.OK, None, None, None, tuple(ev)
    if o.phase in ("waiting", "not-ready"):
        marker_path, wait_ev = _waiting_on(s, o, plogs, sig_at, producer, node)
        ev.extend(wait_ev)
        if marker_path:
            who, prod = producer(marker_path, node)
            short = marker_path.rsplit("/", 1)[-1]
            if prod is not None and prod[2].phase in ("running", "done"):
                return (ComponentState.BLOCKED, None, marker_path,
                        f"{o.reason}, waiting on {short} although {who} looks healthy", tuple(ev))
            return ComponentState.BLOCKED, who or None, marker_path, f"{o.reason}, waiting on {short} from {who}", tuple(ev)
        if o.phase == "waiting":
            return ComponentState.BLOCKED, None, None, f"{o.reason}; what it waits for is not in the artifacts", tuple(ev)
        return ComponentState.DEGRADED, None, None, o.reason, tuple(ev)
    if o.phase == "pending" and cluster is not None:
        warnings = [e for e in cluster.events_for(p.name) if (e.type or "").lower() == "warning"]
        if warnings:
            ev.extend(e.evidence for e in warnings[-2:] if e.evidence)
            return ComponentState.FAILED, None, None, f"{o.reason}: {warnings[-1].reason}: {warnings[-1].message[:160]}", tuple(ev)
    return ComponentState.UNKNOWN, None, None, o.reason, tuple(ev)


def _waiting_on(s: OperandSpec, o: Observation, plogs: list[PodLog], sig_at: dict, producer, node) -> tuple[str | None, list[Evidence]]:
    """The marker a stuck pod waits on: its own latest waiting line says so best; else the table's wait of
    the container it is stuck in (a producer in trouble preferred when that container waits on several)."""
    lines = _wait_lines(plogs, sig_at)
    known = {w.marker for w in s.marker_waits()}
    if lines:
        ln, sig = lines[-1]
        if sig.marker in known or not known:
            return sig.marker, [ln.evidence()]
    waits = s.marker_waits(o.container) if o.container else []
    if not waits and o.container is None:
        waits = [w for w in s.marker_waits() if w.container in s.init_containers[:1]] if o.phase == "waiting" else []
    if not waits:
        return None, []
    for w in waits:
        _, prod = producer(w.marker, node)
        if prod is None or prod[2].phase not in ("running", "done"):
            return w.marker, []
    return waits[0].marker, []


@combiner(OperandGraph)
def build_operand_graph(facts: Facts) -> OperandGraph:
    return build(_optional(facts, Cluster), _optional(facts, Logs))


def _optional(facts: Facts, cls):
    try:
        return facts.get(cls)
    except NotApplicable:
        return None
