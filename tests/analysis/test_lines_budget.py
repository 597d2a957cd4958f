"""The run's budget of logs read in full (analysis/engine.py LOG_BYTES_IN_FULL): past it, a further log of more
than a few hundred lines keeps only the lines that matter, so a gigabyte of logs each under KEEP_ALL_LINES stays
bounded too; the report says so once, and the diagnosis is the one the logs read whole give."""

from __future__ import annotations

from gpusleuth.analysis import engine
from gpusleuth.analysis.diagnose import build_facts, diagnose
from gpusleuth.model.logs import ContainerLog
from gpusleuth.sources import open_source

PLUGIN = "[pod/nvidia-device-plugin-daemonset-{i:02d}/nvidia-device-plugin] "
TICK = "I0601 11:{m:02d}:{s:02d}.000000       1 health.go:120] device health check passed (pass {n})"
FATAL = ("E0601 11:59:58.000000       1 main.go:132] error starting plugins: error creating plugin manager: unable to "
         "create plugin manager: platform detection failed")


def _fleet(root, logs: int = 6, lines: int = 3000):
    for i in range(logs):
        pre = PLUGIN.format(i=i)
        body = [pre + TICK.format(m=n // 60 % 60, s=n % 60, n=n) for n in range(lines)]
        if i == logs - 1:
            body.insert(lines // 2, pre + FATAL)
        (root / f"plugin-{i:02d}.log").write_text("\n".join(body) + "\n")


def _facts_of(report):
    return [(f.code, [e.cite() for e in f.evidence]) for f in report.findings]


def test_past_the_budget_a_log_keeps_what_matters_and_the_diagnosis_is_the_same(tmp_path, monkeypatch):
    _fleet(tmp_path)
    whole = diagnose(open_source(str(tmp_path)))
    monkeypatch.setattr(engine, "LOG_BYTES_IN_FULL", 1)  # the first log spends it
    kept = diagnose(open_source(str(tmp_path)))
    budget = [g for g in kept.gaps if "logs read in full passed" in g.why]
    assert len(budget) == 1 and budget[0].artifact.endswith("plugin-01.log")
    logs = build_facts(open_source(str(tmp_path))).all(ContainerLog)
    assert [(log.artifact, log.total_lines) for log in logs] == [("plugin-00.log", None)] + [
        (f"plugin-{i:02d}.log", 3000 + (i == 5)) for i in range(1, 6)]
    assert {log.edges for log in logs[1:]} == {50}
    assert all(len(log.lines) <= 101 for log in logs[1:])
    assert not [g for g in whole.gaps if g.what == "big log"]
    assert _facts_of(kept) == _facts_of(whole) and any("main.go:132" in str(f.evidence) for f in kept.findings)
    assert kept.verdict == whole.verdict


def test_short_logs_are_read_whole_however_the_budget_stands(tmp_path, monkeypatch):
    _fleet(tmp_path, lines=300)
    monkeypatch.setattr(engine, "LOG_BYTES_IN_FULL", 1)
    r = diagnose(open_source(str(tmp_path)))
    assert not [g for g in r.gaps if g.what == "big log"]


def test_a_fleet_of_big_logs_is_one_gap_with_the_totals(tmp_path, monkeypatch):
    _fleet(tmp_path, logs=12)
    monkeypatch.setattr(engine, "LOG_BYTES_IN_FULL", 1)
    big = [g for g in diagnose(open_source(str(tmp_path))).gaps if g.what == "big log" and "read in full" not in g.why]
    assert len(big) == 1 and big[0].artifact is None
    assert big[0].why.startswith("11 big logs, 33,001 lines in all, ") and "first and last 50" in big[0].why
    assert big[0].why.endswith("plugin-01.log, plugin-02.log, plugin-03.log and 8 more")
