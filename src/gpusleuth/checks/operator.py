"""Operator layer: the GPU Operator's and Network Operator's operands as a whole, from the operand graph."""

from __future__ import annotations

from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.facts.operands import OperandGraph, marker
from gpusleuth.model.finding import Component, ComponentState, Fix, FixKind, Hit, Role, Severity


def _ns(ns: str | None) -> str:
    return f" -n {ns}" if ns else ""


@check("OP001", "operand-crashlooping")
def operand_crashlooping(graph: OperandGraph) -> Iterable[Hit]:
    """An operator operand pod is crash-looping; its last error before the crash says why.

    What it does: For every GPU Operator / Network Operator operand pod in CrashLoopBackOff, Error or
    OOMKilled (pod status or container state), names the component, its layer (knowledge/operands.toml)
    and the container that failed, and cites the decisive log line: the last error before the crash (a
    known signature first, then an error-level line; the `--previous` log before the current one).
    Why it matters: a crashing operand never writes its readiness marker, so everything that waits on it
    stays blocked; the decisive line is usually the whole diagnosis. This is the generic fallback
    (confidence 0.5): when a specific check explains the same crash, the ranking shows that one as the root
    cause and this one as its symptom.
    How to fix: read the crashed instance's log (`kubectl logs --previous POD -c CONTAINER`), fix what its
    last error says, then delete the pod so its DaemonSet recreates it.
    """
    for c in graph.by_state(ComponentState.FAILED):
        if graph.crashlooping(c):
            yield _crash_hit(graph, c)


def _crash_hit(graph: OperandGraph, c: Component) -> Hit:
    obs = graph.observation(c)
    pod = graph.pod_of(c)
    lines = graph.decisive_lines(c.pod)
    container = (obs.container if obs else None) or (lines[-1].container if lines else None) or next(
        (pl.container for pl in graph.pod_logs(c.pod) if pl.container), None)
    behind = graph.blocked_behind(c)
    evidence = list(c.evidence)
    evidence += [ln.evidence() for ln in lines]
    ctr = f" -c {container}" if container else ""
    ns = _ns(c.namespace)
    if lines:
        decisive = lines[-1]
        said = f"Its last error before the crash: \"{decisive.message.strip()[:200]}\" ({decisive.evidence().cite()})."
        title = f"{c.name} is crash-looping: {decisive.message.strip()[:120]}"
    else:
        said = (f"No log of {c.pod} is in the artifacts, so the reason is not visible: "
                f"`kubectl logs --previous {c.pod}{ns}{ctr}` shows it.")
        title = f"{c.name} is crash-looping ({c.status or 'CrashLoopBackOff'})"
    waiting = f" {len(behind)} operand(s) wait on it: {', '.join(b.name for b in behind)}." if behind else ""
    restarts = pod.restarts if pod is not None else None
    return Hit(
        title=title,
        explanation=(
            f"{c.name} ({c.layer.value} layer) pod {c.pod}"
            + (f", container {container}," if container else "")
            + f" keeps failing ({c.status or 'CrashLoopBackOff'}). {said}{waiting}"
        ),
        severity=Severity.ERROR,
        role=Role.ROOT_CAUSE,
        evidence=tuple(dict.fromkeys(e for e in evidence if e)),
        fixes=(
            Fix(
                FixKind.IMMEDIATE,
                "Read the crashed instance's log and the pod's events; fix what the last error says, then delete the pod "
                "so that its DaemonSet starts a fresh one.",
                (f"kubectl logs --previous {c.pod}{ns}{ctr}", f"kubectl describe pod {c.pod}{ns}", f"kubectl delete pod {c.pod}{ns}"),
            ),
        ),
        node=c.node,
        component=c.name,
        confidence=0.5,
        layer=c.layer,
        facts={"pod": c.pod, "namespace": c.namespace, "container": container, "restarts": restarts,
               "decisive_line": lines[-1].evidence().to_dict() if lines else None, "blocked": [b.name for b in behind]},
    )


@check("OP002", "operand-blocked")
def operand_blocked(graph: OperandGraph) -> Iterable[Hit]:
    """An operand is stuck waiting on a readiness marker that another operand never created.

    What it does: For every operand the operand graph classifies as blocked (its pod is in Init:N/M or not
    ready, and the init container it is stuck in waits on a marker such as toolkit-ready), names what
    blocks it, the marker, and the chain down to the failed component at its root, citing the pod's status
    line and its waiting log line.
    Why it matters: blocked operands are not broken themselves; restarting them does nothing. Listing them
    as blocked, linked to the root cause, keeps attention on the one component to fix.
    How to fix: nothing on the blocked operand itself: fix the root component of the chain; the markers are
    created in turn and the blocked pods start by themselves.
    """
    for c in graph.by_state(ComponentState.BLOCKED):
        root = graph.root_of(c)
        chain = graph.chain(c)
        short = c.waiting_on.rsplit("/", 1)[-1] if c.waiting_on else None
        if c.blocked_by:
            title = f"{c.name} is blocked: waiting on {short} from {c.blocked_by}"
            if root is not None and root is chain[1]:
                tail = f"; {root.name} failed"
            elif root is not None:
                tail = f"; the chain ends at {root.name}, which failed: {' -> '.join(x.name for x in chain)}"
            else:
                tail = f"; the chain ends at {chain[-1].name} ({chain[-1].state.value}), whose cause is not in the artifacts"
            explanation = f"{c.name} ({c.status or 'not started'}) waits on {c.waiting_on}, which {c.blocked_by} creates when healthy{tail}."
            meaning = marker(c.waiting_on)
            if meaning is not None and meaning.meaning:
                explanation += f" {short}: {meaning.meaning}"
        else:
            title = f"{c.name} is stuck ({c.status or 'not started'})" + (f" waiting on {short}" if short else "")
            explanation = f"{c.name}: {c.reason}."
        yield Hit(
            title=title,
            explanation=explanation + " It starts by itself once the marker exists.",
            severity=Severity.WARNING,
            role=Role.BLOCKED,
            evidence=c.evidence,
            node=c.node,
            component=c.name,
            confidence=0.9 if c.blocked_by else 0.6,
            layer=c.layer,
            caused_by=("OP001",) if root is not None and graph.crashlooping(root) else (),
            facts={"pod": c.pod, "blocked_by": c.blocked_by, "waiting_on": c.waiting_on, "root": root.name if root else None,
                   "chain": [x.name for x in chain]},
        )
