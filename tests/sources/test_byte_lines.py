"""Big text kept as its UTF-8 bytes (sources/text.py ByteLines): it reads as normalise() would split it, the keep
scan over its bytes keeps the rows the scan over the joined lines keeps, shell prompts split it the same way, and a
diagnosis with every document held so is the diagnosis of the lines."""

from __future__ import annotations

import json

import pytest
from corpus import INFO, TUNED
from golden import example_dir, report

import gpusleuth.sources.text as text_mod
from gpusleuth.facts import logs as facts_logs
from gpusleuth.facts.logs import kept_rows
from gpusleuth.model.document import Document
from gpusleuth.parsers import logs as parsers_logs
from gpusleuth.parsers.logs import parse_log
from gpusleuth.sources.text import MAX_LINE, ByteLines, byte_lines, normalise, split_documents


INCIDENTS = TUNED[:12]


@pytest.fixture
def every_text(monkeypatch):
    """byte_lines() takes text of any size."""
    monkeypatch.setattr(text_mod, "BIG_TEXT", 0)
    monkeypatch.setattr(text_mod, "BIG_LINES", 0)


TEXTS = [
    "a\nb\n", "a\nb", "a\n\n", "\n", "\n\nx\n\n\n", "x",
    "é ü — ✓ 🚀\n\tindented\n{\"a\":\t1}\n  [\t1]\nab\tcd\tef\n",
    "\n".join(INFO.format(m=i % 10, s=i % 60, i=i) for i in range(3000)) + "\n",
    "".join(f"line {i}\t{'é' * (i % 7)}\n" for i in range(5000)),
    "x" * 4000 + "\n" + "y" * 4000,  # long lines (one of MAX_LINE // 2 bytes or more is read as lines: it may be cut)
]


@pytest.mark.parametrize("text", TEXTS)
def test_byte_lines_read_as_normalise_splits(text, every_text):
    want, _ = normalise(text)
    got = byte_lines(text)
    assert isinstance(got, ByteLines)
    assert len(got) == len(want)
    assert list(got) == want
    assert [got[i] for i in range(len(want))] == want
    assert [got[i] for i in reversed(range(len(want)))] == want[::-1]  # any order, across blocks
    assert got[-1] == want[-1]
    n = len(want)
    for a, b in ((0, 1), (0, n), (1, n), (n // 3, 2 * n // 3), (n - 1, n), (2, 2), (5, 1)):
        assert list(got[a:b]) == want[a:b], (a, b)
    assert list(got[::7]) == want[::7] and list(got[1::3]) == want[1::3]
    assert got == tuple(want) and tuple(want) == got
    for i in (0, n // 2, n - 1):
        assert got.data[got.offset(i):].decode().split("\n")[0] == text.split("\n")[i]


@pytest.mark.parametrize("text, why", [
    ("a\r\nb\n", "carriage return"), ("a\rb\n", "lone carriage return"),
    ("x\n```\ny\n", "fence"), ("x\n  ~~~ yaml\n", "fence"),
    ("> quoted\n> more\n", "quote"), ("x\n   > quoted\n", "quote"),
    ("x\n" + "z" * (MAX_LINE + 1) + "\n", "overlong line"),
    ("x\n" + "é" * (MAX_LINE // 2 + 10) + "\n", "overlong in bytes"),
])
def test_text_normalise_changes_is_not_kept_as_bytes(text, why, every_text):
    assert byte_lines(text) is None, why


def test_only_big_text_is_kept_as_bytes():
    small = "\n".join(INFO.format(m=1, s=1, i=i) for i in range(100))
    assert byte_lines(small) is None
    big = "\n".join(INFO.format(m=i % 10, s=i % 60, i=i) for i in range(30_000))
    assert len(big) > text_mod.BIG_TEXT and isinstance(byte_lines(big), ByteLines)
    few_long = "\n".join("x" * 8000 for _ in range(300))  # over BIG_TEXT, far under BIG_LINES lines
    assert byte_lines(few_long) is None


def _log_texts() -> list[str]:
    paths = [p for p in example_dir("peermem-race").iterdir() if p.suffix in (".log", ".descr")]
    paths += [p for d in INCIDENTS for p in (d / "full").rglob("*") if p.is_file()]
    return [p.read_text(encoding="utf-8", errors="replace") for p in sorted(paths)]


def test_the_scan_over_bytes_keeps_what_the_scan_over_lines_keeps(every_text):
    for text in _log_texts():
        lines, _ = normalise(text)
        big = byte_lines(text)
        if big is None:
            continue
        assert kept_rows(big, edges=0) == kept_rows(lines, edges=0)
        assert kept_rows(big) == kept_rows(lines)


def test_tabs_non_ascii_and_case_are_found_as_in_the_lines(every_text, monkeypatch):
    """Lines only found after tabs are expanded, matches after multi-byte characters, case-insensitive signatures,
    and blocks of CHUNK_LINES lines: the rows are those of the normalised lines."""
    monkeypatch.setattr(facts_logs, "CHUNK_LINES", 7)
    lines = [INFO.format(m=i % 10, s=i % 60, i=i) for i in range(100)]
    lines[10] = "ünïcödé → Failed to initialize NVML: Driver/library version mismatch"
    lines[20] = "É FAILED TO INITIALIZE NVML: DRIVER/LIBRARY VERSION MISMATCH ✓"
    lines[30] = "\tgoroutine 1 [running]:\tpanic: runtime error"
    lines[40] = "Running\twith config:"  # a phrase only once the tab is a space... or not: as normalise leaves it
    lines[50] = '{"level":"error",\t"msg":"x"}'
    lines[60] = "🚀🚀 cudaErrorNoDevice 🚀"
    text = "\n".join(lines) + "\n"
    want, _ = normalise(text)
    big = byte_lines(text)
    assert big is not None and big.tabs
    assert kept_rows(big, edges=0) == kept_rows(want, edges=0)
    assert {10, 20, 60} <= kept_rows(big, edges=0)


PASTES = [
    "intro\n$ kubectl get pods -A\nNAME  READY\n# cat /etc/containerd/config.toml\nversion = 2\n",
    "x # not a prompt\n$\u00a0kubectl logs p\nout\n[root@node ~]# nvidia-smi\n\tGPU 0\n",
    "k get pods -A\nNAME READY\n", "PS C:\\> kubectl get nodes\nNAME\n",
    "# helm upgrade gpu-operator -f values.yaml\ndriver:\n  enabled: true\n",
]


@pytest.mark.parametrize("text", PASTES)
def test_prompts_split_bytes_as_they_split_lines(text, every_text):
    lines, _ = normalise(text)
    big = byte_lines(text)
    assert big is not None
    key = lambda docs: [(d.first_line, d.command, d.path_hint, tuple(d.lines)) for d in docs]  # noqa: E731
    assert key(split_documents("f", big)) == key(split_documents("f", lines))


def test_a_big_log_as_bytes_parses_as_the_same_log_as_lines():
    a = "[pod/nvidia-device-plugin-daemonset-v46gq/nvidia-device-plugin] "
    b = "[pod/nvidia-device-plugin-daemonset-v46gq/config-manager] "
    lines = [a + INFO.format(m=i % 10, s=i % 60, i=i) for i in range(60_000)]
    lines[10_000:10_010] = [b + INFO.format(m=1, s=1, i=i) for i in range(10)]
    lines[30_000] = a + "Failed to initialize NVML: Unknown Error"  # untimed: its timed neighbours are kept too
    lines[30_001] = a + "\tat main.go:12"
    text = "\n".join(lines) + "\n"
    big = byte_lines(text)
    assert isinstance(big, ByteLines)
    as_lines = parse_log(Document("plugin.log", tuple(normalise(text)[0])))
    as_bytes = parse_log(Document("plugin.log", big))
    assert as_bytes == as_lines
    assert as_bytes.total_lines == 60_000 and len(as_bytes.lines) < 1000


@pytest.mark.parametrize("spec", ["example:peermem-race", "example:containerd-wrong-instance", "example:device-plugin-unregistered",
                                  *(str(p / "full") for p in INCIDENTS)])
def test_every_document_held_as_bytes_gives_the_same_report(spec, monkeypatch):
    """Every text held as ByteLines where normalising would not change it, and every log read in kept-lines mode:
    the report is that of the lines read whole, but for the gaps that say lines were kept."""
    whole = report(spec)
    monkeypatch.setattr(text_mod, "BIG_TEXT", 0)
    monkeypatch.setattr(text_mod, "BIG_LINES", 0)
    monkeypatch.setattr(parsers_logs, "KEEP_ALL_LINES", 0)
    monkeypatch.setattr(parsers_logs, "DENSE", 1.0)
    monkeypatch.setattr(facts_logs, "EDGE_LINES", 40)
    held = report(spec)

    def strip(r: dict) -> dict:
        r = dict(r)
        r["gaps"] = [g for g in r["gaps"] if "kept (lines that match" not in json.dumps(g)]
        r["source"] = {k: v for k, v in r["source"].items() if k != "analysed_at"}
        return r

    assert strip(held) == strip(whole)


def test_a_huge_file_is_read_as_bytes_and_reports_as_lines(tmp_path, monkeypatch):
    """A log read in pieces (sources/loose.py PIECE_BYTES) holds each piece as bytes; its report is the one of the
    same pieces split into lines."""
    import gpusleuth.sources.loose as loose

    monkeypatch.setattr(loose, "PIECE_BYTES", 4 << 20)
    a = "[pod/nvidia-driver-daemonset-x/nvidia-driver-ctr] "
    lines = [a + INFO.format(m=i % 10, s=i % 60, i=i) for i in range(120_000)]
    lines[70_000] = a + "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument"
    (tmp_path / "driver.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    seen = []
    real = parsers_logs._parse_kept

    def spy(doc, edges=None):
        seen.append(type(doc.lines))
        return real(doc, edges)

    monkeypatch.setattr(parsers_logs, "_parse_kept", spy)
    held = report(str(tmp_path))
    assert seen and set(seen) == {ByteLines}  # every piece, the last and shorter one too
    monkeypatch.setattr(loose, "byte_lines", lambda *_a, **_k: None)
    seen.clear()
    split = report(str(tmp_path))
    assert seen and ByteLines not in seen
    for r in (held, split):
        r["source"] = {k: v for k, v in r["source"].items() if k != "analysed_at"}
    assert held == split
    assert any("nvidia_peermem" in json.dumps(rc) for rc in held["root_causes"]) or "nvidia_peermem" in json.dumps(held)


def test_equal_lines_are_equal_with_or_without_a_last_newline():
    a, b = ByteLines(b"x\ny\n"), ByteLines(b"x\ny")
    assert a == b == ("x", "y") and hash(a) == hash(b) == hash(("x", "y"))
    assert ByteLines(b"x\ny\n\n") == ("x", "y", "") != a
    assert len(ByteLines(b"\n")) == 1 and list(ByteLines(b"\n")) == [""]


def test_a_piece_of_no_text_has_no_lines():
    assert byte_lines("", piece=True) is None  # normalise's [] (ByteLines of no bytes is one empty line)
    assert list(byte_lines("\n", piece=True)) == normalise("\n")[0] == [""]
    assert list(byte_lines("ok\n", piece=True)) == ["ok"]


def test_a_fence_is_found_however_common_its_character():
    from gpusleuth.sources.text import _holds

    for text, want in (("a ~ b ~~ c", False), ("x ~~~ y", True), ("~" * 2 + "x" + "~~~", True), ("~~" * 20_000, True),
                       ("~ " * 20_000, False), ("~ " * 20_000 + "~~~", True), ("", False)):
        assert _holds(text, "~~~") is want, text[:20]


def test_the_prompt_search_in_bytes_finds_what_the_search_in_lines_finds(every_text):
    """Every file of the examples and incidents, split at prompts from its bytes and from its lines."""
    files = [p for p in example_dir("peermem-race").parent.rglob("*") if p.is_file()]
    files += [p for d in INCIDENTS for p in d.rglob("*") if p.is_file()]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(files)]
    texts += ["x\n#\u2003kubectl get pods\ny\n", "x\n$ /usr/lo\u00e7al/bin/kubectl get pods\ny\n", "x\n% sudo -E nvidia-smi\n",
              "x\n[a@b ~]#\x1cdmesg\n", "x\n> kubectl\u00a0logs p\n", "# helm upgrade x\n", "$ not-a-program x\n"]
    key = lambda docs: [(d.first_line, d.command, d.path_hint, len(d.lines)) for d in docs]  # noqa: E731
    checked = 0
    for text in texts:
        big = byte_lines(text)
        if big is None:
            continue
        lines, _ = normalise(text)
        assert key(split_documents("f", big)) == key(split_documents("f", lines)), text[:80]
        checked += 1
    assert checked > 50
