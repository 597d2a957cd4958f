"""The text report on a terminal: the first screen at 80x24 holds what an on-call engineer acts on, nothing a user
needs is split or cut, and --width, --brief, --color and the pager behave as documented."""

import math
import re

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.cli import cli
from gpusleuth.model.report import VERDICTS
from gpusleuth.report.text import decisive, render
from gpusleuth.sources import example_names, open_source

EXAMPLES = example_names()
_REPORTS: dict = {}
SGR_ONLY = re.compile(r"^(?:\x1b\[[0-9;]*m|[^\x1b])*$", re.DOTALL)


def report(name):
    if name not in _REPORTS:
        _REPORTS[name] = diagnose(open_source(f"example:{name}"))
    return _REPORTS[name]


def first_screen(text: str, cols: int = 80, rows: int = 24) -> list[str]:
    """The lines a terminal of cols x rows shows first: a line longer than cols takes several rows."""
    shown, used = [], 0
    for line in text.splitlines():
        need = max(1, math.ceil(cell_len(line) / cols))
        if used + need > rows:
            break
        shown.append(line)
        used += need
    return shown


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_first_screen_at_80x24_holds_verdict_root_cause_its_line_and_first_fix(name):
    rep = report(name)
    assert rep.root_causes, "every bundled example has a root cause"
    top = rep.root_causes[0]
    screen = "\n".join(first_screen(render(rep, width=80)))
    assert VERDICTS[rep.verdict] in screen
    assert f"[{top.code}]" in screen and flat(top.title) in flat(screen)
    line = decisive(top)
    assert line is not None and any(line.cite() in ln for ln in screen.splitlines()), screen
    fix = top.fixes[0]
    assert fix.commands, "the first fix of every example has a command"
    assert any(ln.strip() == f"$ {fix.commands[0]}" for ln in screen.splitlines()), screen


@pytest.mark.parametrize("width", [60, 80, 100, 140])
@pytest.mark.parametrize("name", EXAMPLES)
def test_no_citation_or_command_is_split_and_no_timeline_message_is_cut(name, width):
    rep = report(name)
    text = render(rep, width=width)
    lines = text.splitlines()
    for f in rep.findings:
        for e in f.evidence[:3]:
            assert any(e.cite() in ln for ln in lines), (width, e.cite())
        for fx in (f.fixes if f in rep.root_causes else ()):
            for cmd in fx.commands:
                assert any(ln.strip() == f"$ {cmd.splitlines()[0]}" for ln in lines), (width, cmd)
    for v in (rep.extras.get("ordering") or {}).get("violations", []):
        for e in (v["then"], v["first"]):
            if e:
                assert f"{e['artifact']}:{e['line']}" in text
                assert flat(str(e["text"])) in flat(text), (width, e["text"])


def test_lines_keep_to_the_width_except_words_that_cannot_be_split():
    rep = report("peermem-race")
    text = render(rep, width=80)
    verbatim = {ln.strip() for f in rep.findings for fx in f.fixes for ln in (fx.snippet or "").splitlines()}
    verbatim |= {ln.strip() for ln in (rep.extras.get("cascade_text") or "").splitlines()}  # drawn, not prose
    for ln in text.splitlines():
        if cell_len(ln) > 80 and ln.strip() not in verbatim:
            # only a single word (a file name, a URL) or a command may run past the edge
            assert ln.strip().startswith("$ ") or " " not in ln.strip() or cell_len(ln.split()[-1]) > 40, ln


def invoke(*args, env=None):
    result = CliRunner().invoke(cli, ["diagnose", "example:peermem-race", *args], env={"COLUMNS": None, **(env or {})})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def rules(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("──")]


def test_width_flag_and_the_pipe_default():
    assert {cell_len(r) for r in rules(invoke("--width", "80").output)} == {80}
    assert {cell_len(r) for r in rules(invoke().output)} == {100}  # not a terminal: 100 columns
    assert {cell_len(r) for r in rules(invoke(env={"COLUMNS": "132"}).output)} == {132}


def test_brief_prints_only_the_summary():
    full, brief = invoke("--width", "80").output, invoke("--width", "80", "--brief").output
    assert "First fix" in brief and "Root cause" in brief and "Seen at" in brief
    assert "Cascade" not in brief and "Gaps" not in brief and "Cascade" in full
    assert full.startswith(brief.rstrip("\n").rsplit("\n", 1)[0])
    assert len(brief.splitlines()) <= 24
    assert brief.rstrip("\n").endswith("without --brief") and "below" not in brief  # nothing is below a --brief summary


def test_color_always_survives_a_pipe_never_and_auto_do_not_colour_it():
    always = invoke("--color", "always", "--brief").output
    assert "\x1b[" in always and SGR_ONLY.match(always), "colours, and only SGR sequences that less -R passes"
    assert invoke("--color", "--brief").output == always  # a bare --color means always
    before = CliRunner().invoke(cli, ["diagnose", "--color", "example:peermem-race", "--brief"], env={"COLUMNS": None})
    assert before.output == always  # also with SOURCE right after it, as when --color was a plain flag
    for args in (("--color", "never"), ("--no-color",), ()):
        assert "\x1b" not in invoke(*args, "--brief").output


@pytest.fixture
def tty(monkeypatch):
    monkeypatch.setattr("gpusleuth.cli.Screen.tty", lambda self, output: output is None)


def test_a_long_report_goes_through_the_pager_on_a_terminal(tty, tmp_path):
    paged = tmp_path / "paged.txt"
    env = {"PAGER": f"tee {paged} > /dev/null", "LINES": "24", "COLUMNS": "80"}
    res = invoke(env=env)
    assert res.output == "" and "In short" in paged.read_text()
    assert res.exit_code == 1  # the exit code is the report's, not the pager's


def test_no_pager_and_short_reports_print_directly(tty, tmp_path):
    paged = tmp_path / "paged.txt"
    env = {"PAGER": f"tee {paged} > /dev/null", "LINES": "24", "COLUMNS": "80"}
    assert "Cascade" in invoke("--no-pager", env=env).output and not paged.exists()
    assert "First fix" in invoke("--brief", env=env).output and not paged.exists()  # fits the screen
    assert "Cascade" in invoke(env={**env, "PAGER": "cat"}).output and not paged.exists()  # PAGER=cat: none, as git


def test_the_cli_at_80_columns_shows_the_same_first_screen():
    rep = report("peermem-race")
    top = rep.root_causes[0]
    screen = first_screen(invoke("--width", "80", env={"LINES": "24"}).output)
    joined = "\n".join(screen)
    assert VERDICTS[rep.verdict] in joined and f"[{top.code}]" in joined
    assert decisive(top).cite() in joined and f"$ {top.fixes[0].commands[0]}" in joined
