"""The terminal report: verdict, root cause, cascade, evidence as artifact:line, fixes, gaps."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpusleuth.model.finding import Finding, Role
from gpusleuth.model.report import Report

_VERDICT_STYLE = {"broken": "bold white on red", "degraded": "bold black on yellow", "healthy": "bold white on green", "unknown": "bold white on grey42"}
_SEV_STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "cyan"}
_STATE_MARK = {"failed": ("✖", "red"), "blocked": ("⏳", "yellow"), "degraded": ("⚠", "magenta"), "ok": ("✔", "green"), "unknown": ("?", "grey50")}


def render(report: Report, width: int = 110, color: bool = False) -> str:
    buf = io.StringIO()
    con = Console(file=buf, width=width, force_terminal=color, color_system="truecolor" if color else None, highlight=False)
    con.print(Text(f" {report.verdict.upper()} ", style=_VERDICT_STYLE.get(report.verdict, "")), Text(" " + report.headline, style="bold"))
    con.print(Text(f"source: {report.source.get('description')}  ·  {report.source.get('recognised', 0)} artifact(s) recognised", style="grey50"))
    if report.root_causes:
        con.rule("Root cause" + ("s" if len(report.root_causes) > 1 else ""))
        for i, f in enumerate(report.root_causes, 1):
            _finding(con, f, i, full=True)
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
    return buf.getvalue()


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
    con.print(Text("   " + " · ".join(where), style="grey50"))
    if full:
        con.print(Text("   " + f.explanation))
    for e in f.evidence[: (8 if full else 3)]:
        line = Text("   ")
        line.append(e.cite(), style="cyan")
        line.append("  " + e.text)
        con.print(line, overflow="ellipsis", no_wrap=True)
    if full and f.fixes:
        for fx in f.fixes:
            con.print(Text(f"   ▸ {fx.kind.value}: {fx.description}", style="green"))
            for cmd in fx.commands:
                con.print(Text(f"       $ {cmd}"), overflow="fold")
            if fx.snippet:
                for ln in fx.snippet.rstrip().splitlines():
                    con.print(Text(f"       {ln}", style="grey70"))


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
