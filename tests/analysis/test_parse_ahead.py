"""Big structured documents parsed in forked workers while ingest goes on (analysis/engine.py _Ahead): the run's
facts, and so its report, are those of reading one document after another, whatever is parsed where."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from corpus import TUNED

from gpusleuth import parallel
from gpusleuth.analysis import engine
from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.report.json_report import render
from gpusleuth.sources import open_source

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform != "linux", reason="workers are forked")


def _report(spec: str) -> dict:
    r = json.loads(render(diagnose(open_source(spec))))
    r["source"].pop("analysed_at")
    return r


_here: list[str] = []  # documents sent to a worker that were parsed here after all (the worker failed)


def _ahead(monkeypatch, cores: int = 3) -> list:
    """Every JSON or YAML document of any size goes to a worker while one is free; returns the documents sent."""
    sent = []
    monkeypatch.setattr(engine, "AHEAD_BYTES", 0)
    monkeypatch.setattr(parallel, "cores", lambda: cores)
    monkeypatch.setattr(engine, "_ingest_apart", _counted_apart)
    _here.clear()
    submit = engine._Ahead.ingest

    def ingest(self, doc):
        busy = self.busy
        out = submit(self, doc)
        if self.busy > busy:
            sent.append(doc.artifact)
        return out

    monkeypatch.setattr(engine._Ahead, "ingest", ingest)
    return sent


def _counted_apart(doc, score, kind):
    if not parallel._in_worker[0]:
        _here.append(doc.artifact)
    return _APART(doc, score, kind)


_APART = engine._ingest_apart


@pytest.mark.parametrize("spec", ["example:peermem-race", "example:containerd-wrong-instance", "example:device-plugin-unregistered",
                                  *(str(p / "full") for p in TUNED[:12])])
def test_the_report_is_the_one_of_reading_one_after_another(spec, monkeypatch):
    serial = _report(spec)
    sent = _ahead(monkeypatch)
    assert _report(spec) == serial
    assert not _here  # every document sent was parsed by a worker
    if spec == "example:peermem-race":
        assert sent  # the example's pods and nodes went to workers


def test_a_fleet_read_ahead_gets_the_same_report(tmp_path, monkeypatch):
    sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
    from bench_scale import generate

    generate(tmp_path / "fleet", 40)
    serial = _report(str(tmp_path / "fleet"))
    sent = _ahead(monkeypatch, cores=2)
    assert _report(str(tmp_path / "fleet")) == serial
    assert len(sent) >= 1 and not _here


def test_a_worker_that_fails_leaves_the_document_to_be_parsed_here(monkeypatch):
    serial = _report("example:peermem-race")
    sent = _ahead(monkeypatch)
    monkeypatch.setattr(engine, "_ingest_apart", _broken_in_worker)
    assert _report("example:peermem-race") == serial and sent and _here == sent


def _broken_in_worker(doc, score, kind):
    if parallel._in_worker[0]:
        raise RuntimeError("a worker that dies")
    return _counted_apart(doc, score, kind)


def test_a_worker_never_forks_workers_of_its_own():
    with parallel.pool(1) as pool:
        assert pool.submit(parallel.cores).result() == 1


def test_off_the_main_thread_nothing_is_forked():
    import threading

    got = []
    t = threading.Thread(target=lambda: got.append(parallel.cores()))
    t.start()
    t.join()
    assert got == [1]


def test_nothing_of_a_run_outlives_it_when_a_worker_failed(monkeypatch, tmp_path):
    """A failed worker's exception holds the frames it was raised through: the facts must not stay alive with them
    (diagnose pauses the cycle collector, so a cycle would keep the whole run's facts)."""
    import gc

    from gpusleuth.facts import Facts

    sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
    from bench_scale import generate

    generate(tmp_path / "fleet", 3)
    (tmp_path / "fleet/cluster/nodes.json").rename(tmp_path / "nodes.json")
    _ahead(monkeypatch)
    monkeypatch.setattr(engine, "_ingest_apart", _broken_in_worker)
    gc.collect()
    gc.disable()
    try:
        before = sum(isinstance(o, Facts) for o in gc.get_objects())
        diagnose(open_source(str(tmp_path / "nodes.json")))  # one document, sent to a worker that fails: the last one drained
        after = sum(isinstance(o, Facts) for o in gc.get_objects())
    finally:
        gc.enable()
    assert _here and after == before


def test_jobs_sets_the_processes_for_one_run(monkeypatch):
    """`diagnose --jobs 1` parses in this process alone, `--jobs 3` has workers: the same report; the setting does
    not outlive the run."""
    from click.testing import CliRunner

    from gpusleuth.cli import cli

    monkeypatch.setattr(engine, "AHEAD_BYTES", 0)
    seen = []
    init = engine._Ahead.__init__

    def record(self, facts):
        init(self, facts)
        seen.append(self.workers)

    monkeypatch.setattr(engine._Ahead, "__init__", record)
    out = {}
    for jobs in ("1", "3"):
        r = CliRunner().invoke(cli, ["diagnose", "example:peermem-race", "--format", "json", "--jobs", jobs], catch_exceptions=False)
        out[jobs] = json.loads(r.output)
        out[jobs]["source"].pop("analysed_at")
    assert out["1"] == out["3"] and parallel.JOBS is None
    assert seen == [0, min(3, len(os.sched_getaffinity(0))) - 1]
