"""The Markdown report: a complete root-cause analysis document with the sections an incident write-up has — executive
summary, evidence, why it happens, the cascade, solution options, event sequence, key takeaway, gaps."""

from __future__ import annotations

import re
from collections import defaultdict

from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Component, ComponentState, Finding, Fix, FixKind, Role
from gpusleuth.model.report import VERDICTS, Report
from gpusleuth.report.cascade import render_mermaid, render_text

_WHEN = {
    FixKind.IMMEDIATE: "Immediate fix (fastest)",
    FixKind.WORKAROUND: "Workaround",
    FixKind.PERMANENT: "Permanent fix",
}
_STATE_WORD = {
    ComponentState.FAILED: "failed",
    ComponentState.BLOCKED: "blocked",
    ComponentState.DEGRADED: "running with errors",
    ComponentState.OK: "ok",
    ComponentState.UNKNOWN: "not seen",
}


def render(report: Report) -> str:
    parts = [
        _title(report),
        _summary(report),
        _root_causes(report),
        _evidence(report),
        _why(report),
        _cascade(report),
        _solutions(report),
        _event_sequence(report),
        _takeaway(report),
        _other_findings(report),
        _gaps(report),
    ]
    return "\n\n".join(p.strip("\n") for p in parts if p) + "\n"


_EMPHASIS = re.compile(r"(?<![\w\\])_|_(?!\w)|\*")


def _md(text: str) -> str:
    """Plain text inside Markdown prose: no accidental emphasis, tables or HTML (intraword `_` is safe)."""
    text = text.replace("\\", "\\\\").replace("<", "&lt;").replace("|", "\\|")
    return _EMPHASIS.sub(lambda m: "\\" + m.group(0), text)


def _code(text: str) -> str:
    tick = "``" if "`" in text else "`"
    pad = " " if tick == "``" else ""
    return f"{tick}{pad}{text}{pad}{tick}"


def _fence(body: str, lang: str = "text") -> str:
    fence = "````" if "```" in body else "```"
    return f"{fence}{lang}\n{body.rstrip()}\n{fence}"


def _roots(report: Report) -> list[Finding]:
    return list(report.root_causes)


def _title(report: Report) -> str:
    src = report.source.get("description") or "the artifacts"
    when = report.source.get("analysed_at", "")
    return (
        f"# GPU root-cause analysis: {_md(report.headline)}\n\n"
        f"**Verdict: {VERDICTS.get(report.verdict, report.verdict.upper())}** · source: {_code(str(src))} · "
        f"{report.source.get('recognised', 0)} artifact(s) recognised · analysed {when} by gpusleuth"
    )


def _counts(components) -> dict[ComponentState, list[Component]]:
    by: dict[ComponentState, list[Component]] = defaultdict(list)
    for c in components:
        by[c.state].append(c)
    return by


def _first_fix(findings: list[Finding], kind: FixKind) -> tuple[Finding, Fix] | None:
    for f in findings:
        for fx in f.fixes:
            if fx.kind == kind:
                return f, fx
    return None


def _summary(report: Report) -> str:
    roots = _roots(report)
    by = _counts(report.components)
    lines = ["## Executive summary", ""]
    symptoms = [f for f in report.findings if f.role == Role.SYMPTOM]
    problem = report.headline
    if by[ComponentState.FAILED]:
        c = by[ComponentState.FAILED][0]
        problem = f"{c.name} is failing" + (f" ({c.status})" if c.status else "") + (f" on {c.node}" if c.node else "")
        if by[ComponentState.BLOCKED]:
            problem += f"; {len(by[ComponentState.BLOCKED])} operand(s) are blocked behind it"
        problem += "."
    elif symptoms:
        problem = symptoms[0].title + "."
    lines.append(f"**Problem**: {_md(problem)}")
    lines.append("")
    if roots:
        top = roots[0]
        where = f" on {top.node}" if top.node else ""
        lines.append(f"**Root cause** ({top.layer.value} layer{where}, confidence {top.confidence:.0%}): {_md(top.title)}. "
                     f"{_md(_first_sentences(top.explanation, 2))}")
    else:
        lines.append("**Root cause**: not determined from the artifacts (see Gaps).")
    lines.append("")
    impact = []
    for state in (ComponentState.FAILED, ComponentState.BLOCKED, ComponentState.DEGRADED):
        cs = by[state]
        if cs:
            names = ", ".join(c.name for c in cs)
            impact.append(f"- {len(cs)} component(s) {_STATE_WORD[state]}: {_md(names)}")
    counted = {c.name for c in report.components}
    for f in symptoms:
        if f.component not in counted:
            impact.append(f"- {_md(f.title)}")
    if impact:
        lines += ["**Impact**:", *impact, ""]
    quick = _first_fix(roots, FixKind.IMMEDIATE)
    if quick:
        lines.append(f"**Quick fix**: {_md(quick[1].description)}")
        lines.append("")
    permanent = _first_fix(roots, FixKind.PERMANENT)
    if permanent:
        lines.append(f"**Permanent fix**: {_md(_first_sentences(permanent[1].description, 2))}")
    return "\n".join(lines)


def _first_sentences(text: str, n: int) -> str:
    out, rest = [], text.strip()
    for _ in range(n):
        i = rest.find(". ")
        if i < 0:
            out.append(rest)
            rest = ""
            break
        out.append(rest[: i + 1])
        rest = rest[i + 2 :]
    return " ".join(x for x in out if x)


def _meta(f: Finding) -> str:
    bits = [f"`{f.code}` {f.name}", f"layer **{f.layer.value}**", f"severity {f.severity.value}", f"confidence {f.confidence:.0%}"]
    if f.node:
        bits.append(f"node {_code(f.node)}")
    if f.component:
        bits.append(f"component {_code(f.component)}")
    if f.caused_by:
        bits.append("caused by " + ", ".join(f"`{c}`" for c in f.caused_by))
    return " · ".join(bits)


def _root_causes(report: Report) -> str:
    roots = _roots(report)
    if not roots:
        return ""
    out = ["## Root cause" + ("s" if len(roots) > 1 else ""), ""]
    for i, f in enumerate(roots, 1):
        out += [f"### {i}. {_md(f.title)}", "", _meta(f), "", _md(f.explanation), ""]
    return "\n".join(out)


def _evidence(report: Report) -> str:
    """Every cited line of the root causes and contributing findings, grouped by artifact, in line order."""
    cited = [f for f in report.findings if f.role in (Role.ROOT_CAUSE, Role.CONTRIBUTING)] or list(report.findings[:3])
    by_artifact: dict[str, dict[int | None, Evidence]] = defaultdict(dict)
    for f in cited:
        for e in f.evidence:
            by_artifact[e.artifact or "(artifact not named)"].setdefault(e.line, e)
    if not by_artifact:
        return ""
    out = ["## Evidence", ""]
    for artifact, lines in by_artifact.items():
        out.append(f"**{_md(artifact)}**")
        out.append("")
        width = max(len(str(n)) for n in lines if n is not None) if any(n is not None for n in lines) else 1
        body = "\n".join(
            (f"Line {str(n).rjust(width)}: " if n is not None else "") + e.text
            for n, e in sorted(lines.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
        )
        out += [_fence(body), ""]
    return "\n".join(out)


def _why(report: Report) -> str:
    explained = [f for f in report.findings if f.role in (Role.ROOT_CAUSE, Role.CONTRIBUTING)]
    if not explained:
        return ""
    out = ["## Why it happens", ""]
    for i, f in enumerate(explained, 1):
        role = "root cause" if f.role == Role.ROOT_CAUSE else "contributing"
        out += [f"### {i}. {_md(f.title)} ({role})", "", _md(f.explanation), ""]
    blocked = [f for f in report.findings if f.role == Role.BLOCKED]
    if blocked:
        out += ["### Why the other components are blocked", ""]
        out += [f"- {_md(f.title)}: {_md(_first_sentences(f.explanation, 1))}" for f in blocked]
        out.append("")
    return "\n".join(out)


def _cascade(report: Report) -> str:
    if not report.components:
        return ""
    out = ["## The cascade", ""]
    text = report.extras.get("cascade_text") or render_text(report.components)
    if text:
        out += [_fence(render_mermaid(report.components), "mermaid"), "", _fence(text), ""]
    out += ["| component | node | layer | state | status | blocked by (waits on) | evidence |", "|---|---|---|---|---|---|---|"]
    for c in report.components:
        blocked = f"{c.blocked_by} ({c.waiting_on.rsplit('/', 1)[-1]})" if c.blocked_by and c.waiting_on else (c.blocked_by or "")
        cites = ", ".join(e.cite() for e in c.evidence[:3])
        out.append(f"| {c.name} | {c.node or '-'} | {c.layer.value} | {_STATE_WORD[c.state]} | {_md(c.status or '-')} | "
                   f"{_md(blocked)} | {_md(cites)} |")
    return "\n".join(out)


def _solutions(report: Report) -> str:
    """Fixes ranked: immediate, then workaround, then permanent, of the root causes first; then the
    contributing findings' improvements."""
    roots = _roots(report)
    contributing = [f for f in report.findings if f.role == Role.CONTRIBUTING]
    ranked: list[tuple[Finding, Fix]] = []
    for kind in (FixKind.IMMEDIATE, FixKind.WORKAROUND, FixKind.PERMANENT):
        ranked += [(f, fx) for f in roots for fx in f.fixes if fx.kind == kind]
    ranked += [(f, fx) for f in contributing for fx in f.fixes]
    if not ranked:
        return ""
    out = ["## Solution options", ""]
    for i, (f, fx) in enumerate(ranked, 1):
        label = _WHEN[fx.kind] if f.role != Role.CONTRIBUTING else "Additional improvement"
        out += [f"### Option {i}: {label} — {_md(_first_sentences(fx.description, 1))}", "", f"*For* `{f.code}`: {_md(f.title)}", ""]
        rest = fx.description[len(_first_sentences(fx.description, 1)):].strip()
        if rest:
            out += [_md(rest), ""]
        if fx.commands:
            out += [_fence("\n".join(fx.commands), "bash"), ""]
        if fx.snippet:
            out += [_fence(fx.snippet, fx.snippet_language or "text"), ""]
    return "\n".join(out)


def _event_sequence(report: Report) -> str:
    # INTEGRATION POINT (lead): the `timeline` branch provides report/timeline_text.py with
    # render_markdown_timeline(report); until it is merged this section is left out rather than faked.
    try:
        from gpusleuth.report.timeline_text import render_markdown_timeline
    except ImportError:
        return ""
    body = render_markdown_timeline(report)
    return f"## Event sequence\n\n{body}" if body else ""


def _takeaway(report: Report) -> str:
    roots = _roots(report)
    if not roots:
        return ""
    top = roots[0]
    above = [f for f in report.findings if f.role in (Role.SYMPTOM, Role.BLOCKED) and f.layer.rank > top.layer.rank]
    highest = max(above, key=lambda f: f.layer.rank) if above else None
    blocked = [c for c in report.components if c.state == ComponentState.BLOCKED]
    lines = ["## Key takeaway", ""]
    where = f"{top.component} on the {top.layer.value} layer" if top.component else f"the {top.layer.value} layer"
    text = f"The failure is at {where}: {top.title}."
    if highest is not None:
        text += f" It shows up as high as the {highest.layer.value} layer ({highest.title})."
    if blocked:
        text += (f" The {len(blocked)} blocked component(s) are not broken themselves: fix {top.component or 'the root cause'} "
                 "and they start by themselves, in dependency order.")
    text += " Debug from the bottom of the stack up; restarting what is blocked changes nothing."
    lines.append(_md(text))
    if len(roots) > 1:
        lines += ["", "Other root causes, in bottom-up order: " + "; ".join(_md(f"{f.code} {f.title}") for f in roots[1:]) + "."]
    return "\n".join(lines)


def _other_findings(report: Report) -> str:
    rest = [f for f in report.findings if f.role not in (Role.ROOT_CAUSE,)]
    if not rest:
        return ""
    out = ["## All other findings", "", "| code | role | layer | severity | node | component | title | caused by |", "|---|---|---|---|---|---|---|---|"]
    for f in rest:
        out.append(f"| `{f.code}` | {f.role.value} | {f.layer.value} | {f.severity.value} | {f.node or '-'} | {f.component or '-'} | "
                   f"{_md(f.title)} | {', '.join(f.caused_by) or '-'} |")
    return "\n".join(out)


def _gaps(report: Report) -> str:
    skipped = [c for c in report.checks if c.status in ("skipped", "error")]
    if not report.gaps and not skipped:
        return ""
    out = ["## Gaps: what could not be seen", ""]
    out += [f"- {_md(str(g))}" for g in report.gaps]
    out += [f"- check `{c.code}` {c.status}: {_md(c.reason or '')}" for c in skipped]
    return "\n".join(out)
