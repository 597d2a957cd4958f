"""Where the input comes from and how much of it was read: stdin and pipes, partial input, --fail-on,
an empty folder. Runs the real console entry point."""

import json
import os
import subprocess
import sys
import tarfile

import pytest

from gpusleuth.sources import examples_root

EXAMPLE = examples_root() / "device-plugin-unregistered"


def run(*args, stdin=subprocess.DEVNULL, data=None, shell=None):
    cmd = shell if shell is not None else [sys.executable, "-m", "gpusleuth", *args]
    proc = subprocess.run(cmd, capture_output=True, input=data, stdin=None if data is not None else stdin,
                          env={**os.environ, "GPUSLEUTH_DEBUG": ""}, timeout=120, shell=shell is not None)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc


def report(proc) -> dict:
    return json.loads(proc.stdout)


def _comparable(rep: dict) -> list:
    return [(f["id"], f["title"], [(e["line"], e["text"]) for e in f["evidence"]]) for f in rep["findings"]]


def test_dash_reads_stdin_as_one_pasted_file():
    paste = (EXAMPLE / "get-pods.txt").read_bytes()
    filed = report(run("diagnose", str(EXAMPLE / "get-pods.txt"), "--format", "json"))
    piped = run("diagnose", "-", "--format", "json", data=paste)
    got = report(piped)
    assert got["source"]["kind"] == "file" and {a["artifact"] for a in got["artifacts"]} == {"stdin"}
    assert _comparable(got) == _comparable(filed) and got["findings"]
    assert all(e["artifact"] == "stdin" for f in got["findings"] for e in f["evidence"])


def test_piping_into_a_bare_diagnose_reads_the_paste_not_the_cluster():
    paste = (EXAMPLE / "describe-node.txt").read_bytes()
    proc = run("diagnose", "--format", "json", data=paste)
    assert proc.returncode == 1, proc.stderr.decode()
    got = report(proc)
    assert got["source"]["description"] == "stdin" and got["root_causes"][0]["code"] == "DP001"


def test_dev_stdin_from_a_pipe_and_from_a_redirected_file(tmp_path):
    paste = (EXAMPLE / "describe-node.txt").read_bytes()
    piped = run("diagnose", "/dev/stdin", "--format", "json", data=paste)
    assert piped.returncode == 1 and report(piped)["root_causes"][0]["code"] == "DP001"
    (tmp_path / "paste.txt").write_bytes(paste)
    with open(tmp_path / "paste.txt", "rb") as fh:
        redirected = run("diagnose", "/dev/stdin", "--format", "json", stdin=fh)
    assert redirected.returncode == 1 and report(redirected)["root_causes"][0]["code"] == "DP001"


def test_a_tar_stream_on_stdin_is_read_as_an_archive(tmp_path):
    arc = tmp_path / "incident.tgz"
    with tarfile.open(arc, "w:gz") as tf:
        for p in EXAMPLE.iterdir():
            tf.add(p, arcname=f"incident/{p.name}")
    direct = report(run("diagnose", str(EXAMPLE), "--format", "json"))
    piped = report(run("diagnose", "-", "--format", "json", data=arc.read_bytes()))
    assert [f["id"] for f in piped["root_causes"]] == [f["id"] for f in direct["root_causes"]]


def test_bare_diagnose_with_nothing_on_stdin_goes_to_the_live_path():
    proc = run("diagnose", "--server", "http://127.0.0.1:9", "--request-timeout", "1")  # stdin is /dev/null
    assert proc.returncode == 2 and b"cannot read the cluster" in proc.stderr


def test_empty_stdin_says_nothing_to_read():
    proc = run("diagnose", "-", data=b"")
    assert proc.returncode == 2 and proc.stderr.decode().strip() == "gpusleuth: nothing came on standard input (pipe or paste the output into it, or give a SOURCE)"


def test_truncated_archive_is_partial_input_with_a_warning(tmp_path):
    arc = tmp_path / "incident.tar.gz"
    with tarfile.open(arc, "w:gz") as tf:
        for p in sorted(EXAMPLE.iterdir()):
            tf.add(p, arcname=p.name)
    whole = arc.read_bytes()
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole[: int(len(whole) * 0.8)])
    proc = run("diagnose", str(cut), "--format", "json")
    gaps = report(proc)["gaps"]
    assert any("truncated or corrupt" in g for g in gaps)
    warning = [ln for ln in proc.stderr.decode().splitlines() if "warning" in ln]
    assert len(warning) == 1 and "partial input" in warning[0] and "truncated or corrupt" in warning[0]


def test_max_bytes_cut_is_partial_input_and_stated(tmp_path):
    for p in EXAMPLE.iterdir():
        (tmp_path / p.name).write_bytes(p.read_bytes())
    (tmp_path / "device-plugin.log").write_bytes((EXAMPLE / "device-plugin.log").read_bytes() * 50)
    proc = run("diagnose", str(tmp_path), "--format", "json", "--max-bytes", "64K")
    gaps = report(proc)["gaps"]
    assert any(g.startswith("device-plugin.log: cut at --max-bytes 64 KiB") for g in gaps), gaps
    assert b"partial input" in proc.stderr
    whole = run("diagnose", str(tmp_path), "--format", "json")
    assert not any("--max-bytes" in g for g in report(whole)["gaps"]) and b"partial input" not in whole.stderr
    assert run("diagnose", str(tmp_path), "--max-bytes", "lots").returncode == 2


@pytest.mark.parametrize("flag", ["--select", "--ignore"])
def test_select_or_ignore_naming_no_check_is_partial_input(flag):
    proc = run("diagnose", str(EXAMPLE), "--format", "json", flag, "KD00l")  # a typo: l for 1
    gaps = report(proc)["gaps"]
    assert any(g.startswith(f"partial-input: {flag} KD00l names no known check") for g in gaps), gaps
    assert b"partial input" in proc.stderr and b"KD00l" in proc.stderr
    fine = run("diagnose", str(EXAMPLE), "--format", "json", flag, "KD", flag, "kernel-driver")
    assert not any("names no known check" in g for g in report(fine)["gaps"]) and b"partial input" not in fine.stderr


def test_fail_on_moves_the_exit_code():
    rep = report(run("diagnose", str(EXAMPLE), "--format", "json"))
    worst = max({"critical": 3, "error": 2, "warning": 1, "info": 0}[f["severity"]] for f in rep["findings"])
    assert worst == 3
    for level, code in (("critical", 1), ("error", 1), ("warning", 1), ("info", 1), ("never", 0)):
        assert run("diagnose", str(EXAMPLE), "--format", "json", "--fail-on", level).returncode == code, level
    quiet = run("diagnose", str(EXAMPLE / "get-pods.txt"), "--format", "json", "--fail-on", "critical")
    worst_quiet = max(({"critical": 3, "error": 2, "warning": 1, "info": 0}[f["severity"]] for f in report(quiet)["findings"]), default=-1)
    assert quiet.returncode == (1 if worst_quiet >= 3 else 0)
    assert run("diagnose", str(EXAMPLE), "--fail-on", "sometimes").returncode == 2


def test_empty_folder_says_it_is_empty(tmp_path):
    (tmp_path / "sub").mkdir()
    proc = run("diagnose", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.decode().strip() == f"gpusleuth: {tmp_path}: the folder is empty, there is nothing to diagnose"
