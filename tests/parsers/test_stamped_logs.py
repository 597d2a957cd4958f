"""`kubectl logs --timestamps` documents are read with one regex over their text and a memo of the text after each
stamp (parsers/logs.py _stamped_lines): the LogLines must be those the line-by-line loop makes of the same lines."""

from __future__ import annotations

import sys

import pytest

from corpus import ROOT, TUNED, accuracy

from gpusleuth.model.document import Document
from gpusleuth.parsers import logs as parsers_logs
from gpusleuth.parsers.logs import parse_log



def _both(doc: Document, monkeypatch) -> tuple:
    parsers_logs._rests.clear()
    fast = parse_log(doc)
    again = parse_log(doc)  # the second time every text is remembered
    with monkeypatch.context() as m:
        m.setattr(parsers_logs, "STAMPED_FAST", False)
        slow = parse_log(doc)
    return fast, again, slow


def _stamped(doc: Document) -> bool:
    return parsers_logs._stamped_lines(doc, None, None) is not None


LINES = [
    "2025-06-01T11:00:00.000000000Z waiting for nvidia drivers to be loaded",
    "2025-06-01T11:00:01.5Z waiting for nvidia drivers to be loaded",
    "2025-06-01T11:00:02,25+02:00 ERROR: could not insert 'nvidia_peermem': Invalid argument",
    "2025-06-01 11:00:03 UTC modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument",
    "2025-06-01T11:00:04.000000000Z I0601 11:00:04.000000       1 main.go:238] Sleeping for 60000000000",
    "2025-06-01T11:00:05.000000000Z E0601 11:00:05.000000       1 factory.go:115] Incompatible platform detected",
    '2025-06-01T11:00:06.000000000Z time="2025-06-01T11:00:06Z" level=error msg="unable to setup runtime: \\"x\\"" err=y',
    "2025-06-01T11:00:07.000000000Z ERRO[0003] failed to start",
    '2025-06-01T11:00:08.000000000Z {"level":"warn","msg":"slow","error":"deadline"}',
    "2025-13-01T11:00:09.000000000Z a month that is not one: the line keeps its text, the time comes from inside",
    "2025-13-01T11:00:10.000000000Z I0601 11:00:10.000000       1 main.go:1] inner time only",
    "2025-06-01T11:00:11.000000000Z ",
    "2025-06-01T11:00:12.000000000Z     indented text after a stamp is a line of its own",
    "2025-06-01T11:00:13.000000000Z 2025-06-01T11:00:13.000000000Z a stamp twice",
    "2025-06-01T11:00:14.000000000Z Warning: something\r with a carriage return",
    "2025-06-01T11:00:15.000000000Z error: a long line, not remembered " + "x" * 600,
]


@pytest.mark.parametrize("n", range(1, len(LINES) + 1))
def test_stamped_lines_read_as_the_loop_reads_them(n, monkeypatch):
    doc = Document("pod.log", tuple(LINES[:n]), first_line=3, command="kubectl logs --timestamps -n gpu-operator nvidia-driver-x -c ctr")
    fast, again, slow = _both(doc, monkeypatch)
    assert _stamped(doc)
    assert fast == slow and again == slow
    assert [ln.line for ln in fast.lines] == list(range(3, 3 + n))


@pytest.mark.parametrize("lines", [
    ("2025-11-21T11:51:06.123456789Z stdout F Starting driver-manager", "2025-11-21T11:51:07.1Z stdout F next"),  # CRI
    ("2025-11-21T11:57:55+0000 gpu-node-1 kernel: NVRM: Xid 79", "2025-11-21T11:57:56+0000 a plain line"),  # journal first
    ("2025-06-01T11:00:00Z one", "", "2025-06-01T11:00:01Z after a blank line"),
    ("2025-06-01T11:00:00Z one", "    a continuation line", "2025-06-01T11:00:01Z two"),
    ("[pod/p/c] 2025-06-01T11:00:00Z one", "[pod/p/c] 2025-06-01T11:00:01Z two"),
    ("2025-06-01T11:00:00Z one", "not stamped"),
    ("2025-06-01T11:00:00Z", "2025-06-01T11:00:01Z a stamp alone above"),
    ("2025-06-01T11:00:00Z one\n2025-06-01T11:00:01Z a newline inside a line", "", "2025-06-01T11:00:02Z three"),
])
def test_other_documents_are_left_to_the_loop_and_read_the_same(lines, monkeypatch):
    doc = Document("x.log", lines)
    fast, again, slow = _both(doc, monkeypatch)
    assert fast == slow and again == slow


def test_every_example_and_incident_log_reads_the_same(monkeypatch):
    """Every file of the bundled examples and the (not held-out) incidents, as a log: the same LogLines either
    way, and some of them take the one-regex path."""
    from gpusleuth.sources import examples_root

    paths = [p for p in examples_root().rglob("*") if p.is_file() and p.name != "example.toml"]
    paths += [p for d in TUNED for p in d.rglob("*") if p.is_file()]
    fast_path = 0
    for p in sorted(paths):
        lines = tuple(p.read_text(encoding="utf-8", errors="replace").splitlines())
        doc = Document(p.name, lines)
        fast, again, slow = _both(doc, monkeypatch)
        assert fast == slow and again == slow, p
        fast_path += _stamped(doc)
    assert fast_path == 0  # none of them is a bare `kubectl logs --timestamps` (so their reports cannot change)


def test_a_fleet_bundle_reads_the_same(tmp_path, monkeypatch):
    """The logs of a generated fleet (bench/bench_scale.py: `kubectl logs --timestamps` of every operand, plain, klog
    and logrus lines inside), as the bundle reader hands them over: the same LogLines either way."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_scale import generate

    from gpusleuth.sources import open_source

    generate(tmp_path, nodes=6, failing=0.67, lines=40)
    docs = [d for d in open_source(str(tmp_path)).documents if d.artifact.endswith(".log")]
    assert len(docs) > 50
    for doc in docs:
        fast, again, slow = _both(doc, monkeypatch)
        assert fast == slow and again == slow, doc.artifact
    assert sum(map(_stamped, docs)) == len(docs)


def _hints_by_every_pattern(name: str):
    """What the name patterns say, each searched with no test before it (what parsers/logs.py _hints did)."""
    L = parsers_logs
    if m := L._MG_OPERAND.search(name):
        return {"pod": m.group("pod"), "previous": bool(m.group("prev")), "kind": "container"}
    if m := L._MG_OPERATOR.search(name):
        return {"previous": bool(m.group("prev")), "kind": "container"}
    if m := L._OCP_MG.search(name):
        return {"pod": m.group("pod"), "namespace": m.group("ns"), "container": m.group("ctr"), "previous": m.group("which") == "previous",
                "kind": "container"}
    if m := L._POD_DIR.search(name) or L._CONTAINERS_DIR.search(name):
        return {"pod": m.group("pod"), "namespace": m.group("ns"), "container": m.group("ctr"), "kind": "container"}
    return {"kind": "kernel"} if L._KERNEL_NAME.search(name) else {}


def test_name_hints_are_those_of_every_pattern():
    from gpusleuth.sources import examples_root

    cases = ROOT / "tests" / "cases"
    names = [str(p.relative_to(ROOT)) for p in cases.rglob("*") if p.is_file()
             and not (p.parts[len(cases.parts)] == "incidents" and accuracy.held_out(p.parts[len(cases.parts) + 1]))]
    names += [str(p.relative_to(examples_root())) for p in examples_root().rglob("*") if p.is_file()]
    names += ["a/gpu_operand_pod_x.previous.log", "network_operator_pod.previous.log", "namespaces/ns/pods/p/c/c/logs/previous.log",
              "var/log/pods/ns_p_0123abcd-0000/ctr/0.log.1", "p_ns_ctr-" + "a" * 64 + ".log", "DMESG.txt", "host/KERNEL.log",
              "journalctl-k.txt", "x/\u017fyslog", "\u212aern.log", "var/log/messages", "x_journal.txt", "a-kernel", "pods.json"]
    assert len(names) > 200
    for name in names:
        assert parsers_logs._hints(Document(name, ("x",))) == _hints_by_every_pattern(name), name
