"""Odd files as SOURCE or inside one: FIFOs and devices are refused without blocking, any directory depth
works, a few NUL bytes do not make a log binary, unreadable folders are gaps, UTF-16/32 without a BOM is read,
and a JSON document on one long line still parses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import build_facts
from gpusleuth.model.k8s import Pod
from gpusleuth.sources.loose import SourceError, open_source, read_directory
from gpusleuth.sources.text import MAX_LINE, decode

XID = "[Mon Sep 22 10:14:03 2025] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n"


def _cli(*args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    return subprocess.run([sys.executable, "-m", "gpusleuth", *args], capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_nothing_writes_to_is_refused_not_waited_on(tmp_path, monkeypatch):
    """A pipe is read as a stream (`<(kubectl get pods -A)`), but one nothing opens for writing is refused
    after FIFO_WAIT_S instead of blocking for ever."""
    from gpusleuth.sources import loose
    monkeypatch.setattr(loose, "FIFO_WAIT_S", 0.3)
    fifo = tmp_path / "pipe.tar.gz"
    os.mkfifo(fifo)
    t0 = time.perf_counter()
    with pytest.raises(SourceError, match="FIFO") as err:
        open_source(str(fifo))
    assert time.perf_counter() - t0 < 2.0 and str(fifo) in str(err.value)
    proc = _cli("diagnose", str(fifo))  # without the check this blocks until the timeout
    assert proc.returncode == 2 and str(fifo) in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_with_a_writer_is_still_read(tmp_path):
    import threading
    fifo = tmp_path / "dmesg.pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: (time.sleep(0.5), fifo.write_text(XID)))
    writer.start()
    src = open_source(str(fifo))
    writer.join()
    assert src.documents[0].lines == (XID.rstrip("\n"),)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_as_source_is_refused():
    proc = _cli("diagnose", "/dev/zero")  # in a subprocess: reading it never ends
    assert proc.returncode == 2 and "/dev/zero" in proc.stderr and "character device" in proc.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_inside_a_folder_is_a_gap_and_the_rest_is_read(tmp_path):
    os.mkfifo(tmp_path / "a-pipe")
    (tmp_path / "dmesg.txt").write_text(XID)
    t0 = time.perf_counter()
    src = read_directory(tmp_path)
    assert time.perf_counter() - t0 < 2.0
    assert any(g.artifact == "a-pipe" and "FIFO" in g.why for g in src.gaps)
    assert [d.artifact for d in src.documents] == ["dmesg.txt"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_swapped_in_after_the_listing_is_refused_unread(tmp_path, monkeypatch):
    """The open itself never blocks: O_NONBLOCK, then fstat on the open file."""
    from gpusleuth.sources import loose
    os.mkfifo(tmp_path / "late")
    with pytest.raises(loose.NotRegular, match="FIFO"):
        loose._open_regular(tmp_path / "late", follow=False)


def test_a_link_swapped_in_after_the_listing_is_not_followed(tmp_path):
    from gpusleuth.sources import loose
    (tmp_path / "secret").write_text("outside\n")
    os.symlink(tmp_path / "secret", tmp_path / "late")
    with pytest.raises(loose.NotRegular, match="symbolic link"):
        loose._open_regular(tmp_path / "late", follow=False)


def test_fifteen_hundred_nested_folders_are_walked(tmp_path):
    deep = tmp_path
    for _ in range(1500):  # os.makedirs recurses too
        deep = deep / "d"
        deep.mkdir()
    (deep / "dmesg.txt").write_text(XID)
    try:
        src = read_directory(tmp_path)
        assert [d.artifact for d in src.documents] == ["d/" * 1500 + "dmesg.txt"]
    finally:  # shutil.rmtree (pytest's clean-up) recurses too
        (deep / "dmesg.txt").unlink()
        while deep != tmp_path:
            deep.rmdir()
            deep = deep.parent


def test_a_kernel_log_with_a_few_nul_bytes_is_text_and_its_xid_is_found(tmp_path):
    (tmp_path / "dmesg.txt").write_bytes(b"[Mon Sep 22 10:14:01 2025] eth0: link up\n\x00\x00" + XID.encode())
    src = read_directory(tmp_path)
    assert [d.artifact for d in src.documents] == ["dmesg.txt"]
    assert any("NUL" in g.why for g in src.gaps)
    proc = _cli("diagnose", str(tmp_path), "--format", "json", timeout=60)
    report = json.loads(proc.stdout)
    cited = [e for f in report["findings"] for e in f.get("evidence", []) if e.get("artifact") == "dmesg.txt"]
    assert any("Xid" in e.get("text", "") and "79" in e.get("text", "") for e in cited), report["findings"]


def test_real_binaries_are_still_binary():
    assert decode(b"\x7fELF\x02\x01\x01\x00\x00\x00" * 50)[0] is None
    assert decode(Path(sys.executable).read_bytes()[:200_000])[0] is None
    assert decode(bytes(10_000))[0] is None


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_wide_text_without_a_bom_is_read(codec, tmp_path):
    (tmp_path / "dmesg.txt").write_bytes(XID.encode(codec))
    src = read_directory(tmp_path)
    assert not [g for g in src.gaps if g.artifact == "dmesg.txt"]
    assert src.documents[0].lines[0] == XID.rstrip("\n")


def test_utf32_with_a_bom_is_not_misread_as_utf16():
    text, why = decode("\ufeff".encode("utf-32-le") + "hello\n".encode("utf-32-le"))
    assert text == "hello\n" and why is None


def test_an_unreadable_folder_is_a_gap_naming_it(tmp_path, monkeypatch):
    """Tests run as root here, where chmod 000 does not stop a read: the refusal is simulated at the boundary."""
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "dmesg.txt").write_text(XID)
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "secret.txt").write_text("x\n")
    real = os.scandir

    def scandir(path="."):
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    src = read_directory(tmp_path)
    gap = next(g for g in src.gaps if g.artifact == "locked/")
    assert "Permission denied" in gap.why
    assert [d.artifact for d in src.documents] == ["ok/dmesg.txt"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 folder anyway; the monkeypatched test covers it")
def test_a_chmod_000_folder_is_a_gap(tmp_path):
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "x.txt").write_text("x\n")
    os.chmod(tmp_path / "locked", 0)
    try:
        src = read_directory(tmp_path)
    finally:
        os.chmod(tmp_path / "locked", 0o755)
    assert any(g.artifact == "locked/" for g in src.gaps)


def test_minified_pod_list_longer_than_the_line_cut_is_parsed(tmp_path):
    pods = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"cuda-job-{i}", "namespace": "ml", "labels": {"app": "train", "pad": "x" * 200}},
             "spec": {"nodeName": "gpu-node-1", "containers": [{"name": "main", "image": "nvcr.io/nvidia/cuda:12.4.1-base"}]},
             "status": {"phase": "Pending"}} for i in range(200)]
    text = json.dumps({"apiVersion": "v1", "items": pods, "kind": "List", "metadata": {"resourceVersion": ""}}, separators=(",", ":"))
    assert len(text) > 4 * MAX_LINE and "\n" not in text
    (tmp_path / "pods.json").write_text(text + "\n")
    facts = build_facts(read_directory(tmp_path))
    names = sorted(p.name for p in facts.all(Pod))
    assert len(names) == 200 and "cuda-job-199" in names
    assert not any("cut" in g.why for g in facts.gaps)
