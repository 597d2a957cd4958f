"""The terminal report without colour is laid out by report/text.py itself, without rich: it must be, byte for
byte, what rich writes for the same lines (render(..., _via_rich=True) lays every line out with rich)."""

import dataclasses
import io

import pytest
from rich.console import Console

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.model.evidence import Evidence
from gpusleuth.report.text import Line, _Plain, render
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
def test_the_examples_read_the_same_with_and_without_rich(name, width, brief):
    plain, rich = both(report(f"example:{name}"), width=width, brief=brief)
    assert plain == rich


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
        plain, rich = both(rep, width=width)
        assert plain == rich
        assert "not markup" in plain and "\t" not in plain


@pytest.mark.parametrize("title", ["Notes", "In short", "Gaps: what could not be seen", "x" * 36, "y" * 37, "z" * 96,
                                   "", "[b]x[/b]", "宽 wide", "a\tb"])
@pytest.mark.parametrize("width", [40, 41, 42, 99, 100])
def test_a_rule_is_rich_s_rule(title, width):
    mine, theirs = io.StringIO(), io.StringIO()
    _Plain(mine, width).rule(title, style="grey50")
    Console(file=theirs, width=width, height=25, color_system=None, highlight=False, emoji=False,
            legacy_windows=False).rule(title, style="grey50")
    assert mine.getvalue() == theirs.getvalue()


def test_short_lines_without_soft_wrap_and_with_it():
    for soft in (False, True):
        for text in ("Seen at     ", "  … and 3 more", "w" * 39, "w" * 41, "w w " * 30):
            mine, theirs = io.StringIO(), io.StringIO()
            _Plain(mine, 40).print(Line(text, style="grey50"), soft_wrap=soft)
            Console(file=theirs, width=40, height=25, color_system=None, highlight=False, emoji=False,
                    legacy_windows=False).print(Line(text, style="grey50").rich(), soft_wrap=soft)
            assert mine.getvalue() == theirs.getvalue(), (soft, text)


def test_the_component_table_comes_from_rich():
    """A report with a components table (no cascade) still reads the same both ways."""
    rep = report("example:peermem-race")
    rep = dataclasses.replace(rep, extras={k: v for k, v in rep.extras.items() if k != "cascade_text"})
    plain, rich = both(rep, width=100)
    assert plain == rich and "─ Components ─" in plain and "nvidia-driver-" in plain
