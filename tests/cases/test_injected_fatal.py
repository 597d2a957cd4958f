"""No HEALTHY in front of an error: every log shape gpusleuth reads, with one fatal line nobody wrote a check
for injected after its realistic sample lines, gives a verdict that is not HEALTHY and a finding that cites
the injected line at its line number."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.parsers.timestamps import FORMATS
from gpusleuth.sources.loose import read_file

# One error line nobody wrote a check for, in each shape (kernel lines name the GPU stack: a kernel log's
# other subsystems complain all day and are not counted).
FATAL = {
    "cri": "2025-11-21T11:51:07.000000000Z stderr F FATAL: frobnicator exploded, cannot continue",
    "journal": '2025-11-21T11:57:56+0000 gpu-node-1 containerd[812]: time="2025-11-21T11:57:56Z" level=fatal msg="frobnicator exploded"',
    "rfc3339": "2025-11-21T11:51:07.123456789Z ERROR: frobnicator exploded, cannot continue",
    "iso-local": "2025-11-21 11:51:07,123 - root - ERROR - frobnicator exploded, cannot continue",
    "klog": "F1121 11:51:07.123456       1 main.go:200] frobnicator exploded, cannot continue",
    "logrus": 'time="2025-11-21T11:51:42Z" level=fatal msg="frobnicator exploded, cannot continue"',
    "logrus-tty": "FATA[0004] frobnicator exploded, cannot continue",
    "go-log": "2017/12/08 06:41:45 Error: frobnicator exploded, cannot continue",
    "mofed": "[21-Nov-25_11:51:14] ERROR: frobnicator exploded, cannot continue",
    "json": '{"level":"error","ts":1763725867.0,"logger":"controllers","msg":"frobnicator exploded, cannot continue"}',
    "syslog": "Nov 21 11:51:07 gpu-node-1 kernel: [  102.000001] NVRM: frobnicator failed on GPU 0000:18:00.0",
    "dmesg": "[  102.000001] NVRM: frobnicator failed on GPU 0000:18:00.0",
    "dmesg-T": "[Fri Nov 21 11:57:56 2025] NVRM: frobnicator failed on GPU 0000:18:00.0",
    "audit": 'type=AVC msg=audit(1763725867.123:4568): avc:  denied  { write } for  pid=2212 comm="nvidia-ctk" name="nvidia"',
}
NOT_LOGS = {"date", "rfc1123"}  # a clock line, not a log shape: nothing to inject into


def test_every_log_shape_has_an_injected_line():
    assert {f.id for f in FORMATS} - NOT_LOGS == set(FATAL)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.id in FATAL], ids=lambda f: f.id)
@pytest.mark.parametrize("name", ["app.log", "paste.txt"])
def test_an_injected_fatal_line_is_never_healthy(tmp_path: Path, fmt, name):
    lines = [fmt.samples[0], FATAL[fmt.id], *fmt.samples[1:]]  # after a complete line (a CRI `P` line joins the next)
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = diagnose(read_file(path))
    assert report.verdict not in ("healthy", "no-verdict"), (fmt.id, report.verdict, report.headline)
    cited = {(e.artifact, e.line) for f in report.findings for e in f.evidence}
    cited |= {tuple(c.rsplit(":", 1)) for f in report.findings for c in f.facts.get("all_lines", [])}
    assert (name, 2) in cited or (name, "2") in cited, (fmt.id, [f.title for f in report.findings])
