"""Happens-before rules (knowledge/ordering.toml) evaluated on the merged timeline.

For each rule and node: every `then` entry must come after a `first` entry that still holds (no
`revoked_by` entry since). A violation is *certain* only when the whole interval the `then` entry can lie in
ends before the next `first` entry begins, and the `first` side is known to have been absent (revoked, or
never seen before); otherwise it is *probable* and said so, with a lower confidence. A rule whose entries
are present but carry no usable time, or whose `first` side is missing from the artifacts, cannot be
evaluated: it becomes a gap, never a pass.

The same results give two renderings: "what should have happened vs what happened" for each
violation, and the marker-file tree (who produced, checked, or failed to check each readiness file).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import cache

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.logs import signatures
from gpusleuth.facts.operands import operand_table
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.facts.timeline import Selector, Timeline, hhmm, interval, sort_time, when
from gpusleuth.knowledge import table
from gpusleuth.model.finding import Gap, Role, Severity
from gpusleuth.model.layers import Layer
from gpusleuth.model.report import TimelineEntry
from gpusleuth.parsers.timestamps import format_duration

CERTAIN, CERTAIN_UNSEEN_BEFORE, PROBABLE = 0.9, 0.75, 0.55


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    layer: Layer
    role: Role
    severity: Severity
    first: Selector
    then: Selector
    revoked_by: Selector | None
    window: Selector | None
    marker: str | None
    explanation: str
    fix: str
    source: str


@cache
def rules() -> tuple[Rule, ...]:
    out = []
    for row in table("ordering").get("rule", []):
        first = Selector.from_row(row["first"])
        revoked = row["first"].get("revoked_by")
        out.append(Rule(
            id=row["id"], title=row["title"], layer=Layer(row["layer"]), role=Role(row.get("role", "contributing")),
            severity=Severity(row.get("severity", "warning")), first=first, then=Selector.from_row(row["then"]),
            revoked_by=Selector("", frozenset(revoked), frozenset(), first.components, first.containers) if revoked else None,
            window=Selector.from_row(row.get("window")), marker=row.get("marker"), explanation=" ".join(row.get("explanation", "").split()),
            fix=row.get("fix", ""), source=row.get("source", ""),
        ))
    return tuple(out)


@cache
def milestone_tags() -> tuple[str, ...]:
    return tuple(table("ordering").get("milestones", {}).get("tags", ()))


@dataclass(frozen=True)
class Violation:
    rule: Rule
    node: str | None
    then: TimelineEntry  # the best-timed entry of the offending attempt
    others: tuple[TimelineEntry, ...]  # the rest of that attempt (load line, error line, kernel line)
    first: TimelineEntry | None  # the `first` entry that came too late (None: never, in the artifacts)
    revoked: TimelineEntry | None  # what undid `first` before `then` (e.g. "Unsetting driver ready state")
    certain: bool
    confidence: float
    gap: tuple[float, float] | None  # shortest and longest time `then` came before `first`, seconds (probable: 0..max)

    def gap_text(self) -> str:
        if self.gap is None:
            return ""
        lo, hi = self.gap
        if hi - lo < 1:
            return format_duration(lo)
        if hi - lo <= max(30.0, 0.1 * hi):
            return "≈" + format_duration((lo + hi) / 2)
        return f"{format_duration(lo)}–{format_duration(hi)}"

    def describe(self) -> str:
        """'nvidia-peermem load attempted ≈2m31s before MOFED set .driver-ready at 11:58:39'."""
        then, first = self.rule.then.label, self.rule.first.label
        hedge = "" if self.certain else "probably "
        if self.first is None:
            return f"{then} at {when(self.then)} {hedge}while '{first}' had not happened; it does not appear later in the artifacts either"
        at = when(self.first)
        if self.gap is not None and self.gap[1] > 0 and self.certain:
            return f"{then} {self.gap_text()} before {first} at {at}"
        lo, hi = interval(self.then)
        known = f"lie in {hhmm(lo)}–{hhmm(hi)}" if lo and hi else (f"be after {hhmm(lo)}" if lo else f"be before {hhmm(hi)}")
        by = f", by at most {format_duration(self.gap[1])}" if self.gap and not self.certain else ""
        return f"{then} {hedge}before {first} at {at}{by} (its time is only known to {known})"

    def evidence(self) -> tuple[TimelineEntry, ...]:
        out = [self.then, *self.others]
        if self.revoked is not None:
            out.append(self.revoked)
        if self.first is not None:
            out.append(self.first)
        return tuple(out)


@dataclass(frozen=True)
class RuleResult:
    rule: Rule
    node: str | None
    status: str  # violated | held | not-evaluated | not-applicable
    reason: str = ""
    violation: Violation | None = None


@dataclass
class Ordering:
    results: list[RuleResult] = field(default_factory=list)
    timeline: Timeline | None = None

    def violations(self) -> list[Violation]:
        return [r.violation for r in self.results if r.violation is not None]

    def by_status(self, status: str) -> list[RuleResult]:
        return [r for r in self.results if r.status == status]


@combiner(Ordering)
def build_ordering(facts: Facts) -> Ordering:
    timeline = facts.get(Timeline)
    results = evaluate(timeline)
    if all(r.status == "not-applicable" for r in results):
        raise NotApplicable("none of the ordering rules' events are in the artifacts")
    for r in results:
        if r.status == "not-evaluated":
            gap = Gap("ordering", f"rule {r.rule.id} ({r.rule.title}) not evaluated: {r.reason}")
            if gap not in facts.gaps:
                facts.gaps.append(gap)
    return Ordering(results, timeline)


def evaluate(tl: Timeline) -> list[RuleResult]:
    out = []
    for rule in rules():
        # the entries each selector means, in timeline order, from the timeline's signature/tag index (a scan of
        # every entry per selector before: Timeline.select answers the same, tests/facts/test_indexes.py)
        thens_all = tl.select(rule.then)
        firsts_all = tl.select(rule.first)
        revokes_all = tl.select(rule.revoked_by) if rule.revoked_by else []
        windows_all = tl.select(rule.window) if rule.window else []
        if not thens_all:
            out.append(RuleResult(rule, None, "not-applicable", f"no '{rule.then.label}' in the artifacts"))
            continue
        out.extend(_evaluate_scope(rule, node, *lists) for node, lists in _by_scope((thens_all, firsts_all, revokes_all, windows_all)))
    return out


def _by_scope(groups: tuple[list[TimelineEntry], ...]) -> list[tuple[str | None, list[list[TimelineEntry]]]]:
    """Nodes to evaluate on, with each node's share of each list in order. Entries whose node is unknown join
    the node when there is exactly one, else they are a scope of their own. One pass over the entries (a
    pass per node made fleet-size timelines quadratic)."""
    nodes = sorted({e.node for g in groups for e in g if e.node})
    if len(nodes) <= 1:
        return [(nodes[0] if nodes else None, [list(g) for g in groups])]
    split: list[dict] = []
    for g in groups:
        by: dict = {}
        for e in g:
            by.setdefault(e.node, []).append(e)
        split.append(by)
    scopes = [(n, [by.get(n, []) for by in split]) for n in nodes]
    if any(None in by for by in split):
        scopes.append((None, [by.get(None, []) for by in split]))
    return scopes


def _evaluate_scope(rule: Rule, node, thens, firsts, revokes, windows) -> RuleResult:
    if not thens:
        return RuleResult(rule, node, "not-applicable", f"no '{rule.then.label}' on this node")
    if windows:
        opened = min((sort_time(w) for w in windows if sort_time(w)), default=None)
        if opened is not None:
            thens = [t for t in thens if (interval(t)[1] or interval(t)[0]) is None or (interval(t)[1] or interval(t)[0]) >= opened]
            if not thens:
                return RuleResult(rule, node, "not-applicable", f"no '{rule.then.label}' after '{rule.window.label}'")
    timed_thens = [t for t in thens if interval(t) != (None, None)]
    if not timed_thens:
        cites = ", ".join(f"{t.artifact}:{t.line}" for t in thens[:3])
        return RuleResult(rule, node, "not-evaluated", f"'{rule.then.label}' ({cites}) carries no time and no timestamped neighbour")
    if not firsts:
        return RuleResult(rule, node, "not-evaluated", f"no '{rule.first.label}' line in the artifacts, so its order against '{rule.then.label}' cannot be seen")
    # `first` needs a known earliest time: "some time before the capture" cannot show that anything preceded it
    timed_firsts = [f for f in firsts if interval(f)[0] is not None]
    if not timed_firsts:
        cites = ", ".join(f"{f.artifact}:{f.line}" for f in firsts[:3])
        return RuleResult(rule, node, "not-evaluated", f"'{rule.first.label}' ({cites}) carries no time (at most an upper bound)")
    first_idx = _Index(timed_firsts)
    revoke_idx = _Index(r for r in revokes if interval(r) != (None, None))
    offending = []
    for t in sorted(timed_thens, key=sort_time):
        v = _check(rule, node, t, first_idx, revoke_idx)
        if v is not None:
            offending.append(v)
    if not offending:
        return RuleResult(rule, node, "held", f"every '{rule.then.label}' came after '{rule.first.label}'")
    primary = _primary(offending)
    same = [v.then for v in offending if v.first is primary.first and v.then is not primary.then]
    violation = Violation(primary.rule, node, primary.then, tuple(same[:3]), primary.first, primary.revoked,
                          primary.certain, primary.confidence, primary.gap)
    return RuleResult(rule, node, "violated", violation.describe(), violation)


class _Index:
    """Entries sorted two ways, so each `then` entry is checked in O(log n): by latest time (what surely came
    before a moment) and by time (what came next)."""

    def __init__(self, entries):
        entries = list(entries)
        self.by_hi = sorted((e for e in entries if interval(e)[1] is not None), key=lambda e: interval(e)[1])
        self.his = [interval(e)[1] for e in self.by_hi]
        self.by_time = sorted((e for e in entries if sort_time(e) is not None), key=sort_time)
        self.times = [sort_time(e) for e in self.by_time]

    def last_surely_before(self, moment) -> TimelineEntry | None:
        if moment is None:
            return None
        k = bisect_right(self.his, moment)
        return self.by_hi[k - 1] if k else None

    def next_from(self, moment, not_before) -> TimelineEntry | None:
        """The first entry at or after `moment` (any when None) that did not surely happen by `not_before`."""
        k = bisect_left(self.times, moment) if moment is not None else 0
        for e in self.by_time[k:]:
            if not _surely_before(e, not_before):
                return e
        return None


def _check(rule: Rule, node, t: TimelineEntry, firsts: _Index, revokes: _Index) -> Violation | None:
    """The violation `t` makes, if any. Intervals are honoured: `first` held at `t` only if it surely came
    before `t` (its latest time before `t`'s earliest) and nothing surely revoked it since."""
    t_lo, t_hi = interval(t)
    last_first = firsts.last_surely_before(t_lo)
    last_revoke = revokes.last_surely_before(t_lo)
    if last_first is not None and (last_revoke is None or interval(last_revoke)[1] <= interval(last_first)[1]):
        return None  # `first` surely happened before and still held (a tie with its revocation counts as held)
    nxt = firsts.next_from(sort_time(last_revoke) if last_revoke else None, t_lo)
    state_known = last_revoke is not None  # the artifacts show `first` undone before `then`
    if nxt is None:
        conf = CERTAIN if state_known else CERTAIN_UNSEEN_BEFORE
        return Violation(rule, node, t, (), None, last_revoke, state_known, conf, None)
    f_lo, f_hi = interval(nxt)  # f_lo is known (rules without it are not evaluated)
    if t_hi is not None and t_hi < f_lo:
        conf = CERTAIN if state_known else CERTAIN_UNSEEN_BEFORE
        gap = ((f_lo - t_hi).total_seconds(), ((f_hi or f_lo) - t_lo).total_seconds()) if t_lo else None
        return Violation(rule, node, t, (), nxt, last_revoke, True, conf, gap)
    if t_lo is None or f_hi is None or t_lo < f_hi:
        gap = (0.0, (f_hi - t_lo).total_seconds()) if t_lo is not None and f_hi is not None else None
        return Violation(rule, node, t, (), nxt, last_revoke, False, PROBABLE, gap)
    return None


def _surely_before(e: TimelineEntry, t_lo) -> bool:
    hi = interval(e)[1]
    return hi is not None and t_lo is not None and hi <= t_lo


def _primary(vs: list[Violation]) -> Violation:
    """The offending entry timed most precisely (certain first), then the earliest."""
    def width(v: Violation) -> float:
        lo, hi = interval(v.then)
        return (hi - lo).total_seconds() if lo and hi else float("inf")

    return min(vs, key=lambda v: (not v.certain, width(v), sort_time(v.then)))


# ---- renderings derived from the rules -------------------------------------------------------------------


def _milestones(tl: Timeline, lane: str | None, node, until: TimelineEntry | None = None, lanes: dict | None = None) -> list[TimelineEntry]:
    """The lane's entries with a milestone tag, first of each tag, in time order (up to `until`). `lanes`
    (from _by_lane) spares a walk over every entry per call."""
    tags = set(milestone_tags())
    limit = sort_time(until) if until else None
    seen, out = set(), []
    if lanes is None:
        entries = tl.entries
    elif node:
        entries = [e for _, e in sorted(lanes.get((lane, node), []) + lanes.get((lane, None), []), key=lambda pe: pe[0])]
    else:
        entries = [e for _, e in lanes.get(lane, ())]
    for e in entries:
        if e.source != lane or not sort_time(e) or (node and e.node not in (node, None)):
            continue
        if limit and sort_time(e) > limit:
            break
        tag = next((t for t in tl.tags_of(e) if t in tags), None)
        if tag and tag not in seen:
            seen.add(tag)
            out.append(e)
    return out


def _by_lane(tl: Timeline) -> dict:
    """lane -> its (position, entry) pairs, and (lane, node) -> those on that node, in timeline order."""
    out: dict = {}
    for i, e in enumerate(tl.entries):
        out.setdefault(e.source, []).append((i, e))
        out.setdefault((e.source, e.node), []).append((i, e))
    return out


def should_vs_happened(ordering: Ordering) -> list[dict]:
    """Per violation, two boxes: the order the rule demands and the order the artifacts show."""
    tl = ordering.timeline
    out = []
    lanes = _by_lane(tl)
    for v in ordering.violations():
        first_lane = v.first.source if v.first else (v.revoked.source if v.revoked else None)
        then_lane = v.then.source
        a = _milestones(tl, first_lane, v.node, v.first, lanes) if first_lane else []
        b = [e for e in _milestones(tl, then_lane, v.node, v.then, lanes) if e is not v.then and sort_time(e) <= sort_time(v.then)]
        marker = v.rule.marker.rsplit("/", 1)[-1] if v.rule.marker else v.rule.first.label
        should_a = [e.text for e in a if e is not v.first] + [v.rule.first.label]
        should_b = [e.text for e in b] + [f"wait for {marker}", v.rule.then.label]
        happened_a = [(when(e), e.text, True) for e in a if e is not v.first]
        if v.first is not None:
            happened_a.append((when(v.first), v.rule.first.label, True))
        happened_b = [(when(e), e.text, True) for e in b]
        happened_b.append((when(v.then), f"{v.rule.then.label} — {v.then.text}", False))
        out.append({
            "rule": v.rule.id,
            "node": v.node,
            "first_lane": first_lane,
            "then_lane": then_lane,
            "should": {"first": should_a, "then": should_b, "arrow": [v.rule.first.label, v.rule.then.label]},
            "happened": {"first": happened_a, "then": happened_b},
            "missed": v.describe(),
        })
    return out


def marker_tree(ordering: Ordering, operand_components=(), node: str | None = None) -> list[dict]:
    """Which component produced, checked, or failed to check each readiness file (the marker tree).

    operand_components: Components from the operand graph, when built, for markers nobody created because
    their producer is failed or blocked. node: one node's tree (markers are files on a node; lines whose node
    is unknown stay), not every node's markers merged by path."""
    mine = (lambda x: True) if node is None else (lambda x: getattr(x, "node", None) in (None, node))  # noqa: E731
    operand_components = [c for c in operand_components if mine(c)]
    tl = ordering.timeline
    specs, markers = operand_table()
    producer_container = {m["path"]: m.get("producer_container") for m in table("operands").get("marker", [])}
    sig_marker = {s.id: s.marker for s in signatures()[0] if s.marker}
    involved: dict[str, dict] = {}

    def node(path: str) -> dict:
        if path not in involved:
            m = markers.get(path)
            involved[path] = {"path": path, "producer": m.producers[0] if m else None, "producer_container": producer_container.get(path),
                              "set": [], "unset": [], "waited": [], "checked_by": [], "not_checked_by": [], "status": ""}
        return involved[path]

    for e in tl.entries:
        if not mine(e):
            continue
        for sig in tl.signatures_of(e):
            path = sig_marker.get(sig)
            if not path:
                continue
            tags = tl.tags_of(e)
            entry = {"when": when(e), "cite": f"{e.artifact}:{e.line}", "container": e.container, "text": e.text}
            if "marker-set" in tags:
                node(path)["set"].append(entry)
            elif "marker-unset" in tags:
                node(path)["unset"].append(entry)
            elif any("wait" in t for t in tags):
                node(path)["waited"].append(entry)
    for v in ordering.violations():
        if v.rule.marker and mine(v):
            node(v.rule.marker)["not_checked_by"].append({"container": v.then.container, "component": tl.component_of(v.then),
                                                          "cite": f"{v.then.artifact}:{v.then.line}", "why": v.describe()})
    for c in operand_components:
        if getattr(c, "waiting_on", None) and c.state.value == "blocked":
            node(c.waiting_on)
    for path, n in involved.items():
        for s in specs:
            for w in s.marker_waits():
                if w.marker == path:
                    n["checked_by"].append({"component": s.name, "container": w.container})
        producer_state = next((c.state.value for c in operand_components if c.name == n["producer"]), None)
        if n["set"]:
            n["status"] = f"created {n['set'][-1]['when']}"
        elif producer_state in ("failed", "blocked"):
            n["status"] = f"never created ({n['producer']} is {producer_state})"
        else:
            n["status"] = "no line in the artifacts shows it being created"
    return list(involved.values())


__all__ = ["Ordering", "Rule", "RuleResult", "Violation", "evaluate", "marker_tree", "node_markers", "rules", "should_vs_happened"]


# ---- the report view --------------------------------------------------------------------------------------


def violation_dict(v: Violation) -> dict:
    lo, hi = interval(v.then)
    first_lo = interval(v.first)[0] if v.first else None
    return {
        "rule": v.rule.id,
        "title": v.rule.title,
        "node": v.node,
        "certain": v.certain,
        "confidence": v.confidence,
        "summary": v.describe(),
        "gap_seconds": list(v.gap) if v.gap else None,
        "window": [t.isoformat() if t else None for t in (lo, first_lo or hi)],
        "lanes": [v.first.source if v.first else None, v.then.source],
        "then": {"artifact": v.then.artifact, "line": v.then.line, "text": v.then.text, "when": when(v.then)},
        "first": {"artifact": v.first.artifact, "line": v.first.line, "text": v.first.text, "when": when(v.first)} if v.first else None,
    }


def _ordering_and_components(facts: Facts) -> tuple[Ordering, list]:
    from gpusleuth.facts.operands import OperandGraph

    try:
        ordering = facts.get(Ordering)
    except NotApplicable:
        ordering = Ordering([], facts.get(Timeline))
    try:
        components = facts.get(OperandGraph).components
    except NotApplicable:
        components = []
    return ordering, components


def node_markers(facts: Facts, node: str) -> list[dict]:
    """One node's marker tree (`diagnose --node`, `timeline --node`)."""
    ordering, components = _ordering_and_components(facts)
    return marker_tree(ordering, components, node)


def timeline_view(facts: Facts) -> dict:
    """Report extras: the merged timeline, the ordering results with their pictures, the marker tree."""
    tl = facts.get(Timeline)
    ordering, components = _ordering_and_components(facts)
    return {
        "timeline": list(tl.entries),
        "timeline_notes": list(tl.notes),
        "phases": [p.describe() for p in tl.phases],
        "ordering": {
            "violations": [violation_dict(v) for v in ordering.violations()],
            "results": [{"rule": r.rule.id, "node": r.node, "status": r.status, "reason": r.reason} for r in ordering.results],
            "should_vs_happened": should_vs_happened(ordering),
        },
        "markers": marker_tree(ordering, components),
    }
