"""Directories, archives and examples: hostile or broken input becomes gaps, never a crash."""

import gzip
import io
import tarfile
import zipfile

import pytest

from gpusleuth.sources import SourceError, open_source
from gpusleuth.sources import loose


def _tar(path, members):
    with tarfile.open(path, "w:gz") as tf:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            if kind == "symlink":
                info.type = tarfile.SYMTYPE
                info.linkname = "/etc/shadow"
                tf.addfile(info)
            else:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))


def test_directory_reads_text_and_lists_unreadable_files(tmp_path):
    (tmp_path / "pods.txt").write_text("NAME READY STATUS\n")
    (tmp_path / "core.bin").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "empty.log").write_bytes(b"")
    src = open_source(str(tmp_path))
    assert [d.artifact for d in src.documents] == ["pods.txt"]
    gaps = {g.artifact: g.why for g in src.gaps}
    assert "binary" in gaps["core.bin"] and gaps["empty.log"] == "empty file"


def test_tar_with_escaping_member_and_symlink_is_read_safely(tmp_path):
    arc = tmp_path / "bundle.tgz"
    _tar(arc, [("incident/pods.txt", b"NAME READY\n", "file"), ("../../evil.txt", b"x\n", "file"), ("incident/link", b"", "symlink")])
    src = open_source(str(arc))
    assert [d.artifact for d in src.documents] == ["pods.txt"]
    whys = " ".join(g.why for g in src.gaps)
    assert "escapes the archive" in whys and "link" in whys
    assert not (tmp_path.parent / "evil.txt").exists()


def test_truncated_archive_keeps_what_was_read(tmp_path):
    good = tmp_path / "good.tgz"
    _tar(good, [("a.txt", b"first file\n" * 10, "file"), ("b.txt", b"second file\n" * 5000, "file")])
    cut = tmp_path / "cut.tgz"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    src = open_source(str(cut))
    partial = [g for g in src.gaps if g.what == "partial-input"]
    assert partial and any("truncated or corrupt" in g.why for g in partial)
    assert [d.artifact for d in src.documents][:1] == ["a.txt"]


def test_corrupt_zip_member_is_partial_input(tmp_path):
    arc = tmp_path / "bundle.zip"
    with zipfile.ZipFile(arc, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("pods.txt", "NAME READY STATUS\n" * 200)
        zf.writestr("nodes.txt", "NAME STATUS\n" * 200)
    data = bytearray(arc.read_bytes())
    at = data.index(b"pods.txt") + len(b"pods.txt") + 5  # inside the first member's compressed bytes
    data[at:at + 20] = b"\xff" * 20
    arc.write_bytes(bytes(data))
    src = open_source(str(arc))
    assert any(g.what == "partial-input" and g.artifact == "pods.txt" for g in src.gaps), src.gaps


def test_truncated_gzip_file_keeps_its_head_and_says_it_was_cut(tmp_path):
    whole = gzip.compress("".join(f"[{i}.000000] NVRM: line {i}\n" for i in range(20000)).encode())
    (tmp_path / "dmesg.log.gz").write_bytes(whole[: len(whole) // 2])
    src = open_source(str(tmp_path))
    assert src.documents and src.documents[0].artifact == "dmesg.log"
    assert 0 < len(src.documents[0].lines) < 20000
    gap = next(g for g in src.gaps if g.what == "partial-input")
    assert gap.artifact == "dmesg.log" and "cut short" in gap.why


def test_not_an_archive_is_a_source_error(tmp_path):
    bad = tmp_path / "x.tar.gz"
    bad.write_bytes(b"this is not gzip")
    with pytest.raises(SourceError, match="x.tar.gz"):
        open_source(str(bad))


def test_zip_bomb_stops_at_the_guard(tmp_path, monkeypatch):
    monkeypatch.setattr(loose, "ARCHIVE_GUARD_BYTES", 1000)
    arc = tmp_path / "bomb.zip"
    with zipfile.ZipFile(arc, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(5):
            zf.writestr(f"f{i}.txt", "A" * 600)
    src = open_source(str(arc))
    assert len(src.documents) == 1
    assert any(g.what == "partial-input" and "archive bombs" in g.why for g in src.gaps)


def test_large_file_is_read_whole_by_default(tmp_path, monkeypatch):
    from gpusleuth.sources import text

    monkeypatch.setattr(text, "CHUNK", 4096)  # many chunks, so that the streamed reading is what is tested
    body = "".join(f"line {i} é\n" for i in range(100_000))
    (tmp_path / "big.log").write_text(body, encoding="utf-8")
    src = open_source(str(tmp_path))
    lines = src.documents[0].lines
    assert len(lines) == 100_000 and lines[-1] == "line 99999 é" and lines[4567] == "line 4567 é"
    assert not [g for g in src.gaps if g.what == "partial-input"]


def test_max_bytes_cuts_a_file_and_says_so(tmp_path):
    (tmp_path / "big.log").write_text("line\n" * 1000)
    (tmp_path / "small.log").write_text("line\n" * 3)
    src = open_source(str(tmp_path), max_bytes=100)
    assert len(src.documents[0].lines) == 20
    partial = [g for g in src.gaps if g.what == "partial-input"]
    assert [g.artifact for g in partial] == ["big.log"] and "--max-bytes 100 bytes" in partial[0].why


def test_stdin_is_read_as_one_pasted_file(tmp_path):
    paste = b"> $ kubectl get pods -n gpu-operator\r\n> NAME READY STATUS\r\n> nvidia-driver-x 0/1 CrashLoopBackOff\r\n"
    (tmp_path / "paste.txt").write_bytes(paste)
    piped = open_source("-", stdin=io.BytesIO(paste))
    filed = open_source(str(tmp_path / "paste.txt"))
    assert piped.kind == "file" and [d.artifact for d in piped.documents] == ["stdin"]
    assert [(d.lines, d.first_line, d.command) for d in piped.documents] == [(d.lines, d.first_line, d.command) for d in filed.documents]


def test_stdin_tar_stream_is_read_as_an_archive(tmp_path):
    arc = tmp_path / "b.tgz"
    _tar(arc, [("incident/pods.txt", b"NAME READY\n", "file"), ("incident/nodes.txt", b"NAME STATUS\n", "file")])
    src = open_source("-", stdin=io.BytesIO(arc.read_bytes()))
    assert src.kind == "archive" and sorted(d.artifact for d in src.documents) == ["nodes.txt", "pods.txt"]
    gz = open_source("-", stdin=io.BytesIO(gzip.compress(b"NAME READY\n")))
    assert [d.artifact for d in gz.documents] == ["stdin"]


def test_a_fifo_is_read_as_a_stream_under_its_name(tmp_path):
    import os
    import threading

    fifo = tmp_path / "pods.pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(b"NAME READY STATUS\n"))
    writer.start()
    src = open_source(str(fifo))
    writer.join()
    assert [d.artifact for d in src.documents] == ["pods.pipe"] and src.documents[0].lines == ("NAME READY STATUS",)


def test_gzipped_artifact_is_decompressed(tmp_path):
    (tmp_path / "nvidia-bug-report.log.gz").write_bytes(gzip.compress(b"NVRM: loading NVIDIA UNIX Open Kernel Module\n"))
    src = open_source(str(tmp_path))
    assert src.documents[0].artifact == "nvidia-bug-report.log"


def test_missing_path_and_unknown_example_name_the_input():
    with pytest.raises(SourceError, match="no such file"):
        open_source("/nonexistent/incident")
    with pytest.raises(SourceError, match="no bundled example named 'nope'"):
        open_source("example:nope")
