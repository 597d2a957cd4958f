"""Ordering: races between components, found on the merged timeline with the rules of knowledge/ordering.toml.

One generic check (OP101) reports every rule's violation; the finding takes the rule's layer and role, so a
kernel-driver race ranks on the kernel-driver layer. The rule table, not this module, says what must happen
before what.
"""

from __future__ import annotations

from typing import Iterable

from gpusleuth.analysis.ordering import Ordering, Violation
from gpusleuth.checks.base import check
from gpusleuth.facts.timeline import interval, when
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity


def _evidence(v: Violation) -> tuple[Evidence, ...]:
    out = []
    for e in v.evidence():
        out.append(Evidence(e.artifact, e.line, f"[{when(e)}] {e.text}"))
    return tuple(out)


def _fixes(v: Violation, ordering: Ordering) -> tuple[Fix, ...]:
    if not v.rule.fix:
        return ()
    pod, namespace = ordering.timeline.pod_of(v.then)
    if pod and namespace:
        cmds = (f"kubectl delete pod {pod} -n {namespace}",)
        where = ""
    elif pod:
        cmds = ()
        where = f" The pod is {pod}; its namespace is not in the artifacts (kubectl get pods -A | grep {pod})."
    else:
        cmds, where = (), " The pod that wrote these lines is not named in the artifacts."
    return (Fix(FixKind.IMMEDIATE, v.rule.fix + where, cmds),)


def _iso(t) -> str | None:
    return t.isoformat() if t else None


@check("OP101", "ordering-violation")
def ordering_violation(ordering: Ordering) -> Iterable[Hit]:
    """Two components did things in an order the operators' contracts forbid (a race between them).

    What it does: Puts every log source, event and container status on one clock (facts/timeline.py, with
    the year, zone and untimed-line inferences it states) and evaluates the happens-before rules of
    knowledge/ordering.toml per node, e.g. nvidia-peermem may only load after MOFED set
    /run/mellanox/drivers/.driver-ready. A violation is reported as certain only when the whole interval the
    late event can lie in ends before the event it had to wait for; otherwise as probable, with lower
    confidence. Rules whose events carry no usable time are listed as gaps, never as passes.
    Why it matters: Races leave no error of their own: the symptom (a module that will not insert, a plugin
    that advertises nothing) looks like a broken component, and restarting in the same order repeats it.
    The measured gap and both sides' lines show which component has to wait for which.
    How to fix: Restart the component that went too early once the one it depends on is ready (the finding
    names the pod), then make it wait for the readiness signal (the marker file or condition the rule names).
    """
    for v in ordering.violations():
        lo, hi = interval(v.then)
        yield Hit(
            title=v.rule.title if v.certain else f"{v.rule.title} (probably)",
            explanation=f"{v.describe()}. {v.rule.explanation}",
            severity=v.rule.severity if v.certain else Severity.WARNING,
            role=v.rule.role,
            layer=v.rule.layer,
            evidence=_evidence(v),
            fixes=_fixes(v, ordering),
            node=v.node,
            component=ordering.timeline.component_of(v.then),
            confidence=v.confidence,
            facts={
                "rule": v.rule.id,
                "certain": v.certain,
                "gap_seconds": list(v.gap) if v.gap else None,
                "then_earliest": _iso(lo),
                "then_latest": _iso(hi),
                "first_time": _iso(v.first and (v.first.time or v.first.earliest)),
            },
        )
    skipped = ordering.by_status("not-evaluated")
    if skipped and not ordering.violations():
        yield Hit(
            title=f"{len(skipped)} ordering rule(s) could not be evaluated",
            explanation="; ".join(f"{r.rule.id}: {r.reason}" for r in skipped),
            severity=Severity.INFO,
            role=Role.INFO,
            confidence=1.0,
            facts={"not_evaluated": [r.rule.id for r in skipped]},
        )
