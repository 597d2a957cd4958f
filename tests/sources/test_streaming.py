"""Documents stream through the engine: one file (or one piece of a huge file) in memory at a time, and budgets
that say what they cut."""

import gc
import io
import json
import tracemalloc

from click.testing import CliRunner

from gpusleuth.analysis.diagnose import build_facts, diagnose
from gpusleuth.analysis.engine import ingest
from gpusleuth.facts import Facts
from gpusleuth.model.document import Document
from gpusleuth.model.logs import ContainerLog
from gpusleuth.sources import loose, open_source
from gpusleuth.sources.loose import Budgets
from gpusleuth.sources.text import read_pieces

XID = "[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus."


def _folder(root, files: int, mib: float, line: str = "plain text line {i} of a file nobody parses into much\n"):
    for n in range(files):
        body, size, i = [], 0, 0
        while size < mib * (1 << 20):
            s = line.format(i=i, n=n)
            body.append(s)
            size += len(s)
            i += 1
        (root / f"f{n:03d}.txt").write_text("".join(body))
    return root


def test_reading_a_50_mb_folder_holds_one_file_at_a_time(tmp_path):
    _folder(tmp_path, 25, 2)  # 50 MiB in 25 files
    tracemalloc.start()
    try:
        src = open_source(str(tmp_path))
        lines = sum(len(d.lines) for d in src.documents)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert lines > 900_000 and src.documents.count == 25 and src.files == 25
    assert peak < 16 << 20, f"{peak / (1 << 20):.0f} MiB traced at the peak for 50 MiB of input"  # a whole-input read holds > 100 MiB


def test_the_engine_keeps_no_document_once_parsed():
    src = open_source("example:peermem-race")
    last = []

    def remember_the_last(docs):
        for d in docs:
            last[:] = [(d.artifact, d.first_line)]
            yield d

    facts = ingest(remember_the_last(src.documents), Facts())
    gc.collect()
    assert facts.recognised and src.documents.count > 10
    # the sniffers' one-entry memos (Document.head, ...) may hold the last document read, never more
    left = [(o.artifact, o.first_line) for o in gc.get_objects() if isinstance(o, Document)]
    assert set(left) <= set(last), left


def test_documents_can_be_read_again_up_to_where_the_first_reading_stopped(tmp_path):
    _folder(tmp_path, 3, 0.01)
    src = open_source(str(tmp_path), budgets=Budgets(max_files=2))
    first = [(d.artifact, d.lines) for d in src.documents]
    assert [(d.artifact, d.lines) for d in src.documents] == first and len(first) == 2
    assert len(src.documents) == 2 and src.files == 3


def test_read_pieces_hands_on_whole_lines_and_loses_nothing():
    text = "".join(f"line {i} {'x' * (i % 50)}\n" for i in range(20_000))
    pieces = list(read_pieces(io.BytesIO(text.encode()), piece=10_000))
    assert len(pieces) > 10 and all(p.more for p in pieces[:-1]) and not pieces[-1].more
    assert all(p.text.endswith("\n") for p in pieces[:-1])
    assert "".join(p.text for p in pieces) == text
    whole = list(read_pieces(io.BytesIO(text.encode())))
    assert len(whole) == 1 and whole[0].text == text and whole[0].size == len(text)


def _kernel_log(lines: int, xids: dict[int, str]) -> str:
    out = []
    for i in range(lines):
        out.append(xids.get(i, f"[ {1000 + i}.000000] eth0: link up, 100Gbps, full duplex, line {i}"))
    return "\n".join(out) + "\n"


def _cited(report):
    return sorted((f.code, e.artifact, e.line, e.text) for f in report.findings for e in f.evidence)


def test_a_huge_log_in_pieces_is_one_log_with_the_same_findings(tmp_path, monkeypatch):
    (tmp_path / "dmesg.log").write_text(_kernel_log(5000, {1234: XID, 4321: XID.replace("79", "48")}))
    whole = diagnose(open_source(str(tmp_path)))
    monkeypatch.setattr(loose, "PIECE_BYTES", 16 << 10)  # ~230 lines a piece
    src = open_source(str(tmp_path))
    docs = list(src.documents)
    assert len(docs) > 10 and [d.first_line for d in docs][:2] == [1, 1 + len(docs[0].lines)]
    assert docs[0].meta.get(loose.CONTINUED) and docs[1].meta.get(loose.CONTINUES) and not docs[-1].meta.get(loose.CONTINUED)
    facts = build_facts(open_source(str(tmp_path)))
    logs = facts.all(ContainerLog)
    assert len(logs) == 1 and logs[0].total_lines == 5000 and logs[0].lines[-1].line == 5000
    assert [ln.line for ln in logs[0].lines if "Xid" in ln.raw] == [1235, 4322]
    assert [(r.first_line, r.last_line) for r in facts.recognised] == [(1, 5000)]
    pieced = diagnose(open_source(str(tmp_path)))
    assert _cited(pieced) == _cited(whole) and any(e[2] == 1235 for e in _cited(whole))
    assert pieced.verdict == whole.verdict and pieced.headline == whole.headline
    kept = [g for g in pieced.gaps if g.what == "big log"]
    assert len(kept) == 1 and kept[0].why.startswith("5,000 lines, ")  # one log, stated once


def test_a_huge_yaml_in_pieces_is_joined_before_it_is_parsed(tmp_path, monkeypatch):
    pods = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"nvidia-driver-daemonset-{i:04d}", "namespace": "gpu-operator"},
         "spec": {"nodeName": f"gpu-node-{i:04d}", "containers": [{"name": "nvidia-driver-ctr", "image": "nvcr.io/nvidia/driver:550"}]},
         "status": {"phase": "Running"}} for i in range(300)]}
    import yaml

    (tmp_path / "pods.yaml").write_text(yaml.safe_dump(pods))
    whole = build_facts(open_source(str(tmp_path)))
    monkeypatch.setattr(loose, "PIECE_BYTES", 8 << 10)
    assert len(list(open_source(str(tmp_path)).documents)) > 5
    pieced = build_facts(open_source(str(tmp_path)))
    assert [(r.kind, r.first_line, r.last_line, r.objects) for r in pieced.recognised] == \
           [(r.kind, r.first_line, r.last_line, r.objects) for r in whole.recognised]
    assert whole.recognised[0].objects >= 300


def test_the_total_bytes_budget_says_what_was_not_read(tmp_path):
    _folder(tmp_path, 4, 0.01, "line {i} of file {n}\n")
    src = open_source(str(tmp_path), budgets=Budgets(max_total_bytes=25_000))
    report = diagnose(src)
    partial = [g for g in report.gaps if g.what == "partial-input"]
    assert any(g.artifact == "f002.txt" and "--max-total-bytes" in g.why for g in partial), partial
    assert any("budget of 24.4 KiB read in all (--max-total-bytes) was reached after 3 file(s); 1 of 4 file(s) were not read" in g.why
               for g in partial), partial
    assert report.verdict == "no-verdict" and report.source["files"] == 4


def test_the_file_budget_says_how_many_were_not_read(tmp_path):
    _folder(tmp_path, 5, 0.001)
    src = open_source(str(tmp_path), budgets=Budgets(max_files=3))
    assert [d.artifact for d in src.documents] == ["f000.txt", "f001.txt", "f002.txt"]
    assert any("more than 3 files (--max-files)" in g.why for g in src.gaps)


def test_the_time_budget_stops_reading_and_the_checks_still_run(tmp_path, monkeypatch):
    for n in range(6):
        (tmp_path / f"n{n}-dmesg.log").write_text(XID + "\n")
    clock = iter(range(0, 1000, 10))  # every look at the clock: 10 s later
    monkeypatch.setattr(loose.time, "monotonic", lambda: next(clock))
    src = open_source(str(tmp_path), budgets=Budgets(time_budget=25, started=0))
    report = diagnose(src)
    gap = next(g for g in report.gaps if "--time-budget" in g.why)
    assert gap.what == "partial-input" and "reached after 3 file(s)" in gap.why and "3 of 6 file(s) were not read" in gap.why
    assert report.source["documents"] == 3 and any(f.code.startswith("HW") for f in report.findings)
    assert any(c.status == "fired" for c in report.checks)


def test_budgets_are_flags_and_reaching_one_is_said(tmp_path):
    from gpusleuth.cli import cli

    _folder(tmp_path, 4, 0.01, "line {i} of file {n}\n")
    out = CliRunner().invoke(cli, ["diagnose", str(tmp_path), "--format", "json", "--max-files", "2", "--max-total-bytes", "1M",
                                   "--time-budget", "0"])
    report = json.loads(out.stdout)
    assert any("more than 2 files (--max-files)" in g for g in report["gaps"])
    assert "partial input" in out.stderr


def test_a_huge_bug_report_in_pieces_keeps_its_sections(tmp_path, monkeypatch):
    sep = "_" * 44
    filler = [f'[ {i}.000] (II) NVIDIA(0): Setting mode "DFP-0" on screen {i}' for i in range(3000)]
    dmesg = [f"[ {i}.000000] eth0: link up, line {i}" for i in range(3000)]
    dmesg[2500] = XID
    lines = ["Start of NVIDIA bug report log file.", "", sep, "", "*** /var/log/Xorg.0.log", "", *filler, "", sep, "", "dmesg:", "",
             *dmesg, "", sep, "", "*** /var/log/Xorg.1.log", "", *filler]
    (tmp_path / "nvidia-bug-report.log").write_text("\n".join(lines) + "\n")
    whole = build_facts(open_source(str(tmp_path)))
    reported = diagnose(open_source(str(tmp_path)))
    monkeypatch.setattr(loose, "PIECE_BYTES", 20 << 10)
    docs = list(open_source(str(tmp_path)).documents)
    assert len(docs) > 3 and {d.meta.get("section") for d in docs} == {"dmesg:"}
    pieced = build_facts(open_source(str(tmp_path)))
    assert [(r.kind, r.first_line, r.last_line) for r in pieced.recognised] == [(r.kind, r.first_line, r.last_line) for r in whole.recognised]
    # a piece of a huge file is a big log: it keeps the lines that matter, and the joined log counts them all
    assert [log.total_lines for log in pieced.all(ContainerLog)] == [len(log.lines) for log in whole.all(ContainerLog)] == [3000]
    assert any(XID in ln.raw for ln in pieced.all(ContainerLog)[0].lines)
    assert _cited(diagnose(open_source(str(tmp_path)))) == _cited(reported)


def test_the_time_budget_is_checked_between_pieces_of_a_huge_file(tmp_path, monkeypatch):
    (tmp_path / "dmesg.log").write_text(_kernel_log(5000, {10: XID, 4000: XID.replace("79", "48")}))
    monkeypatch.setattr(loose, "PIECE_BYTES", 16 << 10)
    clock = iter(range(0, 1000, 10))
    monkeypatch.setattr(loose.time, "monotonic", lambda: next(clock))
    report = diagnose(open_source(str(tmp_path), budgets=Budgets(time_budget=35, started=0)))
    gap = next(g for g in report.gaps if g.artifact == "dmesg.log" and "--time-budget" in g.why)
    assert gap.what == "partial-input" and "the rest of the file was not read" in gap.why
    cited = {e.line for f in report.findings for e in f.evidence}
    assert 11 in cited and 4001 not in cited


def test_after_ingest_of_50_mb_nothing_read_but_not_kept_is_held(tmp_path):
    sep = "_" * 44
    for n in range(25):  # 25 bug reports of 2 MiB: a kernel log each, the rest a section nothing analyses
        head = f"Start of NVIDIA bug report log file.\n\n{sep}\n\ndmesg:\n\n{XID}\n\n{sep}\n\n*** /var/log/Xorg.0.log\n\n"
        line = '[ {i}.000] (II) NVIDIA(0): Setting mode "DFP-0:nvidia-auto-select" on screen 0\n'
        (tmp_path / f"nvidia-bug-report_{n:02d}.log").write_text(head + "".join(line.format(i=i) for i in range((2 << 20) // 80)))
    tracemalloc.start()
    try:
        src = open_source(str(tmp_path))
        facts = ingest(src.documents, Facts())
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(facts.all(ContainerLog)) == 25 and src.documents.count == 25
    assert held < 4 << 20 and peak < 16 << 20, f"held {held >> 20} MiB, peak {peak >> 20} MiB after 50 MiB read"


def test_whole_documents_joins_the_pieces_back(tmp_path, monkeypatch):
    from gpusleuth.analysis.engine import whole_documents

    (tmp_path / "a.log").write_text(_kernel_log(3000, {}))
    (tmp_path / "b.txt").write_text("NAME READY STATUS\n")
    whole = [(d.artifact, d.first_line, d.lines) for d in open_source(str(tmp_path)).documents]
    monkeypatch.setattr(loose, "PIECE_BYTES", 8 << 10)
    assert len(list(open_source(str(tmp_path)).documents)) > 5
    assert [(d.artifact, d.first_line, d.lines) for d in whole_documents(open_source(str(tmp_path)).documents)] == whole


def test_a_file_of_tiny_lines_is_cut_by_lines_too(tmp_path, monkeypatch):
    (tmp_path / "app.log").write_text("ok\n" * 10_000 + XID + "\n" + "ok\n" * 10_000)
    from gpusleuth.sources import text

    monkeypatch.setattr(loose, "PIECE_LINES", 3000)
    monkeypatch.setattr(text, "CHUNK", 4096)
    docs = list(open_source(str(tmp_path)).documents)
    assert len(docs) >= 6 and max(len(d.lines) for d in docs) <= 3000 + 4096 // 3  # one read's lines at most past it
    assert sum(len(d.lines) for d in docs) == 20_001
    report = diagnose(open_source(str(tmp_path)))
    assert 10_001 in {e.line for f in report.findings for e in f.evidence}


def test_nothing_of_the_reading_outlives_the_source(tmp_path):
    """The reader's Documents call back into it; it refers to them weakly, so once the caller lets go of the Source
    reference counting frees the reader and its listing, with the cycle collector paused as diagnose pauses it."""
    for i in range(3):
        (tmp_path / f"driver-{i}.log").write_text("I1121 11:52:00.000000 1 a.go:9] tick\n" * 10)
    gc.collect()
    gc.disable()
    try:
        src = open_source(str(tmp_path))
        assert len(list(src.documents)) == 3 and src.documents.files_read == 3
        assert sum(type(o).__name__ == "_Reader" for o in gc.get_objects()) == 1
        docs = open_source(str(tmp_path)).documents  # the Source let go of at once: its documents still read
        assert len(list(docs)) == 3 and docs.files_read == 3
        del src, docs
        assert sum(type(o).__name__ in ("_Reader", "Documents") for o in gc.get_objects()) == 0
    finally:
        gc.enable()
