"""The progress note a terminal sees while a big input is read and analysed (cli.py Progress)."""

from __future__ import annotations

import io

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.cli import Progress
from gpusleuth.sources import open_source


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_diagnose_tells_each_document_read_then_the_analysis():
    stages = []
    report = diagnose(open_source("example:peermem-race"), progress=stages.append)
    assert stages.count("reading") == report.source["documents"] and stages[-1] == "analysing"
    assert "analysing" not in stages[:-1]


def test_a_terminal_sees_files_read_of_files_listed_then_the_analysis_and_a_clean_line():
    src = open_source("example:peermem-race")
    out, clock = _Terminal(), _Clock()
    note = Progress(src, out, clock)
    docs = iter(src.documents)
    next(docs)
    note("reading")  # within the first second: nothing
    assert out.getvalue() == ""
    clock.now += 1.5
    next(docs)
    note("reading")
    assert out.getvalue().endswith(f"gpusleuth: reading 2 of {src.files:,} files")
    note("reading")  # again within 0.2 s: not rewritten
    assert out.getvalue().count("reading") == 1
    clock.now += 0.1
    note("analysing")
    assert out.getvalue().endswith("\r\x1b[Kgpusleuth: analysing")
    note.clear()
    assert out.getvalue().endswith("\r\x1b[K") and not note.shown


def test_nothing_when_stderr_is_not_a_terminal_or_the_run_is_quick():
    src = open_source("example:peermem-race")
    out, clock = io.StringIO(), _Clock()
    note = Progress(src, out, clock)
    clock.now += 5
    note("reading")
    note("analysing")
    note.clear()
    assert out.getvalue() == ""
    term = _Terminal()
    quick = Progress(src, term, _Clock())
    quick("analysing")
    quick.clear()
    assert term.getvalue() == ""
