"""The live commands end to end: collect, diagnose without SOURCE, serve."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

from click.testing import CliRunner

from gpusleuth.cli import cli
from tests.live.helpers import serving

SEED003 = Path(__file__).parents[1] / "fixtures" / "seed003"
SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_collect_then_diagnose_the_bundle_equals_diagnosing_live(small_cluster, tmp_path):
    runner = CliRunner()
    with serving(small_cluster) as srv:
        out = runner.invoke(cli, ["collect", "--server", srv.url, "-o", str(tmp_path / "b"), "--format", "json"])
        assert out.exit_code == 0, out.output
        summary = json.loads(out.output)
        live = runner.invoke(cli, ["diagnose", "--server", srv.url, "--format", "json"])
        asked = len(srv.app.log)
        again = runner.invoke(cli, ["collect", "--server", srv.url, "-o", str(tmp_path / "b")])
        assert len(srv.app.log) == asked  # refused before a single request: no collection lost to a name
    assert summary["bundle"] == str(tmp_path / "b") and summary["redacted"] == 4
    assert len(summary["gaps"]) == 1 and summary["gaps"][0].startswith("node files: not read")  # no --node-probes, and said so
    assert (tmp_path / "b" / "manifest.json").is_file()
    offline = runner.invoke(cli, ["diagnose", str(tmp_path / "b"), "--format", "json"])
    a, b = json.loads(live.output), json.loads(offline.output)
    assert a["source"]["kind"] == "live" and b["source"]["kind"] == "bundle"
    for key in ("verdict", "headline", "root_causes", "findings", "components", "gaps", "artifacts"):
        assert a[key] == b[key], key
    assert again.exit_code == 2 and "exists" in again.output


def test_diagnose_without_a_reachable_cluster_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nope"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    out = CliRunner().invoke(cli, ["diagnose"])
    assert out.exit_code == 2 and "no usable Kubernetes configuration" in out.output


def test_serve_command_serves_a_folder_until_interrupted():
    proc = subprocess.Popen([sys.executable, "-m", "gpusleuth", "serve", str(SEED003), "--port", "0"],
                            env={**os.environ, "PYTHONPATH": SRC}, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()
        url = first.split(" at ", 1)[1].split()[0]
        with urllib.request.urlopen(url + "/api/v1/namespaces/default/pods/gpu-textgen", timeout=10) as resp:
            pod = json.loads(resp.read())
        assert pod["spec"]["nodeName"] == "192-18-132-31" and pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating"
    finally:
        proc.terminate()
        proc.wait(10)


def test_unreachable_cluster_is_one_clear_line():
    out = CliRunner().invoke(cli, ["diagnose", "--server", "http://127.0.0.1:9", "--request-timeout", "1"])
    assert out.exit_code == 2
    assert out.output.startswith("gpusleuth: cannot read the cluster: cluster version (GET /version): connection failed")


def test_faults_file(tmp_path):
    import pytest

    from gpusleuth.serve.faults import Faults

    good = tmp_path / "faults.yaml"
    good.write_text('faults:\n  - path: "/secrets$"\n    status: 403\n  - path: "^/api/v1/pods$"\n    status: 429\n    retry_after: 1\n    times: 2\n')
    faults = Faults.load(good)
    assert [(f.status, f.times) for f in faults.faults] == [(403, None), (429, 2)]
    assert faults.match("GET", "/api/v1/namespaces/x/secrets", "").status == 403
    assert faults.match("GET", "/api/v1/pods", "limit=5").retry_after == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text("faults:\n  - pathh: x\n")
    with pytest.raises(ValueError, match="bad fault"):
        Faults.load(bad)
