"""Three sniffers that run on every stamped log test first for the word their patterns cannot match without (a CDI
spec's `cdiVersion`, nvidia-smi's `NVIDIA-SMI`) and read the security tools' first lines without the shared stripped
head: their answers are those of the patterns alone, on real documents and on documents made to hit each branch."""

from __future__ import annotations

import sys
from pathlib import Path

from gpusleuth.model.document import Document
from gpusleuth.parsers import cdi, host_facts, nvidia_smi
from gpusleuth.parsers.base import LIKELY, NO, SURE, WEAK
from gpusleuth.sources import examples_root, open_source

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "parsers"))
from test_sniff_dispatch import _tuned_cases  # noqa: E402


def _cdi(doc):
    head = doc.head(60)
    if any(cdi._CDI_VERSION.match(ln) or '"cdiVersion"' in ln for ln in head):
        return SURE if any(map(cdi._KIND.search, head)) or len(head) == 1 else SURE - 20
    if doc.path_hint and "/cdi/" in doc.path_hint:
        return WEAK
    return NO


def _table(doc):
    n = nvidia_smi
    head = doc.head(60)
    if any(map(n._HEADER.search, head)):
        return SURE
    if any(n._NO_DRIVER.search(ln) or n._HANDLE_ERROR.search(ln) or n._NO_LIB.search(ln) for ln in head[:6]):
        return SURE
    if len(head) <= 3 and any(n._NVML_INIT.search(ln) or n._NO_DEVICES.match(ln) for ln in head):
        return LIKELY if (doc.command or "").startswith("nvidia-smi") else WEAK + 10
    return NO


def _security(doc):
    h = host_facts
    prog, _, _, _ = h.command(doc)
    head = h._head(doc, 6)
    if (prog in h._SECURITY_PROGRAMS or (head and h._SECURITY_PROMPT.match(head[0]))) and head[1 if not prog else 0:]:
        return SURE
    if head and ((h._GETENFORCE.match(head[0]) and len(head) == 1) or any(map(h._SESTATUS.match, head))
                 or any(map(h._AA_LOADED.match, head))):
        return LIKELY
    return NO


def _made() -> list[Document]:  # made when asked: a module-level Document would outlive the test (test_streaming)
    return [
        Document("cdi.yaml", ('cdiVersion: "0.5.0"', "kind: nvidia.com/gpu", "devices: []")),
        Document("cdi.json", ('{"cdiVersion":"0.6.0","kind":"nvidia.com/gpu"}',)),
        Document("x.txt", ('  "cdiVersion" : "0.5.0",', "other")),
        Document("x.txt", ("2025-06-01T11:00:00Z cdiVersion: 0.5.0",)),
        Document("smi.txt", ("+---+", "| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4 |")),
        Document("smi.txt", ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure ...",)),
        Document("smi.txt", ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system.",)),
        Document("smi.txt", ("unable to DETERMINE the device handle for GPU 0000:3B:00.0: Unknown Error",)),
        Document("smi.txt", ("Failed to initialize NVML: Driver/library version mismatch",), command="nvidia-smi"),
        Document("smi.txt", ("No devices were found",)),
        Document("sec.txt", ("Enforcing",)),
        Document("sec.txt", ("SELinux status:                 enabled", "Current mode:                   enforcing")),
        Document("sec.txt", ("apparmor module is loaded.", "12 profiles are loaded.")),
        Document("sec.txt", ("$ sestatus", "SELinux status: disabled")),
        Document("sec.txt", ("Permissive",), command="getenforce"),
        Document("sec.txt", ("   ", "  Enforcing  ")),
    ]


def test_the_three_sniffers_answer_as_their_patterns_alone(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_scale import generate

    generate(tmp_path, nodes=6, failing=0.67, lines=20)
    roots = [e for e in sorted(examples_root().iterdir()) if e.is_dir()] + _tuned_cases() + [tmp_path]
    docs = [d for r in roots for d in open_source(str(r)).documents] + _made()
    assert len(docs) > 200
    hits = {"cdi": 0, "table": 0, "security": 0}
    for doc in docs:
        for name, mine, ref in (("cdi", cdi.sniff, _cdi), ("table", nvidia_smi._sniff_table, _table),
                                ("security", host_facts.sniff_security, _security)):
            want = ref(doc)
            assert mine(doc) == want, (name, doc.artifact, doc.first_line)
            hits[name] += want > NO
    assert all(n >= 3 for n in hits.values()), hits
