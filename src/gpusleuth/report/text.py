"""The terminal report: a compact summary first (verdict, the first root cause, its decisive line, its first
fix), then the details: root causes, cascade, evidence as artifact:line, fixes, gaps.

Lines are wrapped here, not by rich: at spaces only, so a file name, an artifact:line citation or a command is
never split across lines (a word longer than the line overflows it and the terminal wraps it for display, so it
still copies and searches as one word). Fix commands are never wrapped at all: one command, one line.
"""

from __future__ import annotations

import io
import re
import textwrap

from rich.console import Console
from rich.text import Text

from gpusleuth.model.finding import Finding, Role
from gpusleuth.model.report import VERDICTS, Report
from gpusleuth.report.decisive import decisive
from gpusleuth.report.fleet_view import STATE_WORDS, STATES, group_lines, group_of, node_command, operand_rows, race_groups
from gpusleuth.report.sentences import first_sentences

_VERDICT_STYLE = {"broken": "bold white on red", "failing": "bold white on red", "degraded": "bold black on yellow",
                  "healthy": "bold white on green", "no-verdict": "bold white on grey42"}
_SEV_STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "cyan"}
_SPACES = re.compile(r"\s{3,}")
_STATE_MARK = {"failed": ("✖", "red"), "blocked": ("⏳", "yellow"), "degraded": ("⚠", "magenta"), "ok": ("✔", "green"), "unknown": ("?", "grey50")}
LABEL = 12  # the summary's label column
_POD_PREFIX = re.compile(r"^\[pod/[^\]\s]+\]\s*")


def _wrap(text: str, width: int) -> list[str]:
    """Wrapped at spaces only: never inside a word, so never inside a file name or a citation."""
    return textwrap.wrap(text, max(width, 20), break_long_words=False, break_on_hyphens=False) or [""]


def _para(con: Console, text: str, indent: int = 0, style: str = "", hang: int | None = None, first: Text | None = None) -> None:
    """Print text wrapped to the console's width at `indent` (continuation lines at `hang`, default indent);
    `first`, when given, is a styled prefix that takes the first line's indent."""
    hang = indent if hang is None else hang
    lead = first.cell_len if first is not None else indent
    width = con.width
    for n, chunk in enumerate(text.splitlines() or [""]):
        lines = _wrap(chunk, width - max(lead, hang)) if chunk.strip() else [""]
        for i, ln in enumerate(lines):
            line = Text()
            if n == 0 and i == 0:
                line.append(first if first is not None else Text(" " * indent))
            else:
                line.append(" " * hang)
            line.append(ln, style=style)
            con.print(line, soft_wrap=True)


def _command(con: Console, cmd: str, indent: int, style: str = "") -> None:
    """A command on one line whatever its length: copied from the terminal it still runs."""
    for i, ln in enumerate(cmd.splitlines() or [""]):
        con.print(Text(" " * indent + ("$ " if i == 0 else "  ") + ln, style=style), soft_wrap=True)


def render(report: Report, width: int = 100, color: bool = False, brief: bool = False) -> str:
    """The report for a terminal `width` columns wide; `brief`: the summary only."""
    buf = io.StringIO()
    # standard colours (SGR 30-37/90-97 and bold) only: they survive `less -R`, tmux and any terminal
    # A height too, though nothing here is laid out by height: without one, rich asks the terminal and the
    # environment for the size at every print (~400 prints for the example, a third of the rendering).
    con = Console(file=buf, width=max(width, 40), height=25, force_terminal=color, color_system="standard" if color else None,
                  highlight=False, emoji=False, legacy_windows=False)
    _summary(con, report, brief)
    if brief:
        if report.extras.get("fleet"):  # a fleet's other causes and their node counts, in as many lines
            _fleet_table(con, report, report.extras["fleet"])
        return _finish(buf, color)
    states = _state_counts(report)
    if states:
        con.print(Text("operands: " + " · ".join(states), style="grey50"), soft_wrap=True)
    signs = report.extras.get("health") or []
    if report.verdict == "healthy" and signs:
        con.rule("Seen working")
        for h in signs[:5]:
            where = f"{h['artifact']}:{h['line']}" if h.get("line") else h.get("artifact", "")
            _para(con, f"✔ {h['what']}  ({where})", 2, hang=4)
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
        con.rule("Operands")
        rows = operand_rows(report)
        width = max(len(r.name) for r in rows) if rows else 0
        for r in rows:
            _para(con, r.summary(), hang=width + 4, first=Text(f"  {r.name.ljust(width)}  "))
        con.print(Text(f"  (the cascade of one node: {node_command(report)})", style="grey50"), soft_wrap=True)
    elif cascade:
        con.rule("Cascade")
        for ln in cascade.splitlines():
            con.print(Text(ln), soft_wrap=True)
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
            _para(con, "• " + str(g), 2, hang=4)
    return _finish(buf, color)


def _finish(buf: io.StringIO, color: bool) -> str:
    out = buf.getvalue()
    return out if color else "\n".join(line.rstrip() for line in out.splitlines()) + "\n"


def _summary(con: Console, report: Report, brief: bool = False) -> None:
    """What an on-call engineer needs on the first screen: the verdict, the first root cause, the line that shows
    it (artifact:line) and the first fix with its commands. The details follow."""
    badge = Text(f" {VERDICTS.get(report.verdict, report.verdict.upper())} ", style=_VERDICT_STYLE.get(report.verdict, ""))
    first = Text().append(badge).append(" ")
    _para(con, report.headline, style="bold", hang=2, first=first)
    con.print(Text(f"source: {report.source.get('description')}  ·  {report.source.get('recognised', 0)} artifact(s) recognised",
                   style="grey50"), soft_wrap=True)
    if not report.root_causes:
        return
    top = report.root_causes[0]
    con.rule("In short", style="grey50")
    label = lambda word: Text(word.ljust(LABEL), style="bold")
    _para(con, f"[{top.code}] {top.title}", style=_SEV_STYLE.get(top.severity.value, ""), hang=LABEL, first=label("Root cause"))
    where = decisive(top)
    if where is not None:
        cite = where.cite()
        if LABEL + len(cite) <= con.width:
            con.print(Text().append(label("Seen at")).append(cite, style="cyan"), soft_wrap=True)
        else:  # a long file name: on a line of its own, whole
            con.print(label("Seen at"))
            con.print(Text(cite, style="cyan"), soft_wrap=True)
        _para(con, _POD_PREFIX.sub("", _SPACES.sub("  ", where.text.strip())), LABEL)  # the artifact names the pod
    fix = top.fixes[0] if top.fixes else None
    if fix is not None:
        lines = _wrap(f"{fix.kind.value}: {first_sentences(fix.description)}", con.width - LABEL)
        if len(lines) > 3:  # the whole description is in the details; here the commands matter
            lines = lines[:3]
            lines[-1] += " (…)"
        _para(con, " ".join(lines), style="green", hang=LABEL, first=label("First fix"))
        for cmd in fix.commands[:3]:
            _command(con, cmd, LABEL)
        if len(fix.commands) > 3:  # "in the details": below, or where the Details line says under --brief
            con.print(Text(" " * LABEL + f"(+{len(fix.commands) - 3} more command(s) in the details)", style="grey50"))
    more = []
    if len(report.root_causes) > 1:
        more.append(f"{len(report.root_causes) - 1} more root cause(s)")
    others = sum(len(f.fixes) for f in report.root_causes) - (1 if fix else 0)
    if others:
        more.append(f"{others} more fix(es)")
    where = "without --brief" if brief else "below"
    _para(con, ", ".join(more + [f"evidence and cascade {where}"]), style="grey50", hang=LABEL, first=label("Details"))


def _finding(con: Console, f: Finding, index: int | None, full: bool) -> None:
    head = Text()
    if index:
        head.append(f"{index}. ", style="bold")
    head.append(f"[{f.code}] ", style="bold")
    _para(con, f.title, style=_SEV_STYLE.get(f.severity.value, "") + (" bold" if full else ""), hang=3, first=head)
    where = [f"layer {f.layer.value}", f"severity {f.severity.value}", f"confidence {f.confidence:.0%}"]
    if f.node:
        where.append(f"node {f.node}")
    if f.component:
        where.append(f"component {f.component}")
    if f.caused_by:
        where.append("caused by " + ", ".join(f.caused_by))
    _para(con, " · ".join(where), 3, style="grey50")
    if full:
        _para(con, f.explanation, 3)
    group = group_of(f)
    if group:
        _fleet_lines(con, group, full)
    if f.evidence:
        _evidence(con, f.evidence[: (8 if full else 3)], 3)
    if full and f.fixes:
        for fx in f.fixes:
            _para(con, f"▸ {fx.kind.value}: {fx.description}", 3, style="green", hang=5)
            for cmd in fx.commands:
                _command(con, cmd, 7)
            if fx.snippet:
                for ln in fx.snippet.rstrip().splitlines():
                    con.print(Text(" " * 7 + ln, style="grey70"), soft_wrap=True)


def _evidence(con: Console, evidence, indent: int) -> None:
    """artifact:line beside the line itself when the citations are short enough, else each citation whole on its
    own line with the text below it: the decisive words are often at the end, and a file name is never split."""
    cites = [e.cite() for e in evidence]
    col = max(len(c) for c in cites) + 2
    beside = indent + col <= con.width * 0.45
    for e, cite in zip(evidence, cites):
        text = _SPACES.sub("  ", e.text)  # Text, never markup: a `[pod/x/c]` prefix is not a style
        if beside:
            _para(con, text, hang=indent + col, first=Text(" " * indent).append(cite.ljust(col), style="cyan"))
        else:
            con.print(Text(" " * indent).append(cite, style="cyan"), soft_wrap=True)
            _para(con, text, indent + 2)




def _fleet_lines(con: Console, group: dict, full: bool) -> None:
    """Which nodes a grouped cause shows on, how they differ from the rest, and which node is the example."""
    for ln in group_lines(group, full):
        _para(con, ln, 3, style="magenta" if ln.startswith("differs") else "grey50", hang=5)


def _fleet_table(con: Console, report: Report, fleet: dict) -> None:
    """One line per root cause with its node count: the fleet at a glance."""
    from rich.markup import escape
    from rich.table import Table  # tables only here and in _components: most reports need neither (~5 ms)

    con.rule("Fleet")
    _para(con, f"{fleet['nodes']} node(s) · {fleet['failing_nodes']} with a finding at error or above · "
               f"{fleet['without_errors']} without", 2, style="bold")
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
    groups = race_groups(report)
    if not groups:
        return
    con.rule("Timeline")
    for g in groups:
        _para(con, f"{'RACE' if g.certain else 'PROBABLE RACE'} on {len(g.nodes)} node(s): {g.title}", 2,
              style="bold red" if g.certain else "red", hang=4)
        _para(con, f"e.g. {g.example['node'] or 'the node'}: {g.example['summary']}", 4, hang=6)  # whole, never cut
    con.print(Text(f"  (per node: {node_command(report, 'timeline')})", style="grey50"), soft_wrap=True)


def _state_counts(report: Report) -> list[str]:
    """"1 failed · 7 blocked · 1 running with errors · 2 ok": the operand picture in one line."""
    counts: dict = {}
    for c in report.components:
        counts[c.state] = counts.get(c.state, 0) + 1
    return [f"{counts[s]} {STATE_WORDS[s]}" for s in STATES if counts.get(s)]


def _timeline_summary(con: Console, report: Report) -> None:
    """Races and phase durations in a few lines; `gpusleuth timeline` draws the lanes."""
    violations = (report.extras.get("ordering") or {}).get("violations", [])
    phases = report.extras.get("phases") or []
    if not (violations or phases):
        return
    con.rule("Timeline")
    for v in violations:
        _para(con, f"{'RACE' if v['certain'] else 'PROBABLE RACE'} on {v['node'] or 'the node'}: {v['summary']}", 2,
              style="bold red" if v["certain"] else "red", hang=4)
        # whole: the message is what the user needs (the citation on its own line, the line wrapped under it)
        for word, e in (("late:", v["then"]), ("awaited:", v["first"])):
            if e:
                con.print(Text(f"    {word:<9}").append(f"{e['artifact']}:{e['line']}", style="cyan"), soft_wrap=True)
                _para(con, _SPACES.sub("  ", str(e["text"]).strip()), 13)
    for p in phases:
        _para(con, str(p), 2, hang=4)
    node = f"--node {report.source['node']} " if report.source.get("node") else ""
    con.print(Text(f"  (lanes, race window and marker files: gpusleuth timeline {node}{report.source.get('description')})", style="grey50"),
              soft_wrap=True)


def _components(con: Console, report: Report) -> None:
    from rich.markup import escape
    from rich.table import Table

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
    _para(con, summary_line(matches, searched), 2, style="grey50")
    for i, m in enumerate(matches, 1):
        inc = m.incident
        score = f"{m.score:.2f}" if m.score > 0 else "class"
        head = Text(f"  {i}. ", style="bold")
        head.append(f"[{score}] ", style="bold")
        _para(con, inc.title, hang=5, first=head)
        _para(con, f"{inc.link} · layer {inc.layer.value}", 5, style="cyan", hang=7)
        for known, q, sim in m.lines[:3]:
            where = q.evidence.cite() if q.evidence else "-"
            seen = _SPACES.sub("  ", q.evidence.text.strip()) if q.evidence else known
            _para(con, f"{where} ({sim:.0%}): {seen[:240]}", 5, hang=7)
        if m.terms:
            _para(con, "words: " + ", ".join(m.terms), 5, hang=7)
        _para(con, "cause: " + inc.cause, 5, hang=7)
        _para(con, "fix: " + inc.fix, 5, style="green", hang=7)
        for d in m.fixed:
            _para(con, "fixed in " + fixed_words(d), 5, hang=7)
        for c in m.not_held:
            _para(con, "near match, condition not held: " + c, 5, style="yellow", hang=7)
        if m.findings:
            _para(con, "the class of finding(s) " + ", ".join(m.findings) + " names this thread", 5, style="grey50", hang=7)
