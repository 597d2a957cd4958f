"""Big logs keep only the lines that matter (parsers/logs.py KEEP_ALL_LINES, facts/logs.py kept_rows): the report
of a big log read that way is the report of the same log read whole, and says how much was kept."""

from __future__ import annotations

import json
import os
import shutil
import time
import tracemalloc
from pathlib import Path

import pytest
from corpus import INFO, TUNED
from golden import example_dir, report

from gpusleuth.facts import logs as facts_logs
from gpusleuth.facts.errors import error_level
from gpusleuth.facts.logs import keep_scan, kept_rows, relaxed, signatures
from gpusleuth.model.document import Document
from gpusleuth.parsers import logs as parsers_logs
from gpusleuth.parsers.logs import parse_log


INCIDENTS = TUNED[:12]


def _whole(monkeypatch):
    monkeypatch.setattr(parsers_logs, "KEEP_ALL_LINES", 10**9)


def _kept(monkeypatch, edge: int = 200):
    """Every log read in kept-lines mode, however short, with `edge` first and last lines kept."""
    monkeypatch.setattr(parsers_logs, "KEEP_ALL_LINES", 0)
    monkeypatch.setattr(parsers_logs, "DENSE", 1.0)
    monkeypatch.setattr(facts_logs, "EDGE_LINES", edge)


def _without_kept_gaps(r: dict) -> dict:
    r = dict(r)
    r["gaps"] = [g for g in r["gaps"] if "kept (lines that match" not in json.dumps(g)]
    r["source"] = {k: v for k, v in r["source"].items() if k != "analysed_at"}
    return r


# ---- the scan ----------------------------------------------------------------------------------------------------


def test_relaxed_drops_anchors_and_groups_and_never_crosses_a_line():
    assert relaxed(r"^(?P<a>x)[^$]$") == r"(?:x)[^$\n]"
    assert relaxed(r'no runtime for "(?P<r>[^"]+)"') == r'no runtime for \\?"(?:[^"\n]+)\\?"'
    assert relaxed(r"(?:^|\] )\+ modprobe (a|b)\s*$") == r"(?:|\] )\+ modprobe (?:a|b)[\t\x0b\f\r ]*"
    assert relaxed(r"^(?:[\w.\-]{1,40}: )?(?:[Ff]ailed) ") == r"(?:[Ff]ailed) "  # an optional prefix, unanchored, is nothing
    assert relaxed(r"a\^b\$c[]^]") == r"a\^b\$c[]^]"
    import re2

    for p in (r"x[^,]*y", r"x\s+y", r"x\W+y", r"x\D+y", r"x[\s,]+y"):
        assert re2.search(p, "x\ny") and not re2.search(relaxed(p), "x\ny"), p
        assert re2.search(relaxed(p), "x  y"), p


def test_the_scan_finds_every_line_a_signature_or_error_shape_matches_in_the_examples():
    """The scan runs over raw lines, the tables over messages: on every log line of the bundled examples and the
    incidents, a message that a signature, an error shape or a level makes count is a raw line the scan keeps."""
    from gpusleuth.sources import examples_root

    rx, (_sigs, matcher) = keep_scan().regex, signatures()
    paths = [p for p in examples_root().rglob("*") if p.is_file() and p.name != "example.toml"]
    paths += [p for d in INCIDENTS for p in (d / "full").rglob("*") if p.is_file()]
    checked = 0
    for p in sorted(paths):
        lines = tuple(p.read_text(encoding="utf-8", errors="replace").splitlines())
        parsed = parse_log(Document(p.name, lines)).lines
        starts = sorted({ln.line for ln in parsed}) + [len(lines) + 1]
        for ln in parsed:
            if matcher.Match(ln.message) or error_level(ln.message) or ln.level in ("error", "fatal", "warning"):
                checked += 1
                end = starts[starts.index(ln.line) + 1]
                span = "\n".join(lines[ln.line - 1:end - 1])  # with the lines folded into it
                assert rx.search(span.encode("utf-8", "surrogatepass")), (p.name, ln.line, ln.raw)
    assert checked > 500


def test_a_message_after_prefixes_matches_its_relaxed_signature():
    rx = keep_scan().regex
    for line in ('[pod/nvidia-driver-daemonset-x/nvidia-driver-ctr] + modprobe nvidia-peermem',
                 '2025-11-21T11:51:41.123Z stderr F I1121 11:51:41.1 1 x.go:1] Updating / installing...',
                 'time="2025-11-21T11:51:41Z" level=info msg="Cannot frobnicate the widget cache"'):
        assert rx.search(line.encode()), line


def test_an_escaped_quote_in_a_logrus_value_is_read_as_the_message_reads_it():
    line = r'time="2025-11-21T11:51:41Z" level=info msg="pod gpu-pod: RuntimeClass \"nvidia\" not found"'
    log = parse_log(Document("containerd.log", (line,)))
    assert signatures()[1].Match(log.lines[0].message)  # the message, unescaped, is what the signature matches
    lines = [INFO.format(m=i % 10, s=i % 60, i=i) for i in range(1000)]
    lines[500] = line
    assert 500 in kept_rows(lines)


def test_no_scan_pattern_matches_the_empty_string():
    """One that did would keep every line (and hyperscan refuses it)."""
    import re2

    from gpusleuth.knowledge.message_catalogue import catalogue

    parts = [*keep_scan().parts, *(relaxed(m.pattern) for m in catalogue().messages)]
    assert not [p for p in parts if re2.fullmatch(p, "") is not None]


def test_the_hyperscan_scan_keeps_the_lines_the_re2_scan_keeps(monkeypatch):
    pytest.importorskip("hyperscan")
    assert facts_logs.keep_database() is not None
    monkeypatch.setattr(facts_logs, "HYPERSCAN_MIN_LINES", 0)  # whatever the log's size
    logs = [p for p in example_dir("peermem-race").iterdir() if p.suffix in (".log", ".descr")]
    logs += [p for d in INCIDENTS for p in (d / "full").rglob("*") if p.is_file()]
    for p in sorted(logs):
        lines = p.read_text(encoding="utf-8", errors="replace").splitlines()
        monkeypatch.setattr(facts_logs, "USE_HYPERSCAN", True)
        fast = kept_rows(lines, edges=0)
        monkeypatch.setattr(facts_logs, "USE_HYPERSCAN", False)
        assert fast == kept_rows(lines, edges=0), p.name


@pytest.mark.parametrize("chunk", [7, 64, 1_000])
def test_blocks_scanned_on_threads_keep_what_one_thread_keeps(monkeypatch, chunk):
    """The examples' and incidents' logs as one text in blocks of a few lines (so that each is many blocks), as lines
    and as bytes: the rows kept with the blocks scanned side by side are the rows kept one block after another."""
    from gpusleuth.sources.text import byte_lines, normalise

    monkeypatch.setattr(facts_logs, "USE_HYPERSCAN", False)
    monkeypatch.setattr(facts_logs, "CHUNK_LINES", chunk)
    logs = [p for p in example_dir("peermem-race").iterdir() if p.suffix in (".log", ".descr")]
    logs += [p for d in INCIDENTS for p in (d / "full").rglob("*") if p.is_file()]
    lines = [ln for p in sorted(logs) for ln in normalise(p.read_text(encoding="utf-8", errors="replace"))[0]
             if not ln.lstrip().startswith((">", "```", "~~~"))]  # what a paste quotes or fences is read as lines
    big = byte_lines("\n".join(lines), piece=True)
    assert big is not None and len(lines) > 5 * chunk
    rows = {}
    for threads in (1, 3):
        monkeypatch.setattr(facts_logs, "SCAN_THREADS", threads)
        rows[threads] = (kept_rows(lines, edges=0), kept_rows(big, edges=0))
    assert rows[1] == rows[3] and len(rows[1][0]) > 100
    assert rows[1][0] == rows[1][1]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_scans_on_threads_of_its_own(monkeypatch):
    """The scan's threads end before a fork (a child that queued work on its parent's pool waited forever, and a fork
    with threads alive can hand the child a held lock); child and parent each make a pool when they next scan."""
    monkeypatch.setattr(facts_logs, "USE_HYPERSCAN", False)
    monkeypatch.setattr(facts_logs, "CHUNK_LINES", 10)
    monkeypatch.setattr(facts_logs, "SCAN_THREADS", 2)
    lines = [f"E1121 11:52:00.000000 1 x.go:1] cannot allocate {i}" if i % 7 == 0 else INFO.format(m=1, s=2, i=i) for i in range(100)]
    rows = kept_rows(lines, edges=0)  # the parent's pool is made here
    assert facts_logs._pool and rows == set(range(0, 100, 7))
    pid = os.fork()
    if pid == 0:
        os._exit(0 if kept_rows(lines, edges=0) == rows else 1)
    deadline = time.monotonic() + 30
    while (done := os.waitpid(pid, os.WNOHANG)) == (0, 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    if done == (0, 0):
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    assert done[0] == pid and os.waitstatus_to_exitcode(done[1]) == 0
    assert kept_rows(lines, edges=0) == rows and facts_logs._pool  # the parent's own again


def test_kept_rows_are_the_edges_and_what_matches():
    lines = [INFO.format(m=i % 10, s=i % 60, i=i) for i in range(1000)]
    lines[500] = "E1121 11:52:00.000000 1 x.go:1] cannot allocate"  # a klog error
    lines[600] = "Cannot frobnicate the widget cache"  # only the error shape says it is one
    lines[700] = "Running with config:"
    rows = kept_rows(lines)
    assert rows == set(range(200)) | {500, 600} | set(range(700, 901)) | set(range(800, 1000))


# ---- a big log against the same log read whole -------------------------------------------------------------------


def _inflated(tmp_path: Path, name: str, filler: int) -> Path:
    """The example with `filler` info lines inserted in the middle of each of its logs of over 100 lines, in the
    container prefix of the line they follow."""
    out = tmp_path / name
    shutil.copytree(example_dir(name), out)
    for p in sorted(out.iterdir()):
        if not p.name.endswith(".log"):
            continue
        lines = p.read_text(encoding="utf-8").splitlines()
        if len(lines) < 100:
            continue
        mid = len(lines) // 2
        prefix = lines[mid - 1][:lines[mid - 1].index("] ") + 2] if lines[mid - 1].startswith("[pod/") else ""
        more = [prefix + INFO.format(m=i % 10, s=i % 60, i=i) for i in range(filler)]
        p.write_text("\n".join(lines[:mid] + more + lines[mid:]) + "\n", encoding="utf-8")
    return out


def test_a_big_log_reads_as_the_whole_log(tmp_path, monkeypatch):
    threshold = parsers_logs.KEEP_ALL_LINES
    src = _inflated(tmp_path, "peermem-race", threshold + 5000)
    kept = report(str(src))
    _whole(monkeypatch)
    whole = report(str(src))
    assert _without_kept_gaps(kept) == _without_kept_gaps(whole)
    assert whole["timeline"] and kept["root_causes"] and kept["root_causes"][0]["evidence"]
    said = [g for g in kept["gaps"] if "kept (lines that match" in json.dumps(g)]
    assert said and not [g for g in whole["gaps"] if "kept (lines that match" in json.dumps(g)]
    assert kept["verdict"] == whole["verdict"]
    big = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in src.glob("*.log")}
    big = {name: n for name, n in big.items() if n > threshold}
    assert big and len(said) == len(big)
    for name, n in big.items():
        assert any(name in json.dumps(g) and f"{n:,} lines, " in json.dumps(g) for g in said), name


def test_the_gap_counts_lines_and_kept_lines():
    lines = tuple(INFO.format(m=i % 10, s=i % 60, i=i) for i in range(30_000))
    lines = lines[:15_000] + ("E1121 11:52:00.000000 1 x.go:1] Failed to initialize NVML: Unknown Error",) + lines[15_000:]
    log = parse_log(Document("node.log", lines))
    assert log.total_lines == 30_001
    assert len(log.lines) == 2 * facts_logs.EDGE_LINES + 1
    assert log.lines[facts_logs.EDGE_LINES].message.startswith("Failed to initialize NVML")
    why = facts_logs.kept_gap(log).why
    assert why.startswith(f"30,001 lines, {len(log.lines):,} kept (lines that match a known signature")
    assert facts_logs.kept_gap(log).what != "partial-input"


def test_a_line_only_an_error_shape_matches_is_kept():
    text = "Cannot frobnicate the widget cache"
    assert error_level(text) and not signatures()[1].Match(text)
    lines = tuple(INFO.format(m=i % 10, s=i % 60, i=i) for i in range(30_000))
    log = parse_log(Document("app.log", lines[:20_000] + (text,) + lines[20_000:]))
    found = [ln for ln in log.lines if ln.message == text]
    assert found and found[0].line == 20_001
    # untimed: the timed lines just above and below it are kept, for the interval the timeline gives it
    at = log.lines.index(found[0])
    assert log.lines[at - 1].line == 20_000 and log.lines[at + 1].line == 20_002
    assert log.position(at) - log.position(at - 2) == 3  # the lines left out before its neighbour count as one


def test_a_continuation_line_comes_with_the_line_it_continues():
    lines = [INFO.format(m=i % 10, s=i % 60, i=i) for i in range(30_000)]
    lines[15_000:15_003] = ["ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this",
                            "       kernel module was built against the wrong or improperly configured kernel sources",
                            "       Please see the log entries 'Kernel module load error' and 'Kernel messages' at the end"]
    log = parse_log(Document("installer.log", tuple(lines)))
    msg = next(ln.message for ln in log.lines if ln.line == 15_001)
    assert "improperly configured kernel sources" in msg and "Kernel module load error" in msg


def test_a_bare_stamp_is_kept_with_the_message_below_it():
    lines = [INFO.format(m=i % 10, s=i % 60, i=i) for i in range(30_000)]
    lines[15_000:15_002] = ["ERRO[0003]", "frobnicator quorum lost on partition table 7"]
    whole = {ln.line: ln.message for ln in parse_log(Document("mig.log", tuple(lines)), whole=True).lines}
    kept = parse_log(Document("mig.log", tuple(lines)))
    assert kept.total_lines == 30_000
    assert {ln.line: ln.message for ln in kept.lines}[15_001] == whole[15_001] == "frobnicator quorum lost on partition table 7"


def test_a_container_only_left_out_lines_name_is_not_hidden():
    a = "[pod/nvidia-device-plugin-daemonset-v46gq/nvidia-device-plugin] "
    b = "[pod/nvidia-device-plugin-daemonset-v46gq/config-manager] "
    lines = [a + INFO.format(m=i % 10, s=i % 60, i=i) for i in range(30_000)]
    lines[10_000:10_010] = [b + INFO.format(m=1, s=1, i=i) for i in range(10)]
    kept = parse_log(Document("plugin.log", tuple(lines)))
    assert kept.total_lines is not None and kept.container is None
    assert parse_log(Document("plugin.log", tuple(lines[:5000]))).container == "nvidia-device-plugin"


def test_a_dense_log_is_read_whole():
    lines = tuple(f"E1121 11:52:{i % 60:02d}.000000 1 x.go:1] cannot reach the API server (try {i})" for i in range(30_000))
    log = parse_log(Document("noisy.log", lines))
    assert log.total_lines is None and len(log.lines) == 30_000


def test_memory_follows_the_kept_lines_not_the_input():
    """~30 MB of short lines: the kept-lines parse holds a block of text at a time and makes a few hundred LogLines;
    read whole, every line is a LogLine of ~250 bytes."""
    lines = tuple(f"I1121 11:5{i % 10}:{i % 60:02d}.0 1 a.go:9] tick {i}" for i in range(800_000))
    size = sum(map(len, lines))
    assert size > 28_000_000
    tracemalloc.start()
    try:
        log = parse_log(Document("ticks.log", lines))
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert log.total_lines == 800_000 and len(log.lines) == 2 * facts_logs.EDGE_LINES
    assert current < 1_000_000  # what stays: the kept lines
    assert peak < 12_000_000  # a block's text and bytes, far below the ~200 MB of LogLines of a whole read


# ---- both modes on the bundled examples and the incidents --------------------------------------------------------



@pytest.mark.parametrize("spec", ["example:peermem-race", "example:containerd-wrong-instance", "example:device-plugin-unregistered",
                                  *(str(p / "full") for p in INCIDENTS)])
def test_every_log_read_in_kept_lines_gives_the_same_report(spec, monkeypatch):
    """Kept-lines mode forced on every log, with 40 edge lines (what the views read of a log's end): the report is
    the whole read's, but for the gaps that say so."""
    whole = report(spec)
    _kept(monkeypatch, edge=40)
    kept = report(spec)
    assert _without_kept_gaps(kept) == _without_kept_gaps(whole)


def test_each_container_of_a_mixed_log_keeps_its_first_and_last_lines():
    a = "[pod/nvidia-driver-daemonset-x/nvidia-driver-ctr] "
    b = "[pod/nvidia-driver-daemonset-x/nvidia-peermem-ctr] "
    lines = [a + INFO.format(m=i % 10, s=i % 60, i=i) for i in range(20_000)]
    lines += [b + INFO.format(m=i % 10, s=i % 60, i=i) for i in range(5_000)]
    lines += [a + INFO.format(m=i % 10, s=i % 60, i=i) for i in range(20_000)]
    lines[22_000] = b + "E1121 11:52:00.000000 1 x.go:1] modprobe: ERROR: could not insert 'nvidia_peermem'"
    log = parse_log(Document("driver.log", tuple(lines)))
    kept = {ln.line - 1 for ln in log.lines}
    edge = facts_logs.EDGE_LINES
    assert set(range(20_000, 20_000 + edge)) | set(range(25_000 - edge, 25_000)) | {22_000} <= kept
    assert 10_000 not in kept and 30_000 not in kept  # a's lines in the middle of its runs are not


def test_an_untimed_line_far_from_a_time_still_keeps_the_timed_lines_around_it():
    """A compiler's output runs for hundreds of untimed lines: the interval of an error in it rests on the stamped
    lines before and after the run, as in the whole log."""
    lines = [INFO.format(m=i % 10, s=i % 60, i=i) for i in range(30_000)]
    lines[15_000:15_900] = [f"  CC [M]  /usr/src/nvidia/kernel/nvidia/file{i}.o" for i in range(900)]
    lines[15_450] = "make[2]: *** [scripts/Makefile.build:251: nvidia/nv.o] Error 1"
    log = parse_log(Document("installer.log", tuple(lines)))
    kept = [ln.line for ln in log.lines]
    at = kept.index(15_451)
    assert kept[at - 1] == 15_000 and kept[at + 1] == 15_901  # the stamped lines just before and after the run
    assert log.lines[at - 1].time is not None and log.lines[at + 1].time is not None
