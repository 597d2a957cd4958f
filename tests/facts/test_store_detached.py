"""A failed view is kept and re-raised without holding the frames it passed through, so a diagnosis's facts (its
documents and parsed lines) are freed when it ends rather than at the next cycle collection."""

from __future__ import annotations

import gc

import pytest

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.store import COMBINERS, Facts, _detached


class _Broken:
    pass


class _Odd(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a}+{b}")


def test_a_failed_view_is_raised_again_with_the_same_type_and_message(monkeypatch):
    calls = []

    def build(facts):
        calls.append(1)
        raise NotApplicable("nothing to combine")

    monkeypatch.setitem(COMBINERS, _Broken, build)
    facts = Facts()
    for _ in range(3):
        with pytest.raises(NotApplicable, match="nothing to combine"):
            facts.get(_Broken)
    assert calls == [1]  # built once, its failure kept


def test_the_kept_failure_holds_no_frame():
    def build(facts):
        raise ValueError("a bug in a combiner")

    COMBINERS[_Broken] = build
    try:
        facts = Facts()
        with pytest.raises(ValueError):
            facts.get(_Broken)
        with pytest.raises(ValueError):
            facts.get(_Broken)
        assert facts._failed[_Broken].__traceback__ is None
    finally:
        del COMBINERS[_Broken]


def test_an_exception_that_cannot_be_rebuilt_is_kept_as_it_is():
    odd = _Odd(1, 2)
    assert _detached(odd) is odd
    plain = KeyError("k")
    dup = _detached(plain)
    assert dup is not plain and type(dup) is KeyError and dup.args == plain.args


def test_a_diagnosis_leaves_no_cycle_holding_its_parsed_lines():
    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.sources import open_source

    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        report = diagnose(open_source("example:peermem-race"))
        assert report.findings
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        kinds = {type(o).__name__ for o in gc.garbage}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()
    assert not kinds & {"LogLine", "ContainerLog", "Document", "Facts", "Pod"}, sorted(kinds)
