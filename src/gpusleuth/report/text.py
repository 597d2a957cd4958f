"""The terminal report: a compact summary first (verdict, the first root cause, its decisive line, its first
fix), then the details: root causes, cascade, evidence as artifact:line, fixes, gaps.

Lines are wrapped here, not by rich: at spaces only, so a file name, an artifact:line citation or a command is
never split across lines (a word longer than the line overflows it and the terminal wraps it for display, so it
still copies and searches as one word). Fix commands are never wrapped at all: one command, one line.

The lines are also written here, byte for byte as rich's console would write them (plain, or with rich's
standard-colour SGR sequences): rich (~15 ms to import, ~15 ms to lay out the example's ~400 lines) is imported
only for the fleet and component tables and for a line this module does not lay out itself (a tab, a control
character, a short line wider than the screen, a style word not in `_SGR_COLOUR`);
`tests/report/test_text_plain.py` holds the two ways to the same bytes.
"""

from __future__ import annotations

import io
import re
import textwrap

from gpusleuth.model.finding import Finding, Role
from gpusleuth.model.report import VERDICTS, Report
from gpusleuth.report.decisive import decisive

_VERDICT_STYLE = {"broken": "bold white on red", "failing": "bold white on red", "degraded": "bold black on yellow",
                  "healthy": "bold white on green", "no-verdict": "bold white on grey42"}
_SEV_STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "cyan"}
_SPACES = re.compile(r"\s{3,}")
_STATE_MARK = {"failed": ("✖", "red"), "blocked": ("⏳", "yellow"), "degraded": ("⚠", "magenta"), "ok": ("✔", "green"), "unknown": ("?", "grey50")}
LABEL = 12  # the summary's label column
_POD_PREFIX = re.compile(r"^\[pod/[^\]\s]+\]\s*")


class Line:
    """A line of styled pieces, kept as the rich `Text` calls that would build it: written directly (`_Direct`), or
    replayed as a `Text` for rich when rich lays it out."""

    __slots__ = ("_ops",)

    def __init__(self, text: str = "", style: str = "") -> None:
        self._ops: list[tuple[str | Line, str | None]] = [(text, style)]

    def append(self, text: str | Line, style: str | None = None) -> Line:
        self._ops.append((text, style))
        return self

    @property
    def plain(self) -> str:
        return "".join(t.plain if isinstance(t, Line) else t for t, _ in self._ops)

    @property
    def cell_len(self) -> int:
        return _cells(self.plain)

    def rich(self):
        """The same line as rich's `Text`, built by the calls it was built with."""
        from rich.text import Text

        (text, style), *rest = self._ops
        out = Text(text, style=style)
        for t, st in rest:
            out.append(t.rich() if isinstance(t, Line) else t, style=st)
        return out


def _cells(text: str) -> int:
    """Terminal cells: one a character for ASCII, else rich's table (East Asian wide characters take two)."""
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


class _Out:
    """Where the report's lines go: `_Direct`, or rich's console (`_Rich`); `print` and `rule` as rich's."""

    width: int

    def print(self, line, soft_wrap: bool = False) -> None:
        raise NotImplementedError

    def rule(self, title: str, style: str = "rule.line") -> None:
        raise NotImplementedError


def _console(buf: io.StringIO, width: int, color: bool):
    from rich.console import Console

    # standard colours (SGR 30-37/90-97 and bold) only: they survive `less -R`, tmux and any terminal
    # A height too, though nothing here is laid out by height: without one, rich asks the terminal and the
    # environment for the size at every print (~400 prints for the example, a third of the rendering).
    return Console(file=buf, width=width, height=25, force_terminal=color, color_system="standard" if color else None,
                   highlight=False, emoji=False, legacy_windows=False)


class _Rich(_Out):
    def __init__(self, buf: io.StringIO, width: int, color: bool) -> None:
        self.con = _console(buf, width, color)
        self.width = self.con.width

    def print(self, line, soft_wrap: bool = False) -> None:
        self.con.print(line.rich() if isinstance(line, Line) else line, soft_wrap=soft_wrap)

    def rule(self, title: str, style: str = "rule.line") -> None:
        self.con.rule(title, style=style)


_RICH_ONLY = frozenset("\t\n\x07\x08\x0b\x0c\r")  # tabs are expanded by cell, control codes dropped: rich does those


# rich's standard colours (SGR parameters) for the colour words this report's styles use; a style with another
# word goes through rich. tests/report/test_text_plain.py checks each against rich.
_SGR_COLOUR = {"black": 30, "red": 31, "green": 32, "yellow": 33, "magenta": 35, "cyan": 36, "white": 37,
               "grey42": 90, "grey50": 37, "grey70": 37, "bright_green": 92}
_THEME = {"rule.line": "bright_green", "rule.text": ""}  # the two names of rich's default theme used here


def _sgr_style(style: str | None) -> tuple[bool, int | None, int | None] | None:
    """A style as (bold, foreground, background) SGR parameters, None when it holds a word not known here."""
    words = _THEME.get(style, style).split() if style else []
    bold, fg, bg = False, None, None
    i = 0
    while i < len(words):
        word = words[i]
        if word == "bold":
            bold = True
        elif word == "on" and i + 1 < len(words) and words[i + 1] in _SGR_COLOUR:
            bg = _SGR_COLOUR[words[i + 1]] + 10
            i += 1
        elif word in _SGR_COLOUR:
            fg = _SGR_COLOUR[word]
        else:
            return None
        i += 1
    return bold, fg, bg


def _pieces(line: Line, at: int, spans: list) -> str:
    """The line's plain text; its styled ranges appended to spans as rich's `Text` holds them: a nested line's
    own style over its whole range first, then its pieces' styles, in the order they were appended."""
    (text, base), *rest = line._ops
    parts, here = [text], at + len(text)
    for t, st in rest:
        if isinstance(t, Line):
            inner_spans: list = []
            inner = _pieces(t, here, inner_spans)
            if inner and t._ops[0][1]:
                spans.append((here, here + len(inner), t._ops[0][1]))
            spans.extend(inner_spans)
            t = inner
        elif t and st:
            spans.append((here, here + len(t), st))
        parts.append(t)
        here += len(t)
    return "".join(parts)


def _coloured(line: Line) -> str | None:
    """The line with rich's SGR sequences, split where rich splits it (at every styled range's ends, each part in
    the line's style combined with the ranges over it, later ones winning); None for a style not known here."""
    spans: list = []
    text = _pieces(line, 0, spans)
    styles = [_sgr_style(line._ops[0][1])] + [_sgr_style(st) for _, _, st in spans]
    if None in styles:
        return None
    cuts = sorted({0, len(text), *(a for a, _, _ in spans), *(b for _, b, _ in spans)})
    out = []
    for a, b in zip(cuts, cuts[1:]):
        bold, fg, bg = styles[0]
        for (start, end, _), (sb, sf, sg) in zip(spans, styles[1:]):
            if start <= a and b <= end:
                bold, fg, bg = bold or sb, sf if sf is not None else fg, sg if sg is not None else bg
        codes = ";".join([*(["1"] if bold else []), *([str(fg)] if fg is not None else []), *([str(bg)] if bg is not None else [])])
        out.append(f"\x1b[{codes}m{text[a:b]}\x1b[0m" if codes else text[a:b])
    return "".join(out)


class _Direct(_Out):
    """What rich's console writes for these lines, written here: the text of a line (with rich's standard-colour
    SGR sequences when coloured) and a newline (no wrapping when soft_wrap, as a short line needs none either),
    and a rule `─── title ───` the screen wide. Anything else (a table, a tab, a control character, a line to
    fold, a title to cut, a style this module does not know) goes to rich."""

    def __init__(self, buf: io.StringIO, width: int, color: bool) -> None:
        self.buf, self.width, self.color, self._con = buf, width, color, None

    def _rich(self):
        if self._con is None:
            self._con = _console(self.buf, self.width, self.color)
        return self._con

    def print(self, line, soft_wrap: bool = False) -> None:
        if isinstance(line, Line):
            text = line.plain
            if not _RICH_ONLY.intersection(text) and (soft_wrap or _cells(text) <= self.width):
                if not self.color:
                    self.buf.write(text + "\n")
                    return
                if (coloured := _coloured(line)) is not None:
                    self.buf.write(coloured + "\n")
                    return
            line = line.rich()
        self._rich().print(line, soft_wrap=soft_wrap)

    def rule(self, title: str, style: str = "rule.line") -> None:
        room = self.width - len(title)
        sgr = _sgr_style(style) if self.color else (False, None, None)
        if not title or not title.isascii() or not title.isprintable() or "[" in title or room < 4 or sgr is None:
            self._rich().rule(title, style=style)  # no title, markup, wide characters, a title cut short
            return
        # rich centres the title: (room // 2 - 1) rule characters, a space, the title, a space, and the rest
        left = room // 2 - 1
        line = Line().append("─" * left + " ", style=style).append(title).append(" " + "─" * (room - left - 2), style=style)
        self.print(line, soft_wrap=True)


def _wrap(text: str, width: int) -> list[str]:
    """Wrapped at spaces only: never inside a word, so never inside a file name or a citation."""
    return textwrap.wrap(text, max(width, 20), break_long_words=False, break_on_hyphens=False) or [""]


def _para(con: _Out, text: str, indent: int = 0, style: str = "", hang: int | None = None, first: Line | None = None) -> None:
    """Print text wrapped to the console's width at `indent` (continuation lines at `hang`, default indent);
    `first`, when given, is a styled prefix that takes the first line's indent."""
    hang = indent if hang is None else hang
    lead = first.cell_len if first is not None else indent
    width = con.width
    for n, chunk in enumerate(text.splitlines() or [""]):
        lines = _wrap(chunk, width - max(lead, hang)) if chunk.strip() else [""]
        for i, ln in enumerate(lines):
            line = Line()
            if n == 0 and i == 0:
                line.append(first if first is not None else Line(" " * indent))
            else:
                line.append(" " * hang)
            line.append(ln, style=style)
            con.print(line, soft_wrap=True)


def _command(con: _Out, cmd: str, indent: int, style: str = "") -> None:
    """A command on one line whatever its length: copied from the terminal it still runs."""
    for i, ln in enumerate(cmd.splitlines() or [""]):
        con.print(Line(" " * indent + ("$ " if i == 0 else "  ") + ln, style=style), soft_wrap=True)


def _first_sentence(text: str) -> str:
    m = re.search(r"(?<=[.!?])\s+(?=[A-Z(`'\"])", text.strip())
    return text.strip()[: m.start()] if m else text.strip()


def render(report: Report, width: int = 100, color: bool = False, brief: bool = False, _via_rich: bool = False) -> str:
    """The report for a terminal `width` columns wide; `brief`: the summary only. (`_via_rich`: lay out every line
    with rich even without colour, which must give the same text: the tests compare the two.)"""
    buf = io.StringIO()
    con: _Out = _Rich(buf, max(width, 40), color) if _via_rich else _Direct(buf, max(width, 40), color)
    _summary(con, report)
    if brief:
        return _finish(buf, color)
    states = _state_counts(report)
    if states:
        con.print(Line("operands: " + " · ".join(states), style="grey50"), soft_wrap=True)
    signs = report.extras.get("health") or []
    if report.verdict == "healthy" and signs:
        con.rule("Seen working")
        for h in signs[:5]:
            where = f"{h['artifact']}:{h['line']}" if h.get("line") else h.get("artifact", "")
            _para(con, f"✔ {h['what']}  ({where})", 2, hang=4)
        if len(signs) > 5:
            con.print(Line(f"  … and {len(signs) - 5} more", style="grey50"))
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
        con.print(Line(f"  per node: gpusleuth diagnose --node NAME {report.source.get('description')}", style="grey50"))
    elif cascade:
        con.rule("Cascade")
        for ln in cascade.splitlines():
            con.print(Line(ln), soft_wrap=True)
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


def _summary(con: _Out, report: Report) -> None:
    """What an on-call engineer needs on the first screen: the verdict, the first root cause, the line that shows
    it (artifact:line) and the first fix with its commands. The details follow."""
    badge = Line(f" {VERDICTS.get(report.verdict, report.verdict.upper())} ", style=_VERDICT_STYLE.get(report.verdict, ""))
    first = Line().append(badge).append(" ")
    _para(con, report.headline, style="bold", hang=2, first=first)
    con.print(Line(f"source: {report.source.get('description')}  ·  {report.source.get('recognised', 0)} artifact(s) recognised",
                   style="grey50"), soft_wrap=True)
    if not report.root_causes:
        return
    top = report.root_causes[0]
    con.rule("In short", style="grey50")
    label = lambda word: Line(word.ljust(LABEL), style="bold")
    _para(con, f"[{top.code}] {top.title}", style=_SEV_STYLE.get(top.severity.value, ""), hang=LABEL, first=label("Root cause"))
    where = decisive(top)
    if where is not None:
        cite = where.cite()
        if LABEL + len(cite) <= con.width:
            con.print(Line().append(label("Seen at")).append(cite, style="cyan"), soft_wrap=True)
        else:  # a long file name: on a line of its own, whole
            con.print(label("Seen at"))
            con.print(Line(cite, style="cyan"), soft_wrap=True)
        _para(con, _POD_PREFIX.sub("", _SPACES.sub("  ", where.text.strip())), LABEL)  # the artifact names the pod
    fix = top.fixes[0] if top.fixes else None
    if fix is not None:
        lines = _wrap(f"{fix.kind.value}: {_first_sentence(fix.description)}", con.width - LABEL)
        if len(lines) > 3:  # the whole description is in the details; here the commands matter
            lines = lines[:3]
            lines[-1] += " (…)"
        _para(con, " ".join(lines), style="green", hang=LABEL, first=label("First fix"))
        for cmd in fix.commands[:3]:
            _command(con, cmd, LABEL)
        if len(fix.commands) > 3:
            con.print(Line(" " * LABEL + f"(+{len(fix.commands) - 3} more command(s) below)", style="grey50"))
    more = []
    if len(report.root_causes) > 1:
        more.append(f"{len(report.root_causes) - 1} more root cause(s)")
    others = sum(len(f.fixes) for f in report.root_causes) - (1 if fix else 0)
    if others:
        more.append(f"{others} more fix(es)")
    _para(con, ", ".join(more + ["evidence and cascade below"]), style="grey50", hang=LABEL, first=label("Details"))


def _finding(con: _Out, f: Finding, index: int | None, full: bool) -> None:
    head = Line()
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
    group = f.facts.get("fleet") if isinstance(f.facts, dict) else None
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
                    con.print(Line(" " * 7 + ln, style="grey70"), soft_wrap=True)


def _evidence(con: _Out, evidence, indent: int) -> None:
    """artifact:line beside the line itself when the citations are short enough, else each citation whole on its
    own line with the text below it: the decisive words are often at the end, and a file name is never split."""
    cites = [e.cite() for e in evidence]
    col = max(len(c) for c in cites) + 2
    beside = indent + col <= con.width * 0.45
    for e, cite in zip(evidence, cites):
        text = _SPACES.sub("  ", e.text)  # Text, never markup: a `[pod/x/c]` prefix is not a style
        if beside:
            _para(con, text, hang=indent + col, first=Line(" " * indent).append(cite.ljust(col), style="cyan"))
        else:
            con.print(Line(" " * indent).append(cite, style="cyan"), soft_wrap=True)
            _para(con, text, indent + 2)


NODES_SHOWN = 8


def _fleet_lines(con: _Out, group: dict, full: bool) -> None:
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
        _para(con, ln, 3, style="magenta" if ln.startswith("differs") else "grey50", hang=5)


def _fleet_table(con: _Out, report: Report, fleet: dict) -> None:
    """One line per root cause with its node count: the fleet at a glance."""
    from rich.markup import escape
    from rich.table import Table  # tables only here and in _components: most reports need neither (~5 ms)
    from rich.text import Text

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


def _fleet_timeline(con: _Out, report: Report) -> None:
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
        _para(con, f"{'RACE' if v['certain'] else 'PROBABLE RACE'} on {len(nodes)} node(s): {v['title']}", 2,
              style="bold red" if v["certain"] else "red", hang=4)
        _para(con, f"e.g. {v['node'] or 'the node'}: {v['summary']}", 4, hang=6)  # whole, never cut
    con.print(Line(f"  (per node: gpusleuth timeline --node NAME {report.source.get('description')})", style="grey50"),
              soft_wrap=True)


def _state_counts(report: Report) -> list[str]:
    """"1 failed · 7 blocked · 1 running with errors · 2 ok": the operand picture in one line."""
    words = {"failed": "failed", "blocked": "blocked", "degraded": "running with errors", "ok": "ok", "unknown": "not seen"}
    counts: dict[str, int] = {}
    for c in report.components:
        counts[c.state.value] = counts.get(c.state.value, 0) + 1
    return [f"{counts[k]} {w}" for k, w in words.items() if counts.get(k)]


def _timeline_summary(con: _Out, report: Report) -> None:
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
                con.print(Line(f"    {word:<9}").append(f"{e['artifact']}:{e['line']}", style="cyan"), soft_wrap=True)
                _para(con, _SPACES.sub("  ", str(e["text"]).strip()), 13)
    for p in phases:
        _para(con, str(p), 2, hang=4)
    con.print(Line(f"  (lanes, race window and marker files: gpusleuth timeline {report.source.get('description')})", style="grey50"),
              soft_wrap=True)


def _components(con: _Out, report: Report) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

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


def _seen_before(con: _Out, report: Report) -> None:
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
        head = Line(f"  {i}. ", style="bold")
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
