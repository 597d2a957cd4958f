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
    if report.root_causes:
        con.rule("Root cause" + ("s" if len(report.root_causes) > 1 else ""))
        for i, f in enumerate(report.root_causes, 1):
            _finding(con, f, i, full=True)
    _timeline_summary(con, report)
    cascade = report.extras.get("cascade_text")
    if cascade:
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
