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
    assert any("truncated or corrupt" in g.why for g in src.gaps)


def test_not_an_archive_is_a_source_error(tmp_path):
    bad = tmp_path / "x.tar.gz"
    bad.write_bytes(b"this is not gzip")
    with pytest.raises(SourceError, match="x.tar.gz"):
        open_source(str(bad))


def test_zip_bomb_stops_at_the_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(loose, "MAX_TOTAL_BYTES", 1000)
    arc = tmp_path / "bomb.zip"
    with zipfile.ZipFile(arc, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(5):
            zf.writestr(f"f{i}.txt", "A" * 600)
    src = open_source(str(arc))
    assert len(src.documents) == 1
    assert any("MiB of content" in g.why for g in src.gaps)


def test_oversized_file_is_cut_and_said_so(tmp_path, monkeypatch):
    monkeypatch.setattr(loose, "MAX_FILE_BYTES", 100)
    (tmp_path / "big.log").write_text("line\n" * 1000)
    src = open_source(str(tmp_path))
    assert len(src.documents[0].lines) == 20
    assert any("only the first" in g.why for g in src.gaps)


def test_gzipped_artifact_is_decompressed(tmp_path):
    (tmp_path / "nvidia-bug-report.log.gz").write_bytes(gzip.compress(b"NVRM: loading NVIDIA UNIX Open Kernel Module\n"))
    src = open_source(str(tmp_path))
    assert src.documents[0].artifact == "nvidia-bug-report.log"


def test_missing_path_and_unknown_example_name_the_input():
    with pytest.raises(SourceError, match="no such file"):
        open_source("/nonexistent/incident")
    with pytest.raises(SourceError, match="no bundled example named 'nope'"):
        open_source("example:nope")
