"""Node probes: what the probe script prints, how it becomes artifacts, and that no probe pod ever survives."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpusleuth.cli import cli
from gpusleuth.live import probe_format, probes
from gpusleuth.live.api import Api
from gpusleuth.live.collect import Collector, Options
from gpusleuth.live.probe_format import Section
from gpusleuth.live.resources import BY_KIND
from gpusleuth.model.document import Document
from gpusleuth.serve.synthetic import build
from tests.live.helpers import FAST, serving

NS = "gpusleuth"
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _probe_pods(store):
    return [p["metadata"]["name"] for p in store.items(BY_KIND["Pod"], NS)]


def _cluster(nodes=3):
    st = build(nodes, log_lines=2, restart_every=0, cpu_nodes=0)
    st.node_files["gpu-node-0000"] = [
        Section("file", "/var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml", None,
                ["version = 2", '[plugins."io.containerd.grpc.v1.cri".containerd]', '  default_runtime_name = "runc"'], 0),
        Section("cmd", "lsmod.txt", "lsmod", ["Module                  Size  Used by", "nvidia_peermem         16384  0"], 0),
    ]
    return st


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_probe_script_reads_a_host_root(tmp_path):
    root = tmp_path / "host"
    (root / "etc/containerd/conf.d").mkdir(parents=True)
    (root / "etc/containerd/config.toml").write_text('version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n')
    (root / "etc/containerd/conf.d/99-nvidia.toml").write_text("no final newline")
    (root / "run/nvidia/validations").mkdir(parents=True)
    (root / "run/nvidia/validations/driver-ready").write_text("")
    (root / "etc/cdi").mkdir(parents=True)
    (root / "etc/cdi/nvidia.yaml").write_text("cdiVersion: 0.5.0\nkind: nvidia.com/gpu\n")
    out = subprocess.run(["sh", "-c", probes.script()], env={"GPUSLEUTH_PROBE_ROOT": str(root), "PATH": os.environ["PATH"]},
                         capture_output=True, text=True, timeout=60)
    parsed = probe_format.parse(out.stdout)
    files = {s.ref: s.lines for s in parsed.sections if s.kind == "file"}
    assert parsed.complete
    assert files["/etc/containerd/config.toml"] == ["version = 2", '[plugins."io.containerd.grpc.v1.cri"]']
    assert files["/etc/containerd/conf.d/99-nvidia.toml"] == ["no final newline"]
    assert files["/run/nvidia/validations/driver-ready"] == [] and "/etc/cdi/nvidia.yaml" in files
    assert "/run/mellanox/drivers/.driver-ready" in parsed.absent and "/etc/crio/crio.conf" in parsed.absent
    cmds = {s.ref: s for s in parsed.sections if s.kind == "cmd"}
    assert {"uname-r.txt", "dmesg-nvidia.txt", "processes.txt"} <= set(cmds)
    assert {"modinfo nvidia", "nvidia-smi -q -x", "mokutil --sb-state"} <= set(parsed.absent)  # no such program in this root: no error text
    listing = cmds["ls_run_nvidia_validations.txt"]
    assert len(listing.lines) == 1 and listing.lines[0].endswith(" /run/nvidia/validations/driver-ready") and listing.rc == 0
    assert cmds["ls_run_mellanox_drivers_.driver-ready.txt"].lines == ["ls: cannot access '/run/mellanox/drivers/.driver-ready': No such file or directory"]
    from gpusleuth.parsers.host_processes import parse_probe

    doc = Document("ls.txt", tuple(listing.lines + cmds["ls_run_mellanox_drivers_.driver-ready.txt"].lines), 1, command="ls -la /run/nvidia/validations/*")
    assert [(h.path, h.exists) for h in parse_probe.parse(doc)] == [("/run/nvidia/validations/driver-ready", True), ("/run/mellanox/drivers/.driver-ready", False)]


def test_probe_format_round_trip():
    sections = [Section("file", "/a", None, ["x", "", "y", ""], 0), Section("cmd", "n.txt", "uname -r", ["6.8.0"], 3)]
    back = probe_format.parse(probe_format.render(sections, ["/b"]))
    assert back.complete and back.absent == ["/b"]
    assert [(s.kind, s.ref, s.command, s.lines, s.rc) for s in back.sections] == [(s.kind, s.ref, s.command, s.lines, s.rc) for s in sections]
    cut = probe_format.parse("@@gpusleuth@@ begin file /a\nhalf")
    assert not cut.complete and cut.sections[0].rc is None and cut.sections[0].lines == ["half"]


def _run(url, options, cancel_at=None):
    """Collect; with cancel_at=k, cancel the whole run (as Ctrl-C does) when the k-th request starts."""

    class Interrupting(Api):
        async def request(self, *a, **kw):
            if cancel_at is not None and self.requests + 1 == cancel_at:
                main.cancel()
            return await super().request(*a, **kw)

    async def go():
        nonlocal main
        main = asyncio.current_task()
        base = Api.connect(server=url, retry=FAST, timeout=5)
        api = Interrupting(base._http, base.server, base.context, concurrency=8, retry=FAST)
        try:
            return await Collector(api, options).run()
        finally:
            await api.aclose()

    main = None
    return asyncio.run(go())


def test_probes_become_artifacts_and_are_deleted(monkeypatch):
    monkeypatch.setattr(probes, "POLL", 0.01)
    st = _cluster()
    with serving(st, probe_namespace=NS) as srv:
        col = _run(srv.url, Options(logs=False, node_probes=True, max_workers=2))
        assert _probe_pods(st) == []
        created = [p for m, p, s in srv.app.log if m == "POST"]
        deleted = [p for m, p, s in srv.app.log if m == "DELETE" and s == 200]
    assert len(created) == 3 and len(deleted) == 3
    art = {a.name: a for a in col.artifacts}
    cfg = art["nodes/gpu-node-0000/files/var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml"]
    assert cfg.record["command"] == "cat /var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml"
    assert cfg.record["path"] == "/var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml" and cfg.record["node"] == "gpu-node-0000"
    assert cfg.data.decode().splitlines()[2] == '  default_runtime_name = "runc"'
    assert art["nodes/gpu-node-0000/commands/lsmod.txt"].record["command"] == "lsmod"
    rec = col.manifest["probes"]
    assert rec["nodes"] == 3 and all(p["created"] and p["deleted"] for p in rec["pods"].values()) and "left_behind" not in rec
    pod = json.loads(json.dumps(probes.pod_spec("p", NS, "gpu-node-0000", "r1", "busybox:1.36", 150)))
    assert pod["spec"]["hostPID"] and pod["spec"]["containers"][0]["securityContext"]["privileged"]
    assert pod["spec"]["volumes"][0]["hostPath"]["path"] == "/" and pod["spec"]["containers"][0]["volumeMounts"][0]["readOnly"]
    assert pod["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpusleuth" and pod["metadata"]["labels"][probes.RUN_LABEL] == "r1"


def test_no_probe_pod_survives_an_interruption_at_any_request(monkeypatch):
    """Cancel the run (what Ctrl-C and SIGTERM do) as the 1st, 2nd, ... request starts, until a run ends by
    itself: the number of requests varies with timing (polls), so the loop goes until nothing is left to hit."""
    monkeypatch.setattr(probes, "POLL", 0.01)
    st = _cluster()
    runs_with_pods = 0
    with serving(st, probe_namespace=NS) as srv:
        for k in range(1, 400):
            before = len(srv.app.log)
            try:
                _run(srv.url, Options(logs=False, node_probes=True, max_workers=2), cancel_at=k)
            except (asyncio.CancelledError, KeyboardInterrupt):
                assert _probe_pods(st) == [], f"probe pod left after an interruption at request {k}"
                runs_with_pods += any(m == "POST" for m, _, _ in srv.app.log[before:])
                continue
            break
        else:
            pytest.fail("the run never completed")
        assert _probe_pods(st) == []
    assert k > 20 and runs_with_pods >= 10  # the interruptions did hit runs with probe pods alive


def test_a_probe_that_times_out_is_a_gap_and_its_pod_still_goes(monkeypatch):
    monkeypatch.setattr(probes, "POLL", 0.01)
    st = _cluster(nodes=1)
    with serving(st, probe_namespace=NS, probe_seconds=60) as srv:
        col = _run(srv.url, Options(logs=False, node_probes=True, probe_timeout=0.2))
        assert _probe_pods(st) == []
    assert [str(g) for g in col.gaps] == ["node probe on gpu-node-0000: timed out after 0s (pod Pending)"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signalled_collect_deletes_its_probes(tmp_path, sig):
    st = _cluster(nodes=4)
    with serving(st, probe_namespace=NS, probe_seconds=120) as srv:  # probes stay Pending: the run is waiting on them
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpusleuth", "collect", "--server", srv.url, "--node-probes", "--max-workers", "2", "--no-logs",
             "-o", str(tmp_path / "b.tar.gz")],
            env={**os.environ, "PYTHONPATH": SRC}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 30
            while len(_probe_pods(st)) < 2 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            assert len(_probe_pods(st)) == 2, proc.stderr.read().decode() if proc.poll() is not None else "no probes started"
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert _probe_pods(st) == [], err.decode()
    assert proc.returncode != 0 and not (tmp_path / "b.tar.gz").exists()


def test_cleanup_removes_what_a_killed_run_left_and_nothing_else():
    st = _cluster(nodes=1)
    for i in range(3):
        st.add(probes.pod_spec(f"gpusleuth-probe-dead-{i}", NS, "gpu-node-0000", "dead", "busybox:1.36", 150))
    st.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "not-ours", "namespace": NS, "labels": {"app": "x"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}})
    with serving(st, probe_namespace=NS) as srv:
        result = CliRunner().invoke(cli, ["cleanup", "--server", srv.url])
    assert result.exit_code == 0, result.output
    assert "deleted 3 probe pod(s)" in result.output
    assert _probe_pods(st) == ["not-ours"]
