"""The optional hyperscan scan of logs (facts/logs.py, extra `[fast]`) finds exactly what the re2.Set finds:
the same matches, line for line and in the same order, on the bundled examples' logs, on the incident
corpus's logs that are not held out, and on logs made to hit its edges. Skipped where the wheel is missing
(the re2 path is then the only one, and every other test exercises it)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import build_facts
from gpusleuth.facts import logs as logs_mod
from gpusleuth.facts.store import Facts
from gpusleuth.model.logs import ContainerLog, LogLine
from gpusleuth.sources import example_names, examples_root
from gpusleuth.sources.loose import read_directory

hyperscan = pytest.importorskip("hyperscan")
INCIDENTS = Path(__file__).parent.parent / "cases" / "incidents"


def _held_out(slug: str) -> bool:
    return int(hashlib.sha256(slug.encode()).hexdigest(), 16) % 3 == 0


def _matches(logs: list[ContainerLog], use_hyperscan: bool) -> list[tuple]:
    facts = Facts()
    for log in logs:
        facts.add(log)
    old = logs_mod.USE_HYPERSCAN, logs_mod.HYPERSCAN_MIN_LINES
    logs_mod.USE_HYPERSCAN, logs_mod.HYPERSCAN_MIN_LINES = use_hyperscan, 0  # whatever the logs' size
    try:
        view = logs_mod.build_logs(facts)
    finally:
        logs_mod.USE_HYPERSCAN, logs_mod.HYPERSCAN_MIN_LINES = old
    return [(m.log.artifact, m.line.line, m.line.message, m.signature.id) for m in view.all_matches()]


def _both(logs: list[ContainerLog]) -> list[tuple]:
    plain = _matches(logs, False)
    fast = _matches(logs, True)
    assert fast == plain
    return plain


def test_the_database_compiles_every_signature():
    assert logs_mod.hyperscan_database() is not None


@pytest.mark.parametrize("name", example_names())
def test_same_matches_on_the_bundled_examples(name):
    logs = build_facts(read_directory(examples_root() / name)).all(ContainerLog)
    assert logs
    _both(logs)  # (that the examples hold recognised lines at all: _known_lines below)


def test_same_matches_on_the_incident_corpus():
    dirs = [d / "full" for d in sorted(INCIDENTS.iterdir()) if (d / "full").is_dir() and not _held_out(d.name)]
    logs = [log for d in dirs for log in build_facts(read_directory(d)).all(ContainerLog)]
    if not logs:
        pytest.skip("no corpus logs in this checkout")
    assert _both(logs)


def _log(messages: list[str], artifact: str = "edge.log") -> ContainerLog:
    return ContainerLog(artifact, tuple(LogLine(artifact, i + 1, m, m) for i, m in enumerate(messages)))


def _known_lines() -> list[str]:
    """One line per signature that matches it, taken from the examples' logs."""
    out = []
    for name in example_names():
        for log in build_facts(read_directory(examples_root() / name)).all(ContainerLog):
            out += [ln.message for ln in log.lines]
    sigs, matcher = logs_mod.signatures()
    return [m for m in dict.fromkeys(out) if matcher.Match(m)][:40]


def test_same_matches_at_the_edges():
    known = _known_lines()
    assert known
    cases = [
        known[:1],  # a log of one matching line
        [known[0], "", "", known[1], ""],  # empty messages around matches, a match on the last line but one
        ["", known[2]],  # a match on the last line
        [known[3]] * 50 + ["nothing here"] * 50 + [known[3]],  # repeats (the memo) on both paths
        ["plain line", "another"],  # nothing matches
        [k[: len(k) // 2] for k in known] + [k.upper() for k in known] + known,  # halves, other case, whole
        [known[4] + " \u00e9\u4e2d\U0001f600", "\u00e9" + known[4]],  # multi-byte UTF-8 around a match
        ["first half\n" + known[5], known[6]],  # a message holding a newline: the re2 path for this log
        ["FAILED TO INITIALIZE NVML", "failed to initialize nvml", "nvml error: driver/library ver\u017fion mismatch",
         "Failed to initialize NVML: driver/library ver\u017fion mismatch"],  # (?i) signatures, Unicode folding
        [],
    ]
    for i, messages in enumerate(cases):
        _both([_log(messages, f"edge-{i}.log")])
    # and all of them together, in one view
    _both([_log(m, f"edge-{i}.log") for i, m in enumerate(cases)])


def test_candidates_are_lines_that_can_match():
    known = _known_lines()
    log = _log(["nothing", known[0], "nothing", "nothing", known[1]])
    assert logs_mod._candidates(logs_mod.hyperscan_database(), log) == [1, 4]


def test_small_logs_keep_the_re2_path(monkeypatch):
    """Below HYPERSCAN_MIN_LINES the database is not even compiled: its cost would exceed what it saves."""
    calls = []
    monkeypatch.setattr(logs_mod, "hyperscan_database", lambda: calls.append(1))
    facts = Facts()
    facts.add(_log(["plain line"] * 10))
    logs_mod.build_logs(facts)
    assert not calls
