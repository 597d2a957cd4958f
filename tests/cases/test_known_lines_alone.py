"""Known lines count in pastes: every failure class's real example lines, pasted alone, fire the class.

Three ways a user pastes one line: under a shell prompt, inside a `kubectl logs` paste (of a pod of the class's
operand when the class names one), and as a file whose name says nothing. The class's "where a line counts"
rules keep old errors of healthy pods in a full bundle quiet; in a paste the artifacts cannot show that
context, so the line is the user's evidence and must count (at a confidence that says what was missing).
A signature that cannot fire alone says why in its row (`alone = "..."`, knowledge/signatures.toml).
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.checks.classes import failure_classes
from gpusleuth.facts.operands import operand_table
from gpusleuth.knowledge import table
from gpusleuth.sources.loose import read_file

_SIGS = {row["id"]: row for row in table("signature" + "s")["signature"]}


def _pod_for(components: frozenset[str]) -> str:
    """A pod name the operand table gives to the first of these components (a plain name prefix pattern)."""
    specs = {s.name: s for s in operand_table()[0]}
    for name in sorted(components):
        for p in specs[name].patterns:
            prefix = p.pattern
            if prefix.startswith("^") and re.fullmatch(r"\^[a-z0-9.-]+-", prefix):
                return prefix[1:] + "x7k2p"
    return "app-5f7d8c9b6-x7k2p"


def _cases():
    for fc in failure_classes():
        for sid in fc.signatures:
            row = _SIGS[sid]
            if row.get("alone"):
                continue
            for line in [row["example"], *row.get("more_examples", [])][:2]:
                yield pytest.param(fc, line, id=f"{fc.code}-{sid}-{zlib.crc32(line.encode()) % 10_000}")


RENDITIONS = {
    "prompt": lambda fc, line: f"root@gpu-node-1:~# tail -n 50 /tmp/out.log\n{line}\n",
    "kubectl-logs": lambda fc, line: f"$ kubectl logs {_pod_for(fc.components)} -n gpu-operator\n{line}\n",
    "bare": lambda fc, line: f"{line}\n",
}


@pytest.mark.parametrize("how", sorted(RENDITIONS))
@pytest.mark.parametrize("fc, line", list(_cases()))
def test_a_known_line_pasted_alone_fires_its_class(tmp_path: Path, fc, line, how):
    path = tmp_path / "paste.txt"
    path.write_text(RENDITIONS[how](fc, line), encoding="utf-8")
    report = diagnose(read_file(path))
    fired = {f.code for f in report.findings}
    # a class the row itself says takes precedence (its `unless` signatures) may speak instead
    stronger = {g.code for g in failure_classes() if set(g.signatures) & set(fc.unless)}
    assert fc.code in fired or fired & stronger, f"{fc.code} did not fire on {how}: {line!r}; got {sorted(fired)}"
    assert report.verdict not in ("healthy", "no-verdict")
