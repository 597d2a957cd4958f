"""A small file read whole (sources/loose.py _Directory.contents, text.py read_whole) gives what reading it as a
stream gave: the same text, size, note and reason, whatever its bytes."""

from __future__ import annotations

import io
import os
import random

import pytest

from gpusleuth.sources import loose
from gpusleuth.sources.text import SMALL, read_pieces, read_whole

_PARTS = [b"2024-05-01T10:00:00.000000000Z ok\n", b"\x00", b"\r\n", b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf",
          b"\xff\xfe\x00\x00", b"\xe2\x82", b"\xac", b"\x01\x02", b"> quoted\n", "h\u00e9llo\n".encode("utf-16-le"),
          b"\t", b"GPU 0: x\n", b"\x1b[31m", b"\x80", b"a" * 300, b"\n" * 5]


def _cases():
    rnd = random.Random(14)
    yield b""
    yield b"\x00" * 100
    yield "x\u00e9\n".encode("utf-16") * 50
    yield "plain\n".encode("utf-32") * 10
    yield b"a\x00b\n" * 200
    yield b"y" * SMALL
    yield b"y" * (SMALL + 1)
    for _ in range(400):
        yield b"".join(rnd.choice(_PARTS) for _ in range(rnd.randrange(1, 40)))


def _answers(reads):
    return [(r.text, r.why, r.size, r.capped, r.note, r.more, type(r.error)) for r in reads]


@pytest.mark.parametrize("cap", [None, 0, 7, 1 << 20])
@pytest.mark.parametrize("piece,lines", [(16 << 20, 500_000), (None, 500_000), (64, 3)])
def test_read_whole_answers_as_read_pieces(cap, piece, lines):
    for data in _cases():
        assert _answers(read_whole(data, cap, piece, lines)) == _answers(read_pieces(io.BytesIO(data), cap, piece, lines)), data[:80]


def test_directory_hands_small_files_whole_and_big_ones_as_streams(tmp_path):
    (tmp_path / "small.log").write_bytes(b"one\n")
    (tmp_path / "edge.log").write_bytes(b"e" * SMALL)
    (tmp_path / "big.log").write_bytes(b"b" * (SMALL + 1))
    got = dict(zip(["big.log", "edge.log", "small.log"],
                   (fh for _n, fh in loose._Directory(tmp_path).contents([os.fspath(tmp_path / n) for n in ("big.log", "edge.log", "small.log")]))))
    assert got["small.log"] == b"one\n" and got["edge.log"] == b"e" * SMALL
    assert not isinstance(got["big.log"], bytes)  # a stream (closed once the next file is asked for)


def test_small_and_streamed_files_read_the_same(tmp_path, monkeypatch):
    rnd = random.Random(7)
    for i, data in enumerate(_cases()):
        if rnd.random() < 0.3:
            (tmp_path / f"f{i:03}.log").write_bytes(data)
    whole = loose.read_directory(tmp_path)
    a = [(d.artifact, d.lines, d.first_line, d.command) for d in whole.documents], whole.gaps
    monkeypatch.setattr(loose._Directory, "contents", loose._Container.opened)
    streamed = loose.read_directory(tmp_path)
    b = [(d.artifact, d.lines, d.first_line, d.command) for d in streamed.documents], streamed.gaps
    assert a == b and a[0]
