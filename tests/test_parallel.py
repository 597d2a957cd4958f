"""gpusleuth/parallel.py: how many processes parse, and never twice deep; `diagnose --jobs` for one run."""

from __future__ import annotations

import json
import os
import sys
import threading

import pytest
import yaml

from gpusleuth import parallel
from gpusleuth.parsers import yaml_lists

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform != "linux", reason="workers are forked")


def test_a_worker_never_forks_workers_of_its_own():
    with parallel.pool(1) as pool:
        assert pool.submit(parallel.cores).result() == 1


def test_off_the_main_thread_nothing_is_forked():
    got = []
    t = threading.Thread(target=lambda: got.append(parallel.cores()))
    t.start()
    t.join()
    assert got == [1]


def test_jobs_caps_the_processes(monkeypatch):
    monkeypatch.setattr(parallel, "JOBS", 1)
    assert parallel.cores() == 1
    monkeypatch.setattr(parallel, "JOBS", 64)
    assert parallel.cores() == len(os.sched_getaffinity(0))


def test_jobs_sets_the_processes_for_one_run(monkeypatch, tmp_path):
    """`diagnose --jobs 1` reads a big YAML List whole, `--jobs 3` in parts: the same report; the setting does not
    outlive the run."""
    from click.testing import CliRunner

    from gpusleuth.cli import cli

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: nothing to read in parts")
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"nvidia-driver-daemonset-{i:03d}", "namespace": "gpu-operator"},
             "spec": {"nodeName": f"gpu-node-{i:03d}", "containers": [{"name": "nvidia-driver-ctr", "image": "nvcr.io/nvidia/driver:570.158.01"}]},
             "status": {"phase": "Running", "containerStatuses": [{"name": "nvidia-driver-ctr", "ready": i % 7 != 0, "restartCount": i % 7 == 0 and 9,
                                                                   "state": {"waiting": {"reason": "CrashLoopBackOff"}} if i % 7 == 0 else {"running": {}}}]}}
            for i in range(60)]
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "items": pods, "kind": "List"}, sort_keys=True))
    monkeypatch.setattr(yaml_lists, "PARALLEL_BYTES", 0)
    parts = []
    cut = yaml_lists.parts_for
    monkeypatch.setattr(yaml_lists, "parts_for", lambda doc: parts.append(p := cut(doc)) or p)
    out = {}
    for jobs in ("1", "3"):
        r = CliRunner().invoke(cli, ["diagnose", str(tmp_path / "pods.yaml"), "--format", "json", "--jobs", jobs], catch_exceptions=False)
        out[jobs] = json.loads(r.output)
        out[jobs]["source"].pop("analysed_at")
    assert out["1"] == out["3"] and out["1"]["findings"] and parallel.JOBS is None
    assert parts[0] is None and len(parts[1]) == min(3, len(os.sched_getaffinity(0)))
