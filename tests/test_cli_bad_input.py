"""Bad input never reaches a user as a traceback: a one-line message naming the input and exit 2, or a
partial diagnosis whose gaps name what could not be read. Runs the real console entry point."""

import gzip
import io
import json
import os
import subprocess
import sys
import tarfile

import pytest

from gpusleuth.sources import examples_root


def run(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "gpusleuth", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "GPUSLEUTH_DEBUG": ""}, timeout=120)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr
    return proc


@pytest.mark.parametrize("content", [b"", b"\x00\x01\x02\xff" * 4096, b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64, b"\n \n\t\n"])
def test_unreadable_single_file_exits_2_naming_it(tmp_path, content):
    f = tmp_path / "thing.dat"
    f.write_bytes(content)
    proc = run("diagnose", str(f))
    assert proc.returncode == 2
    line = proc.stderr.strip().splitlines()
    assert len(line) == 1 and "thing.dat" in line[0]


@pytest.mark.parametrize("content, why", [(b"", "empty file"), (b"\x00\x01\x02\xff" * 4096, "binary file")])
def test_node_option_on_unreadable_input_says_why_it_is_unreadable(tmp_path, content, why):
    """--node NAME of an empty or binary file: what is wrong is the input, not the node's name."""
    f = tmp_path / "thing.dat"
    f.write_bytes(content)
    proc = run("diagnose", str(f), "--node", "gpu-node-1")
    assert proc.returncode == 2 and why in proc.stderr and "no node" not in proc.stderr, proc.stderr


def test_words_are_read_as_prose_not_refused(tmp_path):
    """Only empty or binary input is unreadable: any text is at least prose, and the report says it was only that."""
    f = tmp_path / "thing.dat"
    f.write_bytes(b"just some words\n" * 3)
    proc = run("diagnose", str(f), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [a["kind"] for a in report["artifacts"]] == ["prose"]
    assert any("read as prose only" in g for g in report["gaps"])


def test_empty_directory_and_missing_path_exit_2(tmp_path):
    assert run("diagnose", str(tmp_path)).returncode == 2
    proc = run("diagnose", str(tmp_path / "nope"))
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_corrupt_archive_exits_2_naming_it(tmp_path):
    f = tmp_path / "bundle.tar.gz"
    f.write_bytes(gzip.compress(b"not a tar at all" * 100)[:50])
    proc = run("diagnose", str(f))
    assert proc.returncode == 2 and "bundle.tar.gz" in proc.stderr


def test_partial_diagnosis_with_garbage_beside_real_artifacts(tmp_path):
    src = examples_root() / "device-plugin-unregistered"
    for p in src.iterdir():
        (tmp_path / p.name).write_bytes(p.read_bytes())
    (tmp_path / "core.dump").write_bytes(b"\x7fELF" + b"\x00" * 5000)
    (tmp_path / "broken.toml").write_text('version = 2\n[plugins."io.containerd.grpc.v1.cri"\nfoo = \n', encoding="utf-8")
    (tmp_path / "huge.log").write_text("E" * 200_000 + "\n", encoding="utf-8")
    cut = (tmp_path / "describe-node.txt").read_text(encoding="utf-8")
    (tmp_path / "describe-node-cut.txt").write_text(cut[: len(cut) // 3], encoding="utf-8")
    proc = run("diagnose", str(tmp_path), "--format", "json")
    assert proc.returncode == 1
    rep = json.loads(proc.stdout)
    assert rep["root_causes"][0]["code"] == "DP001"
    gaps = " ".join(rep["gaps"])
    assert "core.dump" in gaps and "binary" in gaps
    assert "huge.log" in gaps


def test_hostile_tar_members_are_gaps_and_nothing_is_written(tmp_path):
    arc = tmp_path / "evil.tgz"
    src = examples_root() / "device-plugin-unregistered"
    with tarfile.open(arc, "w:gz") as tf:
        for p in src.iterdir():
            tf.add(p, arcname=f"incident/{p.name}")
        info = tarfile.TarInfo("../../../tmp/gpusleuth-pwned")
        data = b"owned\n"
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    proc = run("diagnose", str(arc), "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1
    assert any("escapes the archive" in g for g in json.loads(proc.stdout)["gaps"])
    assert not os.path.exists("/tmp/gpusleuth-pwned")


def test_unknown_example_and_check_code_are_usage_errors():
    assert run("diagnose", "example:nope").returncode == 2
    proc = run("explain", "ZZ999")
    assert proc.returncode == 2 and "ZZ999" in proc.stderr


def test_unwritable_output_is_a_clean_error(tmp_path):
    proc = run("diagnose", "example:device-plugin-unregistered", "-o", str(tmp_path / "no" / "such" / "dir" / "r.md"))
    assert proc.returncode == 2 and "cannot write" in proc.stderr


def test_ctrl_c_ends_with_130_and_one_line(monkeypatch):
    """As docs/report.md says: interrupted is exit code 130 and a line saying so, not click's "Aborted!" and 1."""
    from click.testing import CliRunner

    import gpusleuth.analysis.diagnose as pipeline
    from gpusleuth.cli import cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "diagnose", interrupted)
    result = CliRunner().invoke(cli, ["diagnose", "example:peermem-race"])
    assert result.exit_code == 130 and "gpusleuth: interrupted" in result.output and "Aborted" not in result.output
