"""Failure classes as table rows: knowledge/failure_classes.toml -> one ``Check`` per row.

A row names the log-line signatures (knowledge/signatures.toml) that detect a class, where such a line
counts (kernel log, a container, a Kubernetes event; only in a failing pod; only in some operands' logs;
not when a more specific signature is there too), and the text a finding needs: what, why, how to fix,
the public threads the class was learned from, and fix templates. A template's placeholders ({pod},
{namespace}, {node}, {container}, {image} and the signature's named groups) are filled from the lines
that matched; a command whose placeholder the artifacts cannot fill is left out and its fix says what to
fill in. A new failure class is a new row, not new code.

Every matched line becomes evidence (artifact:line); one finding per class and pod (or node, or artifact
when neither is known). A row can also name host conditions (`host = [...]`, facts/host.py CONDITIONS): a
state of the node that shows the class without any log line (nouveau in lsmod, a module whose vermagic is
another kernel's); its lines are evidence like matched lines, and its named values fill placeholders. When none of
a row's hints speaks to the decisive line, the finding says what the message catalogue knows of it: the innermost
message, what its component was doing, and the causes its source names.
"""

from __future__ import annotations

import re
import string
from collections import defaultdict
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Iterable

from gpusleuth.checks.base import Check, layer_of
from gpusleuth.errors import NotApplicable
from gpusleuth.facts.cluster import Cluster, pod_is_healthy
from gpusleuth.facts.host import CONDITIONS, HostFacts
from gpusleuth.facts.logs import Logs, Signature, signatures
from gpusleuth.facts.operands import operand_table, spec_for
from gpusleuth.knowledge import table
from gpusleuth.model.evidence import Evidence
from gpusleuth.knowledge.message_catalogue import catalogue
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.k8s import Pod
from gpusleuth.model.layers import Layer

KINDS = frozenset({"kernel", "journal", "container", "operator", "event"})  # a row's `in`; logs may also be "text"
CONTEXT = frozenset({"pod", "namespace", "node", "container", "container_flag", "image", "line", "where", "count"})
MAX_EVIDENCE = 6
# Faults of the node itself: one finding per node, whichever pod or log showed them.
_NODE_LAYERS = frozenset({Layer.HARDWARE, Layer.FIRMWARE, Layer.KERNEL_DRIVER, Layer.USERSPACE_DRIVER})
_FIELD = string.Formatter()


@dataclass(frozen=True)
class FixTemplate:
    kind: FixKind
    description: str
    commands: tuple[str, ...] = ()
    snippet: str | None = None
    snippet_language: str | None = None


@dataclass(frozen=True)
class HintRow:
    """Extra explanation (and fixes, first) when a matched line also matches `pattern`."""

    pattern: re.Pattern
    text: str
    fixes: tuple[FixTemplate, ...] = ()


@dataclass(frozen=True)
class FailureClass:
    code: str
    name: str
    summary: str
    what: str
    why: str
    fix: str
    references: tuple[str, ...]
    severity: Severity
    role: Role
    confidence: float
    signatures: tuple[str, ...]
    title: str
    explanation: str
    fixes: tuple[FixTemplate, ...]
    kinds: frozenset[str] = KINDS
    components: frozenset[str] = frozenset()
    failing: bool = False
    unless: tuple[str, ...] = ()
    context: tuple[str, ...] = ()  # signatures that only add facts ({kernel}, ...) and hint text from the same pod/node
    hints: tuple[HintRow, ...] = ()
    per_node: bool = False  # one finding per node (a node-level fault), else one per pod
    host: tuple[str, ...] = ()  # facts/host.py CONDITIONS that show the class without a log line


@dataclass(frozen=True, slots=True)
class Seen:
    """One line (log line or event message) that matched one signature, with what is known around it."""

    signature: Signature
    text: str
    evidence: Evidence
    kind: str
    artifact: str
    pod: str | None = None
    namespace: str | None = None
    container: str | None = None
    node: str | None = None
    previous: bool = False
    groups: dict = field(default_factory=dict, hash=False)
    relaxed: str = ""  # why the line counts although the class's "where it counts" rules could not be checked

    @property
    def scope(self) -> tuple:
        return ("pod", self.namespace, self.pod) if self.pod else ("node", self.node) if self.node else ("artifact", self.artifact)

    def group(self, per_node: bool) -> tuple:
        return ("node", self.node) if per_node else self.scope


# ----------------------------------------------------------------------------------------------- loading


def _fixes(rows: list[dict], where: str) -> tuple[FixTemplate, ...]:
    out = []
    for f in rows:
        try:
            kind = FixKind(f["kind"])
        except (KeyError, ValueError):
            raise ValueError(f"{where}: fix kind must be one of {[k.value for k in FixKind]}") from None
        out.append(FixTemplate(kind, f["description"], tuple(f.get("commands", ())), f.get("snippet"), f.get("snippet_language")))
    return tuple(out)


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in _FIELD.parse(text) if name}


def _load_row(row: dict, sigs: dict[str, Signature], operands: set[str]) -> FailureClass:
    code = row.get("code", "?")
    where = f"failure class {code}"
    missing = [k for k in ("code", "name", "summary", "what", "why", "fix", "references", "layer", "severity", "role",
                           "confidence", "signatures", "explanation", "fixes") if k not in row]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    if layer_of(code).value != row["layer"]:
        raise ValueError(f"{where}: layer {row['layer']!r} does not match the code's prefix ({layer_of(code).value})")
    unknown = [s for s in [*row["signatures"], *row.get("unless", []), *row.get("context", [])] if s not in sigs]
    if unknown:
        raise ValueError(f"{where}: unknown signature id(s) {unknown} (knowledge/signatures.toml)")
    unknown = [h for h in row.get("host", []) if h not in CONDITIONS]
    if unknown:
        raise ValueError(f"{where}: unknown host condition(s) {unknown} (facts/host.py CONDITIONS)")
    kinds = frozenset(row.get("in", KINDS))
    if not kinds <= KINDS:
        raise ValueError(f"{where}: `in` must be a subset of {sorted(KINDS)}")
    comps = frozenset(row.get("components", ()))
    if not comps <= operands:
        raise ValueError(f"{where}: unknown operand component(s) {sorted(comps - operands)} (knowledge/operands.toml)")
    if not row["references"] or not all(str(r).startswith("http") for r in row["references"]):
        raise ValueError(f"{where}: references must be public URLs")
    if not 0 < float(row["confidence"]) <= 1:
        raise ValueError(f"{where}: confidence must be in (0, 1]")
    group = row.get("group", "node" if layer_of(code) in _NODE_LAYERS else "pod")
    if group not in ("node", "pod"):
        raise ValueError(f"{where}: group must be node or pod")
    fixes = _fixes(row["fixes"], where)
    hints = tuple(HintRow(re.compile(h["match"]), h["text"], _fixes(h.get("fixes", []), f"{where} hint")) for h in row.get("hint", []))
    known = set(CONTEXT)
    for sid in row["signatures"]:
        known |= set(re.compile(sigs[sid].pattern).groupindex)
    for cid in row.get("host", []):
        known |= set(CONDITIONS[cid])
    # A hint may also name the context signatures' groups: it matches the context line that carries them.
    hinted = known | {g for sid in row.get("context", []) for g in re.compile(sigs[sid].pattern).groupindex}
    texts = [(t, known) for t in (row.get("title", ""), row["explanation"], *(f.description for f in fixes),
                                  *(c for f in fixes for c in f.commands))]
    texts += [(t, hinted) for t in (*(h.text for h in hints), *(c for h in hints for f in h.fixes for c in (f.description, *f.commands)))]
    for t, allowed in texts:
        bad = _placeholders(t) - allowed
        if bad:
            raise ValueError(f"{where}: unknown placeholder(s) {sorted(bad)} in {t!r}")
    return FailureClass(
        code=code, name=row["name"], summary=row["summary"], what=row["what"], why=row["why"], fix=row["fix"],
        references=tuple(row["references"]), severity=Severity(row["severity"]), role=Role(row["role"]),
        confidence=float(row["confidence"]), signatures=tuple(row["signatures"]),
        title=row.get("title", "{summary}"), explanation=row["explanation"], fixes=fixes, kinds=kinds,
        components=comps, failing=bool(row.get("failing", False)), unless=tuple(row.get("unless", ())),
        context=tuple(row.get("context", ())), hints=hints,
        per_node=group == "node", host=tuple(row.get("host", ())),
    )


@cache
def failure_classes() -> tuple[FailureClass, ...]:
    """knowledge/failure_classes.toml, validated: a bad row fails at import, not at 3 a.m."""
    sigs = {s.id: s for s in signatures()[0]}
    operands = {s.name for s in operand_table()[0]}
    rows = [_load_row(r, sigs, operands) for r in table("failure_classes").get("class", [])]
    codes = [r.code for r in rows]
    dupes = {c for c in codes if codes.count(c) > 1}
    if dupes:
        raise ValueError(f"failure_classes.toml: duplicate code(s) {sorted(dupes)}")
    return tuple(rows)


# ----------------------------------------------------------------------------------------------- matching


@cache
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)


def named_groups(sig: Signature, text: str) -> dict:
    """The values a signature's named groups captured in a line ({version}, {module}, ...)."""
    m = _compiled(sig.pattern).search(text)
    return {k: v for k, v in m.groupdict().items() if v} if m else {}


def _seen_in_logs(logs: Logs | None, wanted: set[str], cluster: Cluster | None) -> list[Seen]:
    out = []
    if logs is None:
        return out
    for sid in wanted:
        for m in logs.matches(sid):
            ln, log = m.line, m.log
            pod = ln.pod or log.pod
            node = log.node or _pod_node(cluster, pod)
            out.append(Seen(m.signature, ln.message, ln.evidence(), log.kind, ln.artifact, pod, log.namespace,
                            ln.container or log.container, node, log.previous, named_groups(m.signature, ln.message)))
    return out


def _seen_in_events(cluster: Cluster | None, wanted: set[str]) -> list[Seen]:
    """Kubernetes events are lines too: their messages are matched against the same signatures."""
    out = []
    if cluster is None or not cluster.events:
        return out
    sigs, matcher = signatures()
    for e in cluster.events:
        for i in matcher.Match(e.message) or ():
            sig = sigs[i]
            if sig.id not in wanted:
                continue
            kind, _, name = (e.object or "").rpartition("/")
            pod = name if kind.lower() in ("pod", "pods", "") and name else None
            node = e.node or _pod_node(cluster, pod)
            ev = e.evidence or Evidence("events", None, e.message[:400])
            out.append(Seen(sig, e.message, ev, "event", ev.artifact, pod, e.namespace, None, node, False, named_groups(sig, e.message)))
    return out


def _seen_on_hosts(host: HostFacts | None, wanted: tuple[str, ...], fc_layer: str, severity: str) -> list[Seen]:
    """Host conditions are seen like lines: one Seen per line that shows the condition."""
    out = []
    for c in (host.conditions(*wanted) if host is not None and wanted else []):
        sig = _host_signature(c.id, fc_layer, severity)
        out += [Seen(sig, c.text, e, "host", e.artifact, node=c.node, groups=dict(c.groups)) for e in c.evidence]
    return out


@cache
def _host_signature(cid: str, layer: str, severity: str) -> Signature:
    """What a host condition is recorded as in a finding's facts (its id among the signatures)."""
    return Signature(cid, "host", layer, severity, "")


def _pod_node(cluster: Cluster | None, pod: str | None) -> str | None:
    p = cluster.pod(pod) if cluster is not None and pod else None
    return p.node if p is not None else None


def _operand(s: Seen) -> str | None:
    spec = spec_for(Pod(s.pod, s.namespace)) if s.pod else None
    return spec.name if spec is not None else None


def _component(s: Seen) -> str | None:
    return _operand(s) or s.signature.component


def _where(s: Seen) -> str:
    if s.kind == "host":
        return f"the host of {s.node}" if s.node else s.artifact
    if s.kind in ("kernel", "journal"):
        return f"the {s.kind} log of {s.node}" if s.node else f"the {s.kind} log ({s.artifact})"
    parts = []
    if s.pod:
        parts.append(f"pod {s.pod}" + (f" (container {s.container})" if s.container else ""))
    elif s.container:
        parts.append(f"container {s.container}")
    if s.node:
        parts.append(f"on node {s.node}")
    return " ".join(parts) or s.artifact


class _Missing(dict):
    def __missing__(self, key):
        raise KeyError(key)


def _fill(template: str, ctx: dict, strict: bool) -> str | None:
    try:
        return template.format_map(_Missing(ctx))
    except KeyError:
        if strict:
            return None
        return template.format_map(_Lenient(ctx))


class _Lenient(dict):
    def __missing__(self, key):
        return f"<{key}>"


_WHAT_IS = {"pod": "the pod's name", "namespace": "its namespace", "node": "the node's name", "container": "the container's name",
            "image": "the image"}


def clip(text: str, limit: int) -> str:
    """text in at most `limit` characters, cut at a word boundary with an ellipsis: a title that ends in
    "was loa" reads as a bug, one that ends in "was …" as a quote."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = len(cut) if text[len(cut)] == " " else cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"


def _render_fixes(templates: Iterable[FixTemplate], ctx: dict) -> tuple[Fix, ...]:
    out = []
    for t in templates:
        commands, unfilled = [], set()
        for c in t.commands:
            done = _fill(c, ctx, strict=True)
            if done is None:
                unfilled |= {p for p in _placeholders(c) if p not in ctx}
            else:
                commands.append(done)
        desc = _fill(t.description, ctx, strict=False) or t.description
        if unfilled:
            names = ", ".join(_WHAT_IS.get(p, p) for p in sorted(unfilled))
            desc += f" (Commands that need {names} are left out: the artifacts do not show it; fill it in.)"
        snippet = _fill(t.snippet, ctx, strict=False) if t.snippet else None
        out.append(Fix(t.kind, desc, tuple(commands), snippet, t.snippet_language))
    return tuple(out)


def _evidence(seen: list[Seen]) -> tuple[Evidence, ...]:
    ordered = sorted(dict.fromkeys(s.evidence for s in seen), key=lambda e: (e.artifact, e.line or 0))
    if len(ordered) > MAX_EVIDENCE:
        ordered = ordered[: MAX_EVIDENCE - 2] + ordered[-2:]
    return tuple(ordered)


def evaluate(fc: FailureClass, logs: Logs | None, cluster: Cluster | None, host: HostFacts | None = None) -> list[Hit]:
    """The findings of one failure class over the artifacts' log lines, events and host conditions."""
    wanted = set(fc.signatures) | set(fc.unless) | set(fc.context)
    seen = _seen_in_logs(logs, wanted, cluster) if fc.kinds - {"event"} else []
    if "event" in fc.kinds:
        seen += _seen_in_events(cluster, wanted)
    seen += _seen_on_hosts(host, fc.host, layer_of(fc.code).value, fc.severity.value)
    only = _only_node(cluster)
    if only:
        seen = [s if s.node else replace(s, node=only) for s in seen]
    blockers: set[tuple] = set()
    for s in seen:
        if s.signature.id in fc.unless:
            blockers |= {s.scope, ("node", s.node)} if s.node else {s.scope}
    groups: dict[tuple, list[Seen]] = defaultdict(list)
    around: dict[tuple, list[Seen]] = defaultdict(list)  # context lines by pod scope and by node
    for s in seen:
        if s.signature.id in fc.context:
            around[s.scope].append(s)
            if s.node:
                around[("node", s.node)].append(s)
    for s in seen:
        if s.kind == "host":
            pass  # a host condition the row names counts wherever it is seen
        elif s.signature.id not in fc.signatures:
            continue
        elif s.kind not in fc.kinds:
            if not _without_context(s, cluster):
                continue
            s = replace(s, relaxed=f"the line is in {_kind_words(s.kind)}, where the artifacts cannot show whether it is "
                                  f"{' or '.join(sorted(_kind_words(k) for k in fc.kinds))}")
        if s.scope in blockers or (s.node and ("node", s.node) in blockers):
            continue
        if fc.components and s.pod and _operand(s) not in fc.components:
            continue  # a named pod counts only when it is one of those operands, whatever the line says
        if fc.failing and not s.previous and s.pod and cluster is not None:
            p = cluster.pod(s.pod)
            if p is not None and pod_is_healthy(p):
                continue
        groups[s.group(fc.per_node)].append(s)
    _fold_podless(groups)
    return [_hit(fc, group, cluster, _context_of(group, around)) for group in groups.values()]


def _fold_podless(groups: dict[tuple, list[Seen]]) -> None:
    """A line whose pod is unknown (a ticket's title quoting it) on a node where the class fired for exactly one pod
    is that pod's failure, not a second finding with the same id."""
    pods_on: dict = defaultdict(list)
    for key, group in groups.items():
        if key[0] == "pod" and group[0].node:
            pods_on[group[0].node].append(key)
    for key in [k for k in groups if k[0] == "node" and len(pods_on.get(k[1], ())) == 1]:
        groups[pods_on[key[1]][0]].extend(groups.pop(key))


def _without_context(s: Seen, cluster: Cluster | None) -> bool:
    """Whether the artifacts cannot show where a line was printed: a paste that is no known log, or a pod's log
    whose pod the artifacts do not otherwise show. There the line is the user's evidence and counts."""
    if s.kind == "text":
        return True
    if s.kind != "container":
        return False
    return not s.pod or cluster is None or cluster.pod(s.pod) is None


def _kind_words(kind: str) -> str:
    return {"kernel": "a kernel log", "journal": "a journal", "container": "a container log", "operator": "an operator log",
            "event": "a Kubernetes event", "text": "a paste that is no known log"}.get(kind, kind)


RELAXED_CONFIDENCE = 0.75  # a class read without its context keeps this share of its confidence


def _context_of(group: list[Seen], around: dict[tuple, list[Seen]]) -> list[Seen]:
    out: list[Seen] = []
    for s in group:
        for key in (s.scope, ("node", s.node) if s.node else None):
            out += [c for c in around.get(key, ()) if c not in out]
    return out


def _only_node(cluster: Cluster | None) -> str | None:
    """The node every line is on when the artifacts name exactly one node."""
    names = cluster.node_names() if cluster is not None else []
    return names[0] if len(names) == 1 else None


def _hit(fc: FailureClass, group: list[Seen], cluster: Cluster | None, context: list[Seen] = ()) -> Hit:
    group.sort(key=lambda s: (s.artifact, s.evidence.line or 0))
    # the line that speaks for the finding: one in a pod (its commands can be filled) before a kernel line
    last = max(group, key=lambda s: (bool(s.pod), s.previous, s.artifact, s.evidence.line or 0))
    ctx = {k: v for k, v in (("pod", last.pod), ("namespace", last.namespace), ("container", last.container), ("node", last.node)) if v}
    for s in [*group, *context]:
        for k, v in s.groups.items():
            ctx.setdefault(k, v)
    ctx.update(line=clip(last.text, 240), where=_where(last), count=len(group), summary=fc.summary,
               container_flag=f" -c {last.container}" if last.container else "")
    pod = cluster.pod(last.pod) if cluster is not None and last.pod else None
    status_ev = (pod.evidence,) if pod is not None and pod.evidence and not pod_is_healthy(pod) else ()
    explanation = _fill(fc.explanation, ctx, strict=False) or fc.explanation
    fixes = list(fc.fixes)
    for h in fc.hints:
        if any(h.pattern.search(s.text) for s in [*group, *context]):
            explanation += " " + (_fill(h.text, ctx, strict=False) or h.text)
            fixes = [*h.fixes, *fixes]
            break
    else:  # no hint of the class speaks: what the printing component's source says of its innermost message
        said = next((m for m in catalogue().match(last.text)[:1] if m.causes and not m.benign), None)
        if said is not None:
            explanation += (f" {said.component.name} prints \"{said.search_terms()}\" while {said.doing}; causes its source "
                            "names: " + "; ".join(said.causes) + ".")
    title = _fill(fc.title, {**ctx, "line": clip(ctx["line"], 100)}, strict=False) or fc.summary
    confidence = fc.confidence
    if all(s.relaxed for s in group if s.kind != "host"):
        confidence = round(fc.confidence * RELAXED_CONFIDENCE, 2)
        explanation += (f" (Read without its usual context: {last.relaxed}. The line itself is the evidence; "
                        f"confidence lowered from {fc.confidence:.0%}.)")
    return Hit(
        title=clip(title, 160),
        explanation=explanation,
        severity=fc.severity,
        role=fc.role,
        evidence=tuple(dict.fromkeys((*status_ev, *_evidence([*context[:1], *group])))),
        fixes=_render_fixes(fixes, ctx),
        node=last.node,
        component=_component(last) or (last.pod if last.pod else None),
        confidence=confidence,
        facts={"class": fc.code, "signatures": sorted({s.signature.id for s in group}), "matched_lines": len(group),
               **{k: ctx[k] for k in ("pod", "namespace", "container") if k in ctx}},
    )


# ----------------------------------------------------------------------------------------------- checks


def _as_check(fc: FailureClass) -> Check:
    events_only = fc.kinds == {"event"}

    def run(logs: Logs | None = None, cluster: Cluster | None = None, host: HostFacts | None = None) -> list[Hit]:
        events = "event" in fc.kinds and cluster is not None and bool(cluster.events)
        if (logs is None or events_only) and not events and not (fc.host and host is not None):
            raise NotApplicable("no Kubernetes events in the artifacts" if events_only else "no logs or events in the artifacts")
        return evaluate(fc, logs, cluster, host if fc.host else None)

    run.__name__ = run.__qualname__ = fc.name.replace("-", "_")
    inputs = (("logs", Logs), ("cluster", Cluster)) + ((("host", HostFacts),) if fc.host else ())
    return Check(
        code=fc.code, name=fc.name, layer=layer_of(fc.code), func=run, requires=(),
        optional=inputs, summary=fc.summary, what=fc.what, why=fc.why, fix=fc.fix,
        module=__name__, references=fc.references, detects=fc.signatures,
    )


CHECKS: tuple[Check, ...] = tuple(_as_check(fc) for fc in failure_classes())
