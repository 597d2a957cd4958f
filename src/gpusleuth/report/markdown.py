"""The Markdown report: a complete root-cause analysis document with the sections an incident write-up has — a short
title, executive summary, incident window, evidence, why it happens, the cascade, solution options, action items,
event sequence, key takeaway, gaps (each listed once).

No line is longer than MAX_LINE characters, so the document reads in any editor, diff or ticket: prose is wrapped
at spaces, long commands are continued with a backslash outside their quotes, and long lines in other code blocks
are wrapped with an indented continuation.
"""

from __future__ import annotations

import re
import textwrap
from collections import defaultdict
from datetime import datetime, timezone

from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Component, ComponentState, Finding, Fix, FixKind, Role
from gpusleuth.model.report import VERDICTS, Report, TimelineEntry
from gpusleuth.report.cascade import render_mermaid, render_text
from gpusleuth.report.fleet_view import STATE_WORDS, group_lines, group_of, is_fleet, names_counted, node_command, operand_rows, race_groups
from gpusleuth.report.sentences import first_sentences

_WHEN = {
    FixKind.IMMEDIATE: "Immediate fix (fastest)",
    FixKind.WORKAROUND: "Workaround",
    FixKind.PERMANENT: "Permanent fix",
}


MAX_LINE = 200  # no line of the document is longer
WRAP = 120  # where a long line of prose is wrapped
TITLE = 72  # the title's words after "GPU root-cause analysis: "


def render(report: Report) -> str:
    parts = [
        _title(report),
        _summary(report),
        _fleet(report),
        _window(report),
        _root_causes(report),
        _evidence(report),
        _why(report),
        _cascade(report),
        _solutions(report),
        _actions(report),
        _event_sequence(report),
        _takeaway(report),
        _other_findings(report),
        _seen_before(report),
        _gaps(report),
    ]
    return _fit("\n\n".join(p.strip("\n") for p in parts if p) + "\n")


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


def short_title(report: Report) -> str:
    """A few words for the title: the first root cause's first clause (and its node when that fits), else the verdict."""
    roots = _roots(report)
    if not roots:
        return {"healthy": "no fault found", "no-verdict": "no verdict from these artifacts"}.get(
            report.verdict, "errors whose cause was not identified" if report.verdict == "failing" else report.verdict)
    top = roots[0]
    words = re.split(r"(?<=\S)[:;] ", top.title, maxsplit=1)[0].strip().rstrip(".")
    if len(words) < 16:
        words = top.title.strip().rstrip(".")
    if len(words) > TITLE:
        words = words[: TITLE - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    elif top.node and len(words) + len(top.node) + 4 <= TITLE + 12:
        words += f" on {top.node}"
    return words


def _title(report: Report) -> str:
    src = report.source.get("description") or "the artifacts"
    when = report.source.get("analysed_at", "")
    return (
        f"# GPU root-cause analysis: {_md(short_title(report))}\n\n"
        f"**Verdict: {VERDICTS.get(report.verdict, report.verdict.upper())}** · source: {_code(str(src))} · "
        f"{report.source.get('recognised', 0)} artifact(s) recognised · analysed {when} by gpusleuth\n\n"
        f"{_md(report.headline)}"
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
    if by[ComponentState.FAILED] and not is_fleet(report):  # a fleet's headline counts its nodes already
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
                     f"{_md(first_sentences(top.explanation, 2))}")
    else:
        lines.append("**Root cause**: not determined from the artifacts (see Gaps).")
    lines.append("")
    impact = []
    for state in (ComponentState.FAILED, ComponentState.BLOCKED, ComponentState.DEGRADED):
        cs = by[state]
        if cs:
            names = names_counted(cs)
            impact.append(f"- {len(cs)} component(s) {STATE_WORDS[state]}: {_md(names)}")
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
        lines.append(f"**Permanent fix**: {_md(first_sentences(permanent[1].description, 2))}")
    return "\n".join(lines)


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
        out += [f"### {i}. {_md(f.title)}", "", _meta(f), ""]
        group = group_of(f)
        if group:
            out += [*(f"- {_md(ln)}" for ln in group_lines(group, True)), ""]
        out += [_md(f.explanation), ""]
    return "\n".join(out)


def _fleet(report: Report) -> str:
    """One row per root cause with its node count: the fleet at a glance (analysis/fleet.py)."""
    fleet = report.extras.get("fleet")
    if not fleet:
        return ""
    out = ["## Fleet", "", f"{fleet['nodes']} node(s) · {fleet['failing_nodes']} with a finding at error or above · "
           f"{fleet['without_errors']} without. One node in full: {_code(node_command(report))}.", ""]
    rows, items = [], []
    for i, row in enumerate(fleet["causes"], 1):
        nodes = str(row["nodes"] if row["nodes"] is not None else "all")
        differs = "; ".join(row["differs"])
        rows.append(f"| {i} | {nodes} | {row['code']} | {row['severity']} | {_md(row['title'])} | {_md(differs or '-')} |")
        items.append(f"{i}. **{row['code']}** on {nodes} node(s), {row['severity']}: {_md(row['title'])}"
                     + (f" · differs by {_md(differs)}" if differs else ""))
    out += _table_or_list(("#", "nodes", "code", "severity", "cause", "where it differs"), rows, items)
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
        out += [f"- {_md(f.title)}: {_md(first_sentences(f.explanation, 1))}" for f in blocked]
        out.append("")
    return "\n".join(out)


def _cascade(report: Report) -> str:
    if not report.components:
        return ""
    if is_fleet(report):
        operands = operand_rows(report)
        rows = [f"| {r.name} | {r.layer} | {r.summary()} |" for r in operands]
        items = [f"- **{r.name}** ({r.layer}): {r.summary()}" for r in operands]
        return "\n".join(["## The operands", "", f"Each node's cascade: {_code(node_command(report))}.", "",
                          *_table_or_list(("operand", "layer", "pods"), rows, items)])
    out = ["## The cascade", ""]
    text = report.extras.get("cascade_text") or render_text(report.components)
    if text:
        out += [_fence(render_mermaid(report.components), "mermaid"), "", _fence(text), ""]
    rows, items = [], []
    for c in report.components:
        blocked = f"{c.blocked_by} ({c.waiting_on.rsplit('/', 1)[-1]})" if c.blocked_by and c.waiting_on else (c.blocked_by or "")
        cites = (c.evidence[0].cite() + (f" (+{len(c.evidence) - 1})" if len(c.evidence) > 1 else "")) if c.evidence else ""
        cells = [c.name, c.node or "-", c.layer.value, STATE_WORDS[c.state], _md(c.status or "-"), _md(blocked), _md(cites)]
        rows.append("| " + " | ".join(cells) + " |")
        items.append(f"- **{c.name}** ({STATE_WORDS[c.state]}) · node {c.node or '-'} · layer {c.layer.value} · status "
                     f"{_md(c.status or '-')}" + (f" · blocked by {_md(blocked)}" if blocked else "") + (f" · {_md(cites)}" if cites else ""))
    out += _table_or_list(("component", "node", "layer", "state", "status", "blocked by (waits on)", "evidence"), rows, items)
    return "\n".join(out)


def _table_or_list(columns: tuple[str, ...], rows: list[str], items: list[str]) -> list[str]:
    """The rows as a table when each fits on a line (a table row cannot be wrapped), else the same as a list."""
    if all(len(r) <= MAX_LINE for r in rows):
        return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns), *rows]
    return items


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
        out += [f"### Option {i}: {label} — {_md(_clip(first_sentences(fx.description, 1), 110))}", "",
                f"*For* `{f.code}`: {_md(f.title)}", "", _md(fx.description), ""]
        if fx.commands:
            out += [_fence("\n".join(fx.commands), "bash"), ""]
        if fx.snippet:
            out += [_fence(fx.snippet, fx.snippet_language or "text"), ""]
    return "\n".join(out)


def _clip(text: str, n: int) -> str:
    """At most n characters, cut at a space, with an ellipsis when cut."""
    text = text.strip()
    if len(text) <= n:
        return text
    return text[: n - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _actions(report: Report) -> str:
    """Action items as a checklist: now (the immediate fix), then the workaround, the lasting fix, checking the
    fix took, and seeing what the artifacts could not show."""
    roots = _roots(report)
    items: list[str] = []
    for kind, when in ((FixKind.IMMEDIATE, "Now"), (FixKind.WORKAROUND, "If that cannot be done now"),
                       (FixKind.PERMANENT, "Follow-up")):
        for f in roots:
            for fx in f.fixes:
                if fx.kind == kind:
                    cmd = ""
                    if fx.commands:  # a command too long for a line is left to the Solution options' code block
                        cmd = (f" First command: {_code(fx.commands[0])}" if len(fx.commands[0]) <= 120
                               else " Commands: under Solution options.")
                        group = group_of(f)
                        if group:  # the commands name the example node's pods: the other nodes have their own
                            cmd += f" (for {group['example_node']}; the same on each of its {len(group['nodes'])} nodes)"
                    items.append(f"- [ ] **{when}** (`{f.code}`, {kind.value}): {_md(_clip(first_sentences(fx.description, 1), 180))}{cmd}")
                    break
    for f in (f for f in report.findings if f.role == Role.CONTRIBUTING and f.fixes):
        items.append(f"- [ ] **Follow-up** (`{f.code}`, contributing): {_md(_clip(first_sentences(f.fixes[0].description, 1), 180))}")
    if roots:
        items.append("- [ ] **Verify**: collect the same artifacts again and run `gpusleuth diagnose` on them: "
                     + ", ".join(f"`{f.code}`" for f in roots) + " should no longer be reported.")
    unseen = len(_gap_lines(report))
    if unseen:
        items.append(f"- [ ] **Fill the gaps**: {unseen} thing(s) could not be seen in these artifacts (see Gaps); "
                     "collect them (`gpusleuth collect`, or the commands a gap names) so the next diagnosis can rule them out.")
    if not items:
        return ""
    return "\n".join(["## Action items", "", *items])


def _window(report: Report) -> str:
    """When it happened: the first and last timestamped line, the first failure, the root cause's line, the capture."""
    timed = sorted((e for e in report.timeline if _at(e)), key=_at)
    out = ["## Incident window", ""]
    if not timed:
        out.append("The artifacts carry no timestamps that gpusleuth could place on a clock, so the incident cannot be "
                   "placed in time; the analysis time below is when the report was made, not when it happened.")
        out.append("")
        out.append(f"- Analysed: {report.source.get('analysed_at', '')}")
        return "\n".join(out)
    first, last = timed[0], timed[-1]
    span = _at(last) - _at(first)
    fails = [e for e in timed if e.tag and any(w in e.tag for w in ("failed", "crash", "error", "missing", "xid"))]
    from gpusleuth.report.decisive import decisive

    lines = [decisive(f) for f in _roots(report)[:1]] + [e for f in _roots(report) for e in f.evidence]
    at = {(e.artifact, e.line): e for e in timed}
    root_lines = [at[(e.artifact, e.line)] for e in lines if e is not None and (e.artifact, e.line) in at][:1]
    rows = [("First event in the artifacts", first)]
    if fails:
        rows.append(("First failure", fails[0]))
    if root_lines:
        rows.append(("Root cause's line", root_lines[0]))
    if fails and fails[-1] is not fails[0]:
        rows.append(("Last failure", fails[-1]))
    rows.append(("Last event in the artifacts", last))
    for label, e in rows:
        out.append(f"- **{label}**: {_stamp(e)} UTC · {_code(_cite(e))} · {_code(_clip(' '.join(e.text.split()), 120))}")
    out += ["", f"Span: {_duration(span.total_seconds())}. Times marked ≈, ~, ≥ or ≤ were placed between timestamped "
            "neighbours, not read from the line itself."]
    captured = report.source.get("captured_at")
    if captured:
        out.append(f"Captured: {captured}.")
    return "\n".join(out)


def _at(e: TimelineEntry) -> datetime | None:
    t = e.time or e.earliest or e.latest
    return t.astimezone(timezone.utc) if t else None


def _stamp(e: TimelineEntry) -> str:
    from gpusleuth.facts.timeline import when

    day = _at(e)
    return f"{day:%Y-%m-%d} {when(e)}" if day else when(e)


def _cite(e: TimelineEntry) -> str:
    return f"{e.artifact}:{e.line}" if e.line else e.artifact


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} d {s % 86400 // 3600} h"


def _event_sequence(report: Report) -> str:
    if is_fleet(report):
        groups = race_groups(report)
        lines = [f"- **{'Race' if g.certain else 'Probable race'} on {len(g.nodes)} node(s)**: {_md(g.title)}. "
                 f"For example {g.example['node'] or 'the node'}: {_md(g.example['summary'])}" for g in groups]
        return "\n".join(["## Event sequence", "", *lines, *([""] if lines else []),
                          f"Each node's events: {_code(node_command(report, 'timeline'))}."])
    from gpusleuth.report.timeline_text import render_markdown_timeline

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
    out = ["## All other findings", ""]
    for f in rest:
        where = " · ".join(x for x in (f.role.value, f.layer.value, f.severity.value, f.node and f"node {f.node}",
                                        f.component and f"component {f.component}") if x)
        caused = f" (caused by {', '.join(f.caused_by)})" if f.caused_by else ""
        out.append(f"- `{f.code}` {_md(f.title)}{_md(caused)} — {_md(where)}")
    return "\n".join(out)


def _gap_lines(report: Report) -> list[str]:
    """Each thing that could not be seen, once: the report's gaps, then the checks that did not run for a reason
    no gap already gives (grouped by reason), then the checks that failed."""
    lines: list[str] = []
    for g in report.gaps:
        line = f"- {_md(str(g))}"
        if line not in lines:
            lines.append(line)
    said = " ".join(str(g) for g in report.gaps)
    skipped: dict[str, list[str]] = defaultdict(list)
    for c in report.checks:
        if c.status == "skipped" and not (c.reason and c.reason in said):
            skipped[c.reason or "no reason given"].append(c.code)
        elif c.status == "error":
            lines.append(f"- check `{c.code}` failed: {_md(c.reason or '')}")
    for reason, codes in skipped.items():
        lines.append(f"- {_md(reason)}: check(s) {', '.join(f'`{c}`' for c in codes)} could not run")
    return lines


def _gaps(report: Report) -> str:
    lines = _gap_lines(report)
    if not lines:
        return ""
    return "\n".join(["## Gaps: what could not be seen", "", *lines])


def _seen_before(report: Report) -> str:
    """Public incidents whose lines match, ranked as pointers to threads, never as causes."""
    from gpusleuth.analysis.seen_before import fixed_words, seen_before, summary_line

    matches, searched = seen_before(report)
    if not matches and not searched:
        return ""
    out = ["## Seen before", "", _md(summary_line(matches, searched))]
    for m in matches:
        inc = m.incident
        score = f"score {m.score:.2f}" if m.score > 0 else "named by the class of " + ", ".join(m.findings)
        out += ["", f"### [{_md(inc.title)}]({inc.link})", "", f"{score} · layer {inc.layer.value} · {inc.project}", ""]
        for known, q, sim in m.lines[:3]:
            where = q.evidence.cite() if q.evidence else "-"
            seen = " ".join(q.evidence.text.split())[:240] if q.evidence else known
            out.append(f"- `{where}` ({sim:.0%} like the thread's {_code(known[:160])}): {_code(seen)}")
        if m.terms:
            out.append("- words: " + ", ".join(_code(t) for t in m.terms))
        out.append(f"- **Cause:** {_md(inc.cause)}")
        out.append(f"- **Fix:** {_md(inc.fix)}")
        out += [f"- fixed in {_md(fixed_words(d))}" for d in m.fixed]
        out += [f"- near match, condition not held: {_md(c)}" for c in m.not_held]
        if m.findings and m.score > 0:
            out.append(f"- the class of finding(s) {', '.join(m.findings)} names this thread")
    return "\n".join(out)


_LIST = re.compile(r"^(\s*)([-*+] \[[ xX]\] |[-*+] |\d+[.)] |> )?")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")


def _fit(md: str) -> str:
    """Every line at most MAX_LINE characters. Prose and list items over it are wrapped at spaces (continuation
    lines indented under the item); headings are clipped; in a bash block a long command is continued with a
    backslash at a space outside quotes; in other code blocks a long line continues, indented, on the next."""
    out: list[str] = []
    fence, lang = None, ""
    for line in md.split("\n"):
        m = _FENCE.match(line)
        if m and (fence is None or (m.group(2)[0] == fence[0] and len(m.group(2)) >= len(fence) and not m.group(3).strip())):
            fence, lang = (m.group(2), m.group(3).strip()) if fence is None else (None, "")
            out.append(line)
            continue
        if len(line) <= MAX_LINE:
            out.append(line)
        elif fence is not None:
            out += _split_command(line) if lang in ("bash", "sh", "shell", "console") else _split_code(line)
        elif line.startswith("#"):
            out.append(_clip(line, MAX_LINE))
        else:
            lead = _LIST.match(line)
            indent, marker = lead.group(1), lead.group(2) or ""
            hang = indent + ("> " if marker == "> " else " " * len(marker) if marker else "")
            out += textwrap.wrap(line[len(indent) + len(marker):], WRAP, initial_indent=indent + marker, subsequent_indent=hang,
                                 break_long_words=False, break_on_hyphens=False) or [line]
    return "\n".join(out)


def _split_code(line: str) -> list[str]:
    """A long line of a log or drawing: wrapped at spaces, continuations indented by four."""
    lines = textwrap.wrap(line, MAX_LINE, subsequent_indent="    ", break_long_words=True, break_on_hyphens=False,
                          drop_whitespace=True, replace_whitespace=False)
    return lines or [line[:MAX_LINE]]


def _split_command(line: str) -> list[str]:
    """A long shell command over several lines that the shell joins back into the same words: broken at spaces
    outside quotes (` \\`, the continuation indented by four), or, for one quoted word longer than a line, inside
    it (a single-quoted word is closed before `\\` and reopened on the next line, which is not indented)."""
    quote_at, quote, escaped = [], None, False
    for ch in line:
        quote_at.append(quote)  # the quote open before this character
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
    out, start, lead = [], 0, ""
    while len(lead) + len(line) - start > MAX_LINE:
        room = MAX_LINE - len(lead) - 2
        spaces = [c for c in range(start + 1, start + room + 1) if line[c] == " " and quote_at[c] is None and line[c - 1] != " "]
        if spaces:
            cut = spaces[-1]
            out.append(lead + line[start:cut] + " \\")
            start, lead = cut + 1, "    "
            continue
        cut = start + room - 1
        while cut > start and (quote_at[cut] is None or line[cut - 1] == "\\"):
            cut -= 1
        if cut <= start:
            break  # nothing safe to cut at: the line stays long rather than wrong
        if quote_at[cut] == "'":
            out.append(lead + line[start:cut] + "'\\")
            line, start, lead = line[:cut] + "'" + line[cut:], cut, ""
            quote_at = quote_at[:cut] + ["'"] + quote_at[cut:]
        else:
            out.append(lead + line[start:cut] + "\\")
            start, lead = cut, ""
    out.append(lead + line[start:])
    return out
