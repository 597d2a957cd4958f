"""The sniffers skipped on a stamped `kubectl logs` document (parsers/dispatch.py) could not have won it: the
dispatched answer is every sniffer's answer, on real documents and on stamped documents made of other formats."""

from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path

import pytest

from gpusleuth.analysis import engine
from gpusleuth.model.document import Document
from gpusleuth.parsers import PARSERS
from gpusleuth.parsers.base import SURE
from gpusleuth.parsers.dispatch import BEATEN_BY_STAMPED_LOGS, NAMED_IN_STAMPED_LOGS, RUN_ON_STAMPED_LOGS, stamped_kind, stamped_log
from gpusleuth.sources import examples_root, open_source

ROOT = Path(__file__).resolve().parents[2]


def _every_sniffer(doc: Document):
    best, chosen = 0, None
    for p in PARSERS:
        try:
            score = p.sniff(doc)
        except Exception:
            score = 0
        if score > best:
            best, chosen = score, p
    return best, chosen


def _tuned_cases() -> list[Path]:
    """Incident renditions not held out of tuning (bench/accuracy.py's rule), and the healthy cases."""
    out = []
    for folder in sorted((ROOT / "tests/cases/incidents").iterdir()):
        if not (folder / "incident.toml").is_file() or int(hashlib.sha256(folder.name.encode()).hexdigest(), 16) % 3 == 0:
            continue
        out += [folder / r for r in ("full", "telling") if (folder / r).is_dir()]
    healthy = ROOT / "tests/cases/healthy"
    out += [f / "full" for f in sorted(healthy.iterdir()) if (f / "full").is_dir()] if healthy.is_dir() else []
    return out


def _same(docs) -> int:
    stamped = 0
    for doc in docs:
        stamped += stamped_log(doc)
        assert engine.sniff(doc) == _every_sniffer(doc), (doc.artifact, doc.first_line)
    return stamped


def test_examples_and_cases_sniff_as_with_every_sniffer():
    roots = [e for e in sorted(examples_root().iterdir()) if e.is_dir()] + _tuned_cases()
    docs = [d for r in roots for d in open_source(str(r)).documents]
    assert len(docs) > 150
    _same(docs)


def test_a_generated_fleet_sniffs_as_with_every_sniffer(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_scale import generate
    finally:
        sys.path.remove(str(ROOT / "bench"))
    generate(tmp_path, 20)
    docs = list(open_source(str(tmp_path)).documents)
    assert _same(docs) > 0.9 * len(docs)  # the dispatch is taken on nearly all of them


def _stamp(rnd: random.Random) -> str:
    return rnd.choice(["2025-06-01T11:00:%02d.000000000Z " % rnd.randint(0, 59), "2024-01-02T03:04:05Z ", "12345 ", "0", "9:"])


def test_skipped_sniffers_never_outbid_the_log_sniffer_on_stamped_documents():
    """Lines of every format the examples and cases hold, behind a stamp (or any digit), in a `kubectl logs`
    document: no skipped sniffer scores above the log sniffer's SURE - 10, and the dispatched answer is the full one."""
    roots = [e for e in sorted(examples_root().iterdir()) if e.is_dir()] + _tuned_cases()
    sources = [d for r in roots for d in open_source(str(r)).documents]
    rnd = random.Random(14)
    skipped = [p for p in PARSERS if p.kind in BEATEN_BY_STAMPED_LOGS]
    commands = ["kubectl logs -n gpu-operator nvidia-driver-daemonset-x -c nvidia-driver-ctr --timestamps",
                "kubectl logs pod --timestamps", "oc logs -n nvidia-gpu-operator pod -c ctr"]
    tried = 0
    for src in sources:
        for _ in range(5):
            start = rnd.randrange(max(1, len(src.lines)))
            body = src.lines[start:start + rnd.choice([1, 2, 3, 5, 40, 200])]
            lines = tuple("" if not ln and rnd.random() < 0.5 else _stamp(rnd) + ln for ln in body)
            doc = Document(f"namespaces/ns/logs/pod/{rnd.choice(['ctr.log', 'values.yaml', 'config.toml', 'daemon.json'])}",
                           lines, command=rnd.choice(commands))
            assert stamped_log(doc)
            tried += 1
            for p in skipped:
                assert p.sniff(doc) <= SURE - 10, (p.kind, src.artifact, start)
            assert engine.sniff(doc) == _every_sniffer(doc), (src.artifact, start)
    assert tried > 800


@pytest.mark.parametrize("lines, command, path_hint", [
    (("2025-06-01T11:00:00Z x", " indented"), "kubectl logs p --timestamps", None),  # a line not led by a digit
    (("2025-06-01T11:00:00Z x",), "kubectl logs p -- lsmod", None),  # the host sniffers see lsmod
    (("2025-06-01T11:00:00Z x",), "kubectl logs p", "/proc/modules"),
    (("2025-06-01T11:00:00Z x",), "kubectl get pods", None),
    (("2025-06-01T11:00:00Z x",), None, None),
    (("\u0663 unicode digit",), "kubectl logs p", None),
])
def test_what_is_not_a_stamped_log(lines, command, path_hint):
    assert not stamped_log(Document("a.log", lines, command=command, path_hint=path_hint))


def test_no_sniffer_memo_keeps_an_older_document_while_stamped_logs_go_by():
    import gc

    table = Document("pods.txt", ("NAMESPACE   NAME   READY   STATUS   RESTARTS   AGE", "gpu-operator   p   1/1   Running   0   1d"),
                     command="kubectl get pods -A")
    assert engine.sniff(table)[1].kind == "kubectl.get-pods"
    gone = (table.artifact, table.first_line)
    del table
    log = Document("ns/logs/p/c.log", (_S + "hello",), command="kubectl logs p --timestamps")
    assert stamped_log(log) and engine.sniff(log)[1].kind == "logs"
    gc.collect()
    assert gone not in [(o.artifact, o.first_line) for o in gc.get_objects() if isinstance(o, Document)]


_S = "2025-06-01T11:00:00.000000000Z "


@pytest.mark.parametrize("lines, kind", [
    ([_S + "root@gpu-07:~# getenforce", _S + "Enforcing"], "host.security"),
    ([_S + '{"cdiVersion": "0.6.0", "kind": "nvidia.com/gpu", "devices": []}'], "cdi.spec"),
    ([_S + "==============NVSMI LOG==============", _S + "Driver Version : 570.158.01"], "nvidia-smi.query"),
    ([_S + "| NVIDIA-SMI 570.158.01   Driver Version: 570.158.01   CUDA Version: 12.8 |"], "nvidia-smi"),
    ([_S + "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error"], "nvidia-smi"),
    ([_S + "UNABLE TO DETECT THE DEVICE HANDLE FOR GPU 0000:3B:00.0: GPU is lost"], "nvidia-smi"),
    ([_S + '<?xml version="1.0" ?>', _S + '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">'], "nvidia-smi.xml"),
    ([_S + '{"schema": "gpusleuth/node-probe/v1", "node": "n1"}'], "gpusleuth.node-probe"),
    ([_S + "x"] * 100 + [""] * 299 + [_S + 'type: helm.sh/release.v1'] + [_S + "y"] * 5, "helm.release-secret"),  # line 400
    ([""] * 390 + [_S + "x"] * 20 + [_S + "| NVIDIA-SMI 570.158.01   Driver Version: 570.158.01 |"] + [_S + "y"] * 40, "nvidia-smi"),
])
def test_sniffers_still_run_on_stamped_logs_can_win_them(lines, kind):
    """Why those sniffers are not skipped: what they claim can sit behind a stamp."""
    doc = Document("namespaces/ns/logs/pod/ctr.log", tuple(lines), command="kubectl logs pod --timestamps")
    assert stamped_log(doc)
    score, chosen = engine.sniff(doc)
    assert chosen.kind == kind and score > SURE - 10
    assert (score, chosen) == _every_sniffer(doc)


def test_the_digit_test_is_every_non_empty_line_led_by_an_ascii_digit():
    rnd = random.Random(7)
    parts = ["", "", "1", "2025-06-01T11:00:00Z x", "x", " 1", "\t", "\u0663", "[", "0", "\r1", "9 a"]
    for _ in range(20000):
        lines = tuple(rnd.choice(parts) for _ in range(rnd.randint(0, 6)))
        doc = Document("a.log", lines, command="kubectl logs p --timestamps")
        assert stamped_log(doc) == all(ln[:1] in tuple("0123456789") for ln in lines if ln), lines


def test_every_sniffer_that_runs_on_stamped_logs_is_named_or_always_run():
    """A sniffer added later is either skipped on stamped logs, named with the words it needs, or always run."""
    assert {p.kind for p in engine._STAMPED_LOG_PARSERS} == set(NAMED_IN_STAMPED_LOGS) | RUN_ON_STAMPED_LOGS
    assert [p.kind for p in engine._PLAIN_STAMPED_LOG_PARSERS] == [p.kind for p in PARSERS if p.kind in RUN_ON_STAMPED_LOGS]


def test_a_stamped_log_without_the_named_words_is_won_by_the_sniffers_always_run():
    """Stamped documents made of other formats' lines, with the named words (in any case) dropped in anywhere,
    among blank lines, past line 400: where stamped_kind says none is there, no named sniffer outbids the log
    sniffer, and the dispatched answer is always the full one."""
    roots = [e for e in sorted(examples_root().iterdir()) if e.is_dir()] + _tuned_cases()
    sources = [d for r in roots for d in open_source(str(r)).documents]
    rnd = random.Random(15)
    named = [p for p in PARSERS if p.kind in NAMED_IN_STAMPED_LOGS]
    words = [w for ws in NAMED_IN_STAMPED_LOGS.values() for w in ws] + ["sh.helm.release.v1.x", "helm.sh/release.v1",
             "==============NVSMI LOG==============", '"schema": "gpusleuth/node-probe/v1"', "root@n:~# sestatus"]
    plain = quiet = 0
    for src in sources:
        for _ in range(3):
            start = rnd.randrange(max(1, len(src.lines)))
            body = list(src.lines[start:start + rnd.choice([1, 3, 40, 500])])
            if rnd.random() < 0.3:
                body[:0] = [""] * rnd.choice([10, 350, 420])
            for _ in range(rnd.choice([0, 0, 1, 2])):
                w = rnd.choice(words)
                w = rnd.choice([w, w.upper(), w.lower()])
                at = rnd.randrange(len(body) + 1)
                body.insert(at, rnd.choice(["", "x ", "| "]) + w + rnd.choice(["", " GPU 0000:3B:00.0: x", ": enforcing"]))
            lines = tuple("" if not ln and rnd.random() < 0.8 else _stamp(rnd) + ln for ln in body)
            doc = Document("namespaces/ns/logs/pod/ctr.log", lines, command="kubectl logs pod -c ctr --timestamps")
            kind = stamped_kind(doc)
            assert kind == 1 + (kind == 2) and stamped_log(doc)
            if kind == 2:
                quiet += 1
                for p in named:
                    assert p.sniff(doc) <= SURE - 10, (p.kind, src.artifact, start)
            else:
                plain += 1
            assert engine.sniff(doc) == _every_sniffer(doc), (src.artifact, start)
    assert quiet > 300 and plain > 100


def test_the_program_of_a_logs_command_is_told_as_the_host_sniffers_tell_it():
    from gpusleuth.parsers import dispatch, host_facts

    rnd = random.Random(3)
    parts = [" ", "  ", "\t", "--", "-- ", "--|", " --", "--timestamps", "-c", "ctr", "|", " | ", "'", '"', "\\", "sudo",
             "lsmod", "kubectl", "oc", "-n", "ns", "'--'", '""--', "sh -c", "\u00a0", "x|--"]
    for _ in range(20000):
        cmd = rnd.choice(["kubectl logs ", "oc logs "]) + "".join(rnd.choice(parts) for _ in range(rnd.randint(0, 8)))
        assert dispatch._runs_kubectl(cmd) == (host_facts._command_of(cmd)[0] in ("kubectl", "oc")), cmd
