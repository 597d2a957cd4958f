"""The terminal report is written by report/text.py itself, rich only drawing tables and what it lays out
differently: it must be, byte for byte, what rich writes for the same lines, with colour and without
(render(..., _via_rich=True) lays every line out with rich)."""

import dataclasses
import io

import pytest
from rich.console import Console

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.model.evidence import Evidence
from gpusleuth.report.text import _SGR_COLOUR, Line, _Direct, _sgr_style, render
from gpusleuth.sources import example_names, open_source

_REPORTS: dict = {}


def report(source):
    if source not in _REPORTS:
        _REPORTS[source] = diagnose(open_source(source))
    return _REPORTS[source]


def both(rep, **kw):
    return render(rep, **kw), render(rep, _via_rich=True, **kw)


@pytest.mark.parametrize("name", example_names())
@pytest.mark.parametrize("width", [40, 63, 80, 100, 157])
@pytest.mark.parametrize("brief", [False, True])
@pytest.mark.parametrize("color", [False, True])
def test_the_examples_read_the_same_with_and_without_rich(name, width, brief, color):
    plain, rich = both(report(f"example:{name}"), width=width, brief=brief, color=color)
    assert plain == rich
    assert ("\x1b[" in plain) is color


def test_lines_rich_treats_apart_read_the_same():
    """Tabs (expanded by cell), control characters (dropped), wide characters, a line wider than the screen, a
    newline inside a printed line and a bracket that markup would read: each path that leaves the plain writer."""
    rep = report("example:peermem-race")
    odd = ("tab\there\tand\tthere", "bell\x07 back\x08space cr\r vt\x0b ff\x0c", "宽字符 ／ ｗｉｄｅ 😀 done",
           "[bold]not markup[/bold] [pod/x/c] " + "x" * 300, "é" * 150, "")
    top = rep.root_causes[0]
    evidence = tuple(Evidence(f"{o[:4] or 'f'}.log", i + 1, o) for i, o in enumerate(odd))
    top = dataclasses.replace(top, evidence=evidence + top.evidence, title="\t".join(odd[:3]))
    rep = dataclasses.replace(rep, headline=" ".join(odd), root_causes=(top,) + rep.root_causes[1:],
                              source={**rep.source, "description": "a\tb\nc"})
    for width in (40, 80, 120):
        for color in (False, True):
            plain, rich = both(rep, width=width, color=color)
            assert plain == rich
            assert "not markup" in plain and "\t" not in plain


@pytest.mark.parametrize("title", ["Notes", "In short", "Gaps: what could not be seen", "x" * 36, "y" * 37, "z" * 96,
                                   "", "[b]x[/b]", "宽 wide", "a\tb"])
@pytest.mark.parametrize("width", [40, 41, 42, 99, 100])
@pytest.mark.parametrize("color,style", [(False, "grey50"), (True, "grey50"), (True, "rule.line"), (True, "blue")])
def test_a_rule_is_rich_s_rule(title, width, color, style):
    mine, theirs = io.StringIO(), io.StringIO()
    _Direct(mine, width, color).rule(title, style=style)
    _console(theirs, width, color).rule(title, style=style)
    assert mine.getvalue() == theirs.getvalue()


def _console(buf, width, color):
    return Console(file=buf, width=width, height=25, force_terminal=color, color_system="standard" if color else None,
                   highlight=False, emoji=False, legacy_windows=False)


def test_each_colour_word_is_rich_s_standard_colour():
    from rich.color import ColorSystem
    from rich.style import Style

    for word in _SGR_COLOUR:
        for style in (word, f"bold {word}", f"white on {word}", f"bold {word} on {word}"):
            bold, fg, bg = _sgr_style(style)
            codes = ";".join([*(["1"] if bold else []), *([str(fg)] if fg else []), *([str(bg)] if bg else [])])
            assert codes == Style.parse(style)._make_ansi_codes(ColorSystem.STANDARD), style
    assert _sgr_style("blue") is None and _sgr_style("italic red") is None  # left to rich


def test_nested_and_overlapping_styles_split_where_rich_splits():
    badge = Line(" BROKEN ", style="bold white on red")
    lines = [Line().append(badge).append(" ").append("headline", style="bold"),
             Line("  1. ", style="bold").append("[0.83] ", style="bold").append("title"),
             Line("base grey ", style="grey50").append("cyan on top", style="cyan").append(Line("nested", style="red bold")),
             Line("", style="green").append("").append("x", style="").append(Line("", style="red")).append("y", style="blue"),
             Line("   ").append("cite.log:12", style="cyan")]
    for line in lines:
        for color in (False, True):
            mine, theirs = io.StringIO(), io.StringIO()
            _Direct(mine, 80, color).print(line, soft_wrap=True)
            _console(theirs, 80, color).print(line.rich(), soft_wrap=True)
            assert mine.getvalue() == theirs.getvalue(), line.plain


def test_short_lines_without_soft_wrap_and_with_it():
    for soft in (False, True):
        for text in ("Seen at     ", "  … and 3 more", "w" * 39, "w" * 41, "w w " * 30):
            for color in (False, True):
                mine, theirs = io.StringIO(), io.StringIO()
                _Direct(mine, 40, color).print(Line(text, style="grey50"), soft_wrap=soft)
                _console(theirs, 40, color).print(Line(text, style="grey50").rich(), soft_wrap=soft)
                assert mine.getvalue() == theirs.getvalue(), (soft, text, color)


def test_the_component_table_comes_from_rich():
    """A report with a components table (no cascade) still reads the same both ways."""
    rep = report("example:peermem-race")
    rep = dataclasses.replace(rep, extras={k: v for k, v in rep.extras.items() if k != "cascade_text"})
    for color in (False, True):
        plain, rich = both(rep, width=100, color=color)
        assert plain == rich and "Components" in plain and "nvidia-driver-" in plain
