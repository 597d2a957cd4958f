"""The terminal report: verdict, root cause, cascade, evidence as artifact:line, fixes, gaps."""

from __future__ import annotations

import io
import re

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gpusleuth.model.finding import Finding, Role
from gpusleuth.model.report import VERDICTS, Report

_VERDICT_STYLE = {"broken": "bold white on red", "failing": "bold white on red", "degraded": "bold black on yellow",
                  "healthy": "bold white on green", "no-verdict": "bold white on grey42"}
_SEV_STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "cyan"}
_SPACES = re.compile(r"\s{3,}")
_STATE_MARK = {"failed": ("✖", "red"), "blocked": ("⏳", "yellow"), "degraded": ("⚠", "magenta"), "ok": ("✔", "green"), "unknown": ("?", "grey50")}


def render(report: Report, width: int = 110, color: bool = False) -> str:
    buf = io.StringIO()
    con = Console(file=buf, width=width, force_terminal=color, color_system="truecolor" if color else None, highlight=False)
    head = Table.grid(padding=(0, 1))
    head.add_column(no_wrap=True)
    head.add_column()
    head.add_row(Text(f" {VERDICTS.get(report.verdict, report.verdict.upper())} ", style=_VERDICT_STYLE.get(report.verdict, "")), Text(report.headline, style="bold"))
    con.print(head)
    con.print(Text(f"source: {report.source.get('description')}  ·  {report.source.get('recognised', 0)} artifact(s) recognised", style="grey50"))
    states = _state_counts(report)
    if states:
        con.print(Text("operands: " + " · ".join(states), style="grey50"))
    signs = report.extras.get("health") or []
    if report.verdict == "healthy" and signs:
        con.rule("Seen working")
        for h in signs[:5]:
            where = f"{h['artifact']}:{h['line']}" if h.get("line") else h.get("artifact", "")
            con.print(Text(f"  ✔ {h['what']}  ({where})"))
        if len(signs) > 5:
            con.print(Text(f"  … and {len(signs) - 5} more", style="grey50"))
    fleet = report.extras.get("fleet")
    if fleet:
        _fleet_table(con, report, fleet)
    if report.root_causes:
        con.rule("Root cause" + ("s" if len(report.root_causes) > 1 else ""))
        for i, f in enumerate(report.root_causes, 1):
            _finding(con, f, i, full=True)
    if fleet:
        _fleet_timeline(con, report)
    else:
        _timeline_summary(con, report)
    cascade = report.extras.get("cascade_text")
    if fleet and (cascade or report.components):
        con.rule("Cascade")
        con.print(Text(f"  per node: gpusleuth diagnose --node NAME {report.source.get('description')}", style="grey50"))
    elif cascade:
        con.rule("Cascade")
        con.print(Text(cascade))
    elif report.components:
        con.rule("Components")
        _components(con, report)
    for role, title in ((Role.CONTRIBUTING, "Contributing"), (Role.SYMPTOM, "Symptoms"), (Role.BLOCKED, "Blocked")):
        rest = [f for f in report.findings if f.role == role]
        if rest:
            con.rule(title)
            for f in rest:
                _finding(con, f, None, full=False)
    info = [f for f in report.findings if f.role == Role.INFO]
    if info:
        con.rule("Notes")
        for f in info:
            _finding(con, f, None, full=False)
    _seen_before(con, report)
    if report.gaps:
        con.rule("Gaps: what could not be seen")
        for g in report.gaps:
            con.print(Text("  • " + str(g)))
    out = buf.getvalue()
    return out if color else "\n".join(line.rstrip() for line in out.splitlines()) + "\n"


def _finding(con: Console, f: Finding, index: int | None, full: bool) -> None:
    head = Text()
    if index:
        head.append(f"{index}. ", style="bold")
    head.append(f"[{f.code}] ", style="bold")
    head.append(f.title, style=_SEV_STYLE.get(f.severity.value, "") + (" bold" if full else ""))
    con.print(head)
    where = [f"layer {f.layer.value}", f"severity {f.severity.value}", f"confidence {f.confidence:.0%}"]
    if f.node:
        where.append(f"node {f.node}")
    if f.component:
        where.append(f"component {f.component}")
    if f.caused_by:
        where.append("caused by " + ", ".join(f.caused_by))
    con.print(Padding(Text(" · ".join(where), style="grey50"), (0, 0, 0, 3), expand=False))
    if full:
        con.print(Padding(Text(f.explanation), (0, 0, 0, 3), expand=False))
    group = f.facts.get("fleet") if isinstance(f.facts, dict) else None
    if group:
        _fleet_lines(con, group, full)
    if f.evidence:
        # artifact:line, then the line itself wrapped beside it: the decisive words are often at the end
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="cyan", max_width=48, overflow="fold")
        grid.add_column(overflow="fold")
        for e in f.evidence[: (8 if full else 3)]:
            grid.add_row(Text(e.cite()), Text(_SPACES.sub("  ", e.text)))  # Text: a `[pod/x/c]` prefix is not markup
        con.print(Padding(grid, (0, 0, 0, 3), expand=False))
    if full and f.fixes:
        for fx in f.fixes:
            con.print(Padding(Text(f"▸ {fx.kind.value}: {fx.description}", style="green"), (0, 0, 0, 3), expand=False))
            for cmd in fx.commands:
                con.print(Padding(Text(f"$ {cmd}"), (0, 0, 0, 7), expand=False), overflow="fold")
            if fx.snippet:
                for ln in fx.snippet.rstrip().splitlines():
                    con.print(Padding(Text(ln, style="grey70"), (0, 0, 0, 7), expand=False), overflow="fold")


NODES_SHOWN = 8


def _fleet_lines(con: Console, group: dict, full: bool) -> None:
    """Which nodes a grouped cause shows on, how they differ from the rest, and which node is the example."""
    nodes = group["nodes"]
    more = f" and {len(nodes) - NODES_SHOWN} more" if len(nodes) > NODES_SHOWN else ""
    lines = [f"on {len(nodes)} of {group['of_nodes']} nodes: {', '.join(nodes[:NODES_SHOWN])}{more}"]
    for d in group.get("differs", []):
        lines.append(f"differs by {d['label']}: all {d['affected']} affected nodes have {d['value']}, "
                     f"{d['others_with_it']} of the {d['others']} other nodes do")
    if full:
        for dim, counts in group.get("groups", {}).items():
            if len(counts) > 1 or not group.get("differs"):
                lines.append(f"{dim}: " + ", ".join(f"{v} ({n})" for v, n in list(counts.items())[:4]) + (" …" if len(counts) > 4 else ""))
        lines.append(f"example below: node {group['example_node']} (any node in full: diagnose --node NAME)")
    for ln in lines:
        con.print(Padding(Text(ln, style="magenta" if ln.startswith("differs") else "grey50"), (0, 0, 0, 3), expand=False))


def _fleet_table(con: Console, report: Report, fleet: dict) -> None:
    """One line per root cause with its node count: the fleet at a glance."""
    con.rule("Fleet")
    con.print(Text(f"  {fleet['nodes']} node(s) · {fleet['failing_nodes']} with a finding at error or above · "
                   f"{fleet['without_errors']} without", style="bold"))
    table = Table(show_edge=False, box=None, pad_edge=False)
    for col in ("#", "nodes", "code", "severity", "cause", "where it differs"):
        table.add_column(col, overflow="fold")
    for i, row in enumerate(fleet["causes"], 1):
        table.add_row(str(i), str(row["nodes"] if row["nodes"] is not None else "all"), row["code"],
                      Text(row["severity"], style=_SEV_STYLE.get(row["severity"], "")), escape(row["title"]),
                      escape("; ".join(row["differs"]) or "-"))
    con.print(table)


def _fleet_timeline(con: Console, report: Report) -> None:
    """Races grouped by rule across the nodes: one line each with the node count and an example."""
    violations = (report.extras.get("ordering") or {}).get("violations", [])
    if not violations:
        return
    by_rule: dict[str, list[dict]] = {}
    for v in violations:
        by_rule.setdefault(v["rule"], []).append(v)
    con.rule("Timeline")
    for same in by_rule.values():
        v = same[0]
        nodes = sorted({x["node"] or "?" for x in same})
        con.print(Text(f"  {'RACE' if v['certain'] else 'PROBABLE RACE'} on {len(nodes)} node(s): {v['title']}",
                       style="bold red" if v["certain"] else "red"))
        con.print(Text(f"    e.g. {v['node'] or 'the node'}: {v['summary']}"), overflow="ellipsis", no_wrap=True)
    con.print(Text(f"  (per node: gpusleuth timeline --node NAME {report.source.get('description')})", style="grey50"))


def _state_counts(report: Report) -> list[str]:
    """"1 failed · 7 blocked · 1 running with errors · 2 ok": the operand picture in one line."""
    words = {"failed": "failed", "blocked": "blocked", "degraded": "running with errors", "ok": "ok", "unknown": "not seen"}
    counts: dict[str, int] = {}
    for c in report.components:
        counts[c.state.value] = counts.get(c.state.value, 0) + 1
    return [f"{counts[k]} {w}" for k, w in words.items() if counts.get(k)]


def _timeline_summary(con: Console, report: Report) -> None:
    """Races and phase durations in a few lines; `gpusleuth timeline` draws the lanes."""
    violations = (report.extras.get("ordering") or {}).get("violations", [])
    phases = report.extras.get("phases") or []
    if not (violations or phases):
        return
    con.rule("Timeline")
    for v in violations:
        con.print(Text(f"  {'RACE' if v['certain'] else 'PROBABLE RACE'} on {v['node'] or 'the node'}: {v['summary']}",
                       style="bold red" if v["certain"] else "red"))
        con.print(Text(f"    late:    {v['then']['artifact']}:{v['then']['line']}  {v['then']['text']}"), overflow="ellipsis", no_wrap=True)
        if v["first"]:
            con.print(Text(f"    awaited: {v['first']['artifact']}:{v['first']['line']}  {v['first']['text']}"), overflow="ellipsis", no_wrap=True)
    for p in phases:
        con.print(Text(f"  {p}"))
    con.print(Text(f"  (lanes, race window and marker files: gpusleuth timeline {report.source.get('description')})", style="grey50"))


def _components(con: Console, report: Report) -> None:
    table = Table(show_edge=False, box=None, pad_edge=False)
    for col in ("", "component", "node", "layer", "state", "status", "blocked by / reason"):
        table.add_column(col)
    for c in report.components:
        mark, style = _STATE_MARK.get(c.state.value, ("?", ""))
        table.add_row(
            Text(mark, style=style), c.name, c.node or "-", c.layer.value, Text(c.state.value, style=style), c.status or "-",
            escape(c.blocked_by and f"{c.blocked_by} ({c.waiting_on})" if c.blocked_by else (c.reason or "")),
        )
    con.print(table)


def _seen_before(con: Console, report: Report) -> None:
    """Public incidents whose lines match: link, score, the lines, cause and fix, fixed-in against in use."""
    from gpusleuth.analysis.seen_before import fixed_words, seen_before, summary_line

    matches, searched = seen_before(report)
    if not matches and not searched:
        return
    con.rule("Seen before")
    con.print(Text("  " + summary_line(matches, searched), style="grey50"))
    for i, m in enumerate(matches, 1):
        inc = m.incident
        score = f"{m.score:.2f}" if m.score > 0 else "class"
        head = Text(f"  {i}. ", style="bold")
        head.append(f"[{score}] ", style="bold")
        head.append(inc.title)
        con.print(head)
        con.print(Padding(Text(f"{inc.link} · layer {inc.layer.value}", style="cyan"), (0, 0, 0, 5), expand=False))
        for known, q, sim in m.lines[:3]:
            where = q.evidence.cite() if q.evidence else "-"
            seen = _SPACES.sub("  ", q.evidence.text.strip()) if q.evidence else known
            con.print(Padding(Text(f"{where} ({sim:.0%}): {seen[:240]}"), (0, 0, 0, 5), expand=False), overflow="fold")
        if m.terms:
            con.print(Padding(Text("words: " + ", ".join(m.terms)), (0, 0, 0, 5), expand=False))
        con.print(Padding(Text("cause: " + inc.cause), (0, 0, 0, 5), expand=False))
        con.print(Padding(Text("fix: " + inc.fix, style="green"), (0, 0, 0, 5), expand=False))
        for d in m.fixed:
            con.print(Padding(Text("fixed in " + fixed_words(d)), (0, 0, 0, 5), expand=False))
        for c in m.not_held:
            con.print(Padding(Text("near match, condition not held: " + c, style="yellow"), (0, 0, 0, 5), expand=False))
        if m.findings:
            con.print(Padding(Text("the class of finding(s) " + ", ".join(m.findings) + " names this thread", style="grey50"), (0, 0, 0, 5), expand=False))
