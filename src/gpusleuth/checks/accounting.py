"""Every error is accounted for: the errors no other check cites become findings of their own.

One check per layer (HW900 ... WL900, `unexplained-<layer>-failure`), run after all the others (they need
`Explained`, the lines the other findings cite). Each groups the error lines of one component on one node
that nothing explains, picks the decisive line (the fatal line, else the last error before the component
stopped; never a retry banner; the first line of a chain that later lines repeat is cited beside it), says
what the message catalogue knows of the message, and gives the commands that fetch the next piece of
evidence and a search of the component's tracker for the message without its variable parts. Such a finding
is a guess by construction (confidence 0.3-0.4): any specific cause on the same node ranks above it.

Error lines that do not mean a failure now (knowledge/attribution.toml noise, a retry that later worked, an
old error in a pod that is running and ready), and the other error lines of a pod another finding is about
(part of that failure), are listed in an info finding of the same check, so that no error line goes
unmentioned and none raises the verdict twice.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Iterable
from urllib.parse import quote_plus

from gpusleuth.checks.base import Check
from gpusleuth.checks.classes import clip
from gpusleuth.facts.errors import ErrorLine, ErrorLines
from gpusleuth.knowledge import table
from gpusleuth.knowledge.message_catalogue import catalogue
from gpusleuth.model.finding import Finding, Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.layers import Layer

CODE = "900"  # the number every layer's unexplained-failure check carries
MAX_EVIDENCE = 6
_KIND_ORDER = {"log": 0, "kernel": 0, "tool": 1, "event": 2, "status": 3}


@dataclass(frozen=True, eq=False)
class Explained:
    """The findings of every other check and the (artifact, line) pairs they cite. Provided by the engine
    between its two passes; identity-hashed so the accounting is worked out once for all twelve checks."""

    findings: tuple[Finding, ...]
    cited: frozenset[tuple[str, int | None]]
    pods: dict  # pod name -> the finding that is about that pod (a cause, a crash, a blocked operand)

    @classmethod
    def from_findings(cls, findings: Iterable[Finding]) -> "Explained":
        fs = tuple(findings)
        pods: dict[str, Finding] = {}
        for f in fs:
            pod = (f.facts or {}).get("pod")
            if isinstance(pod, str) and (f.severity.weight >= Severity.ERROR.weight or f.role is Role.BLOCKED):
                pods.setdefault(pod, f)
        return cls(fs, frozenset((e.artifact, e.line) for f in fs for e in f.evidence), pods)


def is_unexplained(f: Finding) -> bool:
    """Whether a finding is an accounting finding (a guess) rather than a specific cause."""
    return f.code.endswith(CODE) and f.name.startswith("unexplained-")


# ----------------------------------------------------------------------------------------------- wording

# Variable parts of a message: ids, addresses, numbers, quoted values, paths, generated pod-name suffixes.
_VARIABLE = re.compile(
    r"GPU-[0-9a-fA-F-]{36}|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F-]{22,}\b|0x[0-9a-fA-F]+|"
    r"\b[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\b|\b\d+(?:[.:]\d+)*\b|\"[^\"]*\"|'[^']*'|`[^`]*`|"
    r"(?:/[\w.@+-]+){2,}/?|\b[a-z0-9]+(?:-[a-z0-9]+)+-[a-z0-9]{5}\b|\b[0-9a-f]{12,64}\b"
)


def _unquoted(message: str) -> str:
    """A structured log's message is often quoted whole (klog's `"0/3 nodes are available"`): its words count."""
    m = message.strip()
    return m[1:-1] if len(m) > 2 and m[0] == m[-1] == '"' and '"' not in m[1:-1] else m


@lru_cache(maxsize=8192)  # a failing component repeats its lines: each distinct one is worked out once
def normalise(message: str) -> str:
    """The message with its variable parts replaced: repeats of one error compare equal."""
    return " ".join(_VARIABLE.sub("…", _unquoted(message)).split())


def search_terms(message: str) -> str:
    """The longest run of fixed words in a message: what to type into an issue tracker's search."""
    runs = [" ".join(r.strip(" :;,.()[]{}=|-").split()) for r in _VARIABLE.split(_unquoted(message))]
    best = max(runs, key=lambda r: (len(r.split()), len(r)), default="")
    return best[:120]


@cache
def _trackers() -> tuple[dict, ...]:
    return tuple(table("attribution").get("tracker", []))


def tracker_for(component: str | None, layer: Layer) -> str:
    comp = catalogue().component(component) if component else None
    if comp is not None:
        return comp.tracker
    rows = _trackers()
    for key, value in (("components", component), ("layers", layer.value)):
        for row in rows:
            if value and value in row.get(key, ()):
                return row["url"]
    return next((r["url"] for r in reversed(rows) if not r.get("components") and not r.get("layers")), "https://github.com/search")


def search_link(tracker: str, terms: str) -> str:
    q = quote_plus(f'"{terms}"')
    if tracker.endswith("/search"):
        return f"{tracker}?q={q}&type=issues"
    return f"{tracker}?q=is%3Aissue+{q}"


# ----------------------------------------------------------------------------------------------- grouping


@dataclass(frozen=True)
class _Group:
    component: str | None
    node: str | None
    layer: Layer
    lines: tuple[ErrorLine, ...]
    reasons: tuple[str, ...] = ()  # a noise group's: why each line does not mean a failure now
    follows: bool = False  # every line is of a pod another finding is about: part of that failure, not noise


def _layer_of(lines: list[ErrorLine]) -> Layer:
    for e in sorted(lines, key=_rank):
        if e.layer is not None:
            return e.layer
    return Layer.WORKLOAD


def _rank(e: ErrorLine) -> tuple:
    """Most decisive first: not a retry, fatal, from a log rather than a status, the crashed instance, latest."""
    return (e.retry, e.level != "fatal", e.level == "warning", _KIND_ORDER.get(e.kind, 4), not e.previous, not e.last, -e.position)


@lru_cache(maxsize=4)
def account(errors: ErrorLines, explained: Explained) -> tuple[tuple[_Group, ...], tuple[_Group, ...]]:
    """(unexplained groups, noise groups): the error lines no finding cites, per component and node."""
    failing: dict[tuple, list[ErrorLine]] = defaultdict(list)
    noise: dict[tuple, list[ErrorLine]] = defaultdict(list)
    reasons: dict[tuple, list[str]] = defaultdict(list)
    own: set[tuple] = set()  # groups with a line that does not mean a failure now for a reason of its own
    for e in errors.lines:
        if e.key in explained.cited:
            continue
        who = e.component or e.pod or ("", e.evidence.artifact)  # unknown: grouped by the artifact it is in
        about = explained.pods.get(e.pod) if e.pod else None
        reason = e.noise
        if reason:
            own.add((who, e.node))
        elif about is not None:  # kept beside the line, not in a copy of it: a loop's thousands of lines
            reason = f"{about.code} is about pod {e.pod} ({clip(about.title, 80)})"
        if reason:
            noise[(who, e.node)].append(e)
            reasons[(who, e.node)].append(reason)
        else:
            failing[(who, e.node)].append(e)

    def group(who, node, lines, why=(), follows=False) -> _Group:
        return _Group(who if isinstance(who, str) else None, node, _layer_of(lines), tuple(lines), tuple(why), follows)

    return (tuple(group(who, node, lines) for (who, node), lines in failing.items()),
            tuple(group(who, node, lines, reasons[(who, node)], (who, node) not in own) for (who, node), lines in noise.items()))


# ----------------------------------------------------------------------------------------------- findings


def _chain_start(decisive: ErrorLine, group: tuple[ErrorLine, ...]) -> ErrorLine | None:
    """The first earlier error of the same log whose text the decisive line repeats (a wrapped Go error)."""
    for e in group:
        if e is decisive or e.evidence.artifact != decisive.evidence.artifact or e.position >= decisive.position:
            continue
        core = e.message.split("] ", 1)[-1].strip()
        if len(core) >= 20 and core in decisive.message:
            return e
    return None


def _where(e: ErrorLine) -> str:
    parts = []
    if e.pod:
        parts.append(f"pod {e.pod}" + (f" (container {e.container})" if e.container else ""))
    if e.node:
        parts.append(f"on node {e.node}")
    return " ".join(parts)


def _next_evidence(g: _Group, d: ErrorLine) -> list[Fix]:
    ns = f" -n {d.namespace}" if d.namespace else ""
    ctr = f" -c {d.container}" if d.container else ""
    fixes = []
    if d.pod:
        fixes.append(Fix(FixKind.IMMEDIATE,
                         "Get the next piece of evidence: the crashed instance's log, the pod's state and its events.",
                         (f"kubectl logs --previous {d.pod}{ns}{ctr}", f"kubectl describe pod {d.pod}{ns}",
                          f"kubectl get events{ns or ' -A'} --field-selector involvedObject.name={d.pod}")))
    if g.layer.rank <= Layer.USERSPACE_DRIVER.rank or d.kind == "kernel":
        host = (f"kubectl debug node/{g.node} -it --image=ubuntu -- chroot /host sh -c "
                "\"dmesg -T | grep -iE 'nvrm|xid|nvidia|nouveau' | tail -50; lsmod | grep -E 'nvidia|nouveau'\"") if g.node else \
            "dmesg -T | grep -iE 'nvrm|xid|nvidia|nouveau' | tail -50; lsmod | grep -E 'nvidia|nouveau'"
        fixes.append(Fix(FixKind.IMMEDIATE, "Read the node's kernel log and loaded modules: the driver's own account of the failure."
                         + ("" if g.node else " Run these on the GPU node."), (host,)))
    if not d.pod and g.layer.rank > Layer.USERSPACE_DRIVER.rank:
        fixes.append(Fix(FixKind.IMMEDIATE, "See which pods are not running and where, to tie the message to a pod and a node.",
                         ("kubectl get pods -A -o wide | grep -vE 'Running|Completed'",)))
    return fixes


def _head_of_burst(d: ErrorLine, group: tuple[ErrorLine, ...]) -> ErrorLine:
    """The first line of the run of error lines that d ends (a multi-line message logged line by line)."""
    at = {(e.evidence.artifact, e.position): e for e in group if e.kind in ("log", "kernel")}
    head = d
    while (prev := at.get((head.evidence.artifact, head.position - 1))) is not None and prev.level == head.level and not prev.retry:
        head = prev
    return head


_BACKTICKED = re.compile(r"`([a-z][\w./-]*(?: [^`]+)?)`")


def _commands_in(causes: tuple[str, ...]) -> list[str]:
    """The commands a catalogue row's causes name (`mokutil --sb-state`), in order, once each."""
    return list(dict.fromkeys(m.group(1) for c in causes for m in _BACKTICKED.finditer(c) if " " in m.group(1)))[:6]


def _unexplained_hit(g: _Group) -> Hit:
    ranked = sorted(g.lines, key=_rank)
    d = _head_of_burst(ranked[0], g.lines)
    ranked = [d] + [e for e in ranked if e is not d]
    start = _chain_start(d, g.lines)
    distinct = {normalise(e.message) for e in g.lines}
    msg = d.messages[0] if d.messages else None
    said = f"\"{clip(d.message, 240)}\" ({d.evidence.cite()})"
    explanation = (f"{g.component or 'An unidentified component'} ({g.layer.value} layer{', ' + _where(d) if _where(d) else ''}) reported "
                   f"{len(g.lines)} error line(s), {len(distinct)} distinct, that no check of gpusleuth explains. Decisive: {said}.")
    if start is not None:
        explanation += f" It repeats an earlier error of the same log: \"{clip(start.message, 160)}\" ({start.evidence.cite()})."
    if d.signature is not None and d.signature.note:
        explanation += f" gpusleuth knows this line ({d.signature.id}, {d.signature.layer} layer): {d.signature.note}"
    if msg is not None:
        version = msg.component.version[:12] if re.fullmatch(r"[0-9a-f]{40}", msg.component.version) else msg.component.version
        explanation += f" {msg.component.name} prints this while {msg.doing} ({msg.where}; source read at {version})."
        if msg.causes:
            explanation += " Causes its source names: " + "; ".join(msg.causes) + "."
    how = {"pod": "its pod", "catalogue": "the message catalogue", "program": "the program name in the line",
           "shape": "the message's wording", "log": "the log it is in", "file": "the file's name (a hint only)",
           "signature": "the signature table, which knows the line"}.get(d.attributed_by or "", "")
    if how and g.component:
        explanation += f" Attributed to {g.component} by {how}."
    elif how:
        explanation += f" Who printed it is not known; its layer comes from {how}."
    explanation += " This is not a diagnosis: the cause is not identified, the line is where to start."
    terms = msg.search_terms() if msg is not None else search_terms(d.message)
    tracker = tracker_for(msg.component.name if msg else g.component, g.layer)
    fixes = _next_evidence(g, d)
    facts_cmds = _commands_in(msg.causes) if msg is not None else []
    if facts_cmds:
        fixes.insert(0, Fix(FixKind.IMMEDIATE, "Tell the possible causes apart: read the facts each cause names"
                            + (f" on node {g.node}." if g.node else " on the node."), tuple(facts_cmds)))
    if terms:
        fixes.append(Fix(FixKind.WORKAROUND, f"Search the public issues for the message: {search_link(tracker, terms)}"))
    evidence = [d.evidence] + ([start.evidence] if start else [])
    for e in ranked[1:]:
        if len(evidence) >= MAX_EVIDENCE:
            break
        if e.evidence not in evidence:
            evidence.append(e.evidence)
    worst = Severity.ERROR if any(e.level in ("error", "fatal") for e in g.lines) else Severity.WARNING
    kind = "failure" if worst is Severity.ERROR else "warning"
    return Hit(
        title=(f"{g.component}: unexplained {kind}: {clip(d.message, 110)}" if g.component
               else f"Unexplained {kind} in {d.evidence.artifact} (who printed it is not known): {clip(d.message, 100)}"),
        explanation=explanation,
        severity=worst,
        role=Role.ROOT_CAUSE,
        evidence=tuple(evidence),
        fixes=tuple(fixes),
        node=g.node,
        component=g.component,
        confidence=0.4 if msg is not None else 0.3,
        layer=g.layer,
        facts={"component": g.component, "attributed_by": d.attributed_by, "lines": len(g.lines), "distinct": len(distinct),
               "decisive_line": d.evidence.to_dict(), "catalogue": msg.key if msg else None,
               "signature": d.signature.id if d.signature else None, "search": terms or None,
               "all_lines": _cites(g.lines)},
    )


MAX_CITED = 20  # lines a finding's facts list by artifact:line; the count says how many there were


def _cites(lines: tuple[ErrorLine, ...]) -> list[str]:
    return [e.evidence.cite() for e in lines[:MAX_CITED]]


def _noise_hit(g: _Group) -> Hit:
    reasons = sorted(set(g.reasons))
    who = g.component or "a component"
    what = ("that follow from another finding", "that another finding already accounts for: they are part of that failure, not one of their "
            "own") if g.follows else ("that do not mean a failure now", "that gpusleuth read as not failing now")
    return Hit(
        title=f"{who}: {len(g.lines)} error line(s) {what[0]}: {clip(reasons[0], 90)}"
        + (f" (+{len(reasons) - 1} other reason(s))" if len(reasons) > 1 else ""),
        explanation=f"{who} ({g.layer.value} layer) printed error-level lines {what[1]}: " + "; ".join(reasons[:4]) + ".",
        severity=Severity.INFO,
        role=Role.INFO,
        evidence=tuple(e.evidence for e in g.lines[:MAX_EVIDENCE]),
        node=g.node,
        component=g.component,
        confidence=0.6,
        layer=g.layer,
        facts={"lines": len(g.lines), "reasons": reasons, "all_lines": _cites(g.lines)},
    )


# ----------------------------------------------------------------------------------------------- checks


def _check_for(layer: Layer) -> Check:
    def run(errors: ErrorLines, explained: Explained) -> list[Hit]:
        groups, quiet = account(errors, explained)
        return [_unexplained_hit(g) for g in groups if g.layer is layer] + [_noise_hit(g) for g in quiet if g.layer is layer]

    name = f"unexplained-{layer.value}-failure"
    run.__name__ = run.__qualname__ = name.replace("-", "_")
    return Check(
        code=f"{layer.prefix}{CODE}", name=name, layer=layer, func=run,
        requires=(("errors", ErrorLines), ("explained", Explained)), optional=(),
        summary=f"An error on the {layer.value} layer that no check explains.",
        what=(f"Accounts for every error-level line, Warning event, failing pod status and non-zero exit on the {layer.value} "
              "layer that no other finding cites: groups them per component and node, picks the decisive line (the fatal "
              "line or the last error before the component stopped, never a retry banner), names what the message catalogue "
              "knows of it, and lists the lines that do not mean a failure now (noise of healthy runs, retries that later "
              "worked, old errors in pods that are running and ready) separately at info level."),
        why=("A diagnosis tool that stays silent in front of an error line tells its user that all is well. An error no "
             "check knows is still the best lead there is: this finding says who printed it and where to look next, at low "
             "confidence, and yields to any specific cause on the same node."),
        fix=("Fetch the next piece of evidence the finding names (the crashed instance's log, the pod's events, the node's "
             "kernel log), and search the component's issue tracker for the message with the link given."),
        module=__name__,
    )


CHECKS: tuple[Check, ...] = tuple(_check_for(layer) for layer in Layer)
