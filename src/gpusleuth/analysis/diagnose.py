"""The pipeline: source -> documents -> parsers -> facts -> checks -> ranked findings -> report."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

from gpusleuth.analysis import fleet
from gpusleuth.analysis.engine import Selection, ingest, run_checks
from gpusleuth.analysis.rank import rank, verdict
from gpusleuth.facts import Facts, scope
from gpusleuth.gcpause import gc_paused
from gpusleuth.model.finding import Gap, Severity
from gpusleuth.model.report import Report
from gpusleuth.sources import Source

Progress = Callable[[str], None]  # told the stage a diagnosis is in: "reading" (after each document), "analysing"


def build_facts(source: Source, progress: Progress | None = None) -> Facts:
    """Facts from every Document of the source, read one file at a time (none is kept once parsed); the source's
    gaps (known once it has been read) come first, then the run's, then what parsing found."""
    facts = Facts(source.description, capture_time=source.captured_at)
    ingest(source.documents, facts, progress)
    facts.gaps[:0] = [*source.gaps, *getattr(source, "run_gaps", ())]
    return facts


def describe(source: Source) -> dict:
    """The report's `source`: what was read, and how much (counted as it was read)."""
    docs = source.documents
    return {"description": source.description, "kind": source.kind, "files": source.files,
            "documents": docs.count if getattr(docs, "done", False) else len(docs)}


def diagnose(source: Source, selection: Selection = Selection(), node: str | None = None, progress: Progress | None = None) -> Report:
    """node: report that node in full (its findings ungrouped, its components and timeline) instead of the fleet.
    progress: told "reading" after each document and "analysing" once they are all read (cli.py shows it)."""
    with gc_paused(settled=True):  # millions of acyclic objects; see gcpause.py
        facts = build_facts(source, progress)
        if progress is not None:
            progress("analysing")
        return analyse(facts, describe(source), selection, node)


def analyse(facts: Facts, about: dict, selection: Selection = Selection(), node: str | None = None) -> Report:
    """Checks, ranking and views over facts already gathered; `about` describes where they came from."""
    findings, outcomes = run_checks(facts, selection)
    roots, ordered = rank(findings)
    views = _views(facts)
    if node is not None and facts.recognised:  # nothing read at all: the caller says why (empty, binary) instead
        _must_know(node, facts, views, ordered)
        roots, ordered = fleet.focus(roots, ordered, node)
        _focus_views(views, node, facts)
    else:
        names, labels = _fleet_nodes(facts)
        roots, ordered, summary = fleet.group(roots, ordered, names, labels)
        if summary is not None:
            views["fleet"] = summary
    gaps = list(facts.gaps)
    gaps.extend(Gap("gpusleuth", e) for e in facts.errors if not any(e in str(g) for g in gaps))
    gaps = _grouped(gaps) + _unseen(outcomes)
    signs = [s for s in _health(facts) if node is None or s.node in (None, node)]  # one node's health is its own
    partial = any(g.what == PARTIAL for g in gaps)
    judged = verdict(ordered, len(signs), partial)
    views["health"] = [{"what": s.what, "node": s.node, **s.evidence.to_dict()} for s in signs[:MAX_SIGNS]]
    return Report(
        source={
            **about,
            "recognised": len(facts.recognised),
            **({"node": node} if node is not None else {}),  # the one node reported (--node)
            "analysed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        },
        verdict=judged,
        headline=(_undecided(partial, signs) if judged == "no-verdict" else _healthy(signs) if judged == "healthy"
                  else _headline(roots, ordered, views.get("components", ()))),
        root_causes=tuple(roots),
        findings=tuple(ordered),
        components=tuple(views.get("components", ())),
        timeline=tuple(views.get("timeline", ())),
        gaps=tuple(gaps),
        checks=tuple(outcomes),
        artifacts=tuple(
            {"artifact": r.artifact, "lines": f"{r.first_line}-{r.last_line}", "kind": r.kind, "objects": r.objects}
            for r in facts.recognised
        ),
        extras=views,
    )


def _fleet_nodes(facts: Facts) -> tuple[list[str], dict]:
    """(every node the artifacts know of, node -> {label dimension: value}) for fleet grouping."""
    from gpusleuth.errors import NotApplicable
    from gpusleuth.facts.cluster import Cluster

    try:
        cluster = facts.get(Cluster)
    except NotApplicable:
        return [], {}
    return cluster.node_names(), fleet.node_labels(cluster.nodes)


def _must_know(node: str, facts: Facts, views: dict, findings: list) -> None:
    """--node of a node the artifacts do not name is a mistake to say, not a healthy node to report. The nodes named:
    the cluster's, and any a component, timeline entry or finding names."""
    known = set(_fleet_nodes(facts)[0])
    for items in (views.get("components", ()), views.get("timeline", ()), findings):
        known.update(n for x in items if (n := getattr(x, "node", None)))
    if node not in known:
        from gpusleuth.errors import UnknownNode

        raise UnknownNode(node, sorted(known))


def _focus_views(views: dict, node: str, facts: Facts) -> None:
    """Components, timeline, phases, ordering and marker tree of one node (and those whose node is unknown)."""
    from gpusleuth.facts.timeline import Timeline
    from gpusleuth.report.cascade import render_text

    mine = lambda x: getattr(x, "node", None) in (None, node)  # noqa: E731
    if "components" in views:
        views["components"] = [c for c in views["components"] if mine(c)]
        views["cascade_text"] = render_text(views["components"]) if views["components"] else ""
    if "timeline" in views:
        views["timeline"] = [e for e in views["timeline"] if mine(e)]
        views["phases"] = [p.describe() for p in facts.get(Timeline).phases if mine(p)]
    if "markers" in views:
        from gpusleuth.analysis.ordering import node_markers

        views["markers"] = node_markers(facts, node)
    ordering = views.get("ordering")
    if isinstance(ordering, dict):
        views["ordering"] = {k: [x for x in v if not isinstance(x, dict) or x.get("node") in (None, node)] if isinstance(v, list) else v
                             for k, v in ordering.items()}


PARTIAL = "partial-input"  # a Gap's `what` when the input was cut short: no all-clear on it
MAX_SIGNS = 20


def _health(facts: Facts) -> list:
    from gpusleuth.errors import NotApplicable
    from gpusleuth.facts import HealthSigns

    try:
        return list(facts.get(HealthSigns).signs)
    except NotApplicable:
        return []
    except Exception as exc:  # noqa: BLE001 - a broken view is a gap, never a crash
        facts.errors.append(f"view health: {type(exc).__name__}: {exc}")
        return []


def _healthy(signs: list) -> str:
    more = f" (+{len(signs) - 1} more sign(s) of health)" if len(signs) > 1 else ""
    return f"Nothing failing in what the artifacts cover: {signs[0].what}{more}. See gaps for what they do not cover."


def _undecided(partial: bool, signs: list) -> str:
    if partial:
        return "No verdict: part of the input could not be read (see gaps), so its silence is not health."
    return ("No verdict: the artifacts show neither an error nor the GPU stack working. What would decide it: the GPU "
            "pods' status (`kubectl get pods -A -o wide`), `nvidia-smi` on the node, or the log of the pod that fails.")


GROUP_AT = 4  # this many artifacts with the same gap read as one line


def _grouped(gaps: list[Gap]) -> list[Gap]:
    """The same reason on many artifacts (a probe output on 1,000 nodes) as one gap naming a few of them."""
    by_reason: dict[tuple[str, str], list[Gap]] = {}
    for g in gaps:
        by_reason.setdefault((g.what, g.why), []).append(g)
    out = []
    for (what, why), same in by_reason.items():
        named = [g.artifact for g in same if g.artifact]
        if len(named) < GROUP_AT:
            out.extend(same)
            continue
        out.extend(g for g in same if not g.artifact)
        out.append(Gap(what, f"{why} — {len(named)} artifacts: {', '.join(named[:3])} and {len(named) - 3} more"))
    return out


def _unseen(outcomes) -> list[Gap]:
    """Checks skipped for want of an input, grouped by what was missing: silence there is not health. Without
    any Kubernetes object, everything only the cluster holds is missing too: one gap says so for all of it."""
    skipped = [o for o in outcomes if o.status == "skipped" and o.reason]
    no_cluster = next((o.reason for o in skipped if o.missing == scope.CLUSTER), None)
    by_reason: dict[str, list[str]] = {}
    for o in skipped:
        cluster_only = no_cluster is not None and o.missing in scope.CLUSTER_ONLY
        by_reason.setdefault(f"{no_cluster}, nor anything else only a cluster holds{_CLUSTER_ONLY}" if cluster_only else o.reason, []).append(o.code)
    out = []
    for reason, codes in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        shown = ", ".join(codes[:6]) + (f" and {len(codes) - 6} more" if len(codes) > 6 else "")
        out.append(Gap("input", f"{reason}: {len(codes)} check(s) could not run ({shown})"))
    return out


_CLUSTER_ONLY = (" (the operators' Helm release and ClusterPolicy, ConfigMaps, RuntimeClasses, pod specs, a dcgm-exporter "
                 "scrape; `gpusleuth collect` gathers them all)")


def _views(facts: Facts) -> dict:
    """Report views built from facts (operand graph, timeline); each is optional and isolated."""
    from gpusleuth.analysis import views

    out: dict = {}
    for name, build in views.VIEWS.items():
        try:
            out.update(build(facts))
        except Exception as exc:  # noqa: BLE001 - a broken view is a gap, never a crash
            from gpusleuth.errors import NotApplicable, UnusableData

            if not isinstance(exc, (NotApplicable, UnusableData)):
                facts.errors.append(f"view {name}: {type(exc).__name__}: {exc}")
    return out


def _headline(roots, findings, components) -> str:
    if not roots:
        serious = [f for f in findings if f.severity.weight >= 1]
        if serious:
            return serious[0].title
        return "No known failure found in the artifacts given (see gaps for what could not be seen)."
    top = roots[0]
    grouped = "fleet" in top.facts  # its title already says on how many nodes
    where = f" on {top.node}" if top.node and top.node not in top.title and not grouped else ""
    on = set(top.facts["fleet"]["nodes"]) if grouped else None  # a fleet's cause: what is blocked on its nodes
    blocked = [c for c in components if c.state.value == "blocked" and (on is None or c.node in on)]
    tail = f"; {len(blocked)} component(s) blocked behind it" if blocked else ""
    # Only causes that stand on their own count: one explained by another root cause (caused_by) is its
    # consequence, and a warning (an end-of-life branch, a missing setting) breaks nothing by itself.
    others = [f for f in roots[1:] if not f.caused_by and f.severity.weight >= Severity.ERROR.weight]
    more = f" (+{len(others)} more root cause(s))" if others else ""
    return f"{top.title}{where}{tail}{more}"
