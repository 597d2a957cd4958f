"""A short run of the structure-aware fuzzer (tests/hostile/fuzz.py) on every test run: fixed case numbers,
so a failure reproduces with `PYTHONPATH=src python tests/hostile/fuzz.py --only GEN --start N --runs 1`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import fuzz  # noqa: E402


@pytest.mark.parametrize("gen", sorted(fuzz.GENERATORS))
def test_a_short_fuzz_run_finds_nothing(gen):
    failures = [p for n in range(12) if (p := fuzz.run_case(gen, n, budget=20.0))]
    assert not failures, "\n\n".join(failures)


def test_the_fuzzer_notices_an_escaping_exception(monkeypatch):
    """The harness itself can fail: a parser that raises out of the pipeline is reported."""
    def boom(source):
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(fuzz, "build_facts", boom)
    problem = fuzz.run_case("long-lines", 0)
    assert problem and "escaped" in problem and "ZeroDivisionError" in problem
