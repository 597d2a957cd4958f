"""Peak RSS per input, asserted loosely (a bound, not a timing), each in a fresh interpreter.

Bounds (MiB of peak RSS, VmHWM, imports included: ~45 MiB of it), measured on the development machine:

  96 MiB of bug reports (24 files; a kernel log each, the rest a section nothing analyses)
      read file by file: ~50 MiB; with the whole input read before parsing: ~240 MiB.           bound 120
  64 MiB of container logs (16 files of 4 MiB, ~60-byte lines: big logs, of which the lines that matter are kept)
      read file by file: ~70 MiB; the whole input read before parsing: ~190 MiB; every line
      kept as a record as well: ~470 MiB.                                                       bound 120
"""

import json
import os
import subprocess
import sys
from pathlib import Path

SEP = "_" * 44
XID = "[ 99.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus."

_CHILD = """
import json, resource, sys
from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.sources import open_source
report = diagnose(open_source(sys.argv[1]))
def peak():  # VmHWM is this process's own; ru_maxrss can carry the RSS of the process that forked it (a big pytest)
    try:
        return next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"rss_mib": peak(), "codes": sorted({f.code for f in report.findings}),
                  "partial": any(g.what == "partial-input" for g in report.gaps)}))
"""


def _peak(path: Path) -> dict:
    src = str(Path(__file__).resolve().parents[2] / "src")  # this checkout's, whatever another test left in sys.modules
    env = {**os.environ, "PYTHONPATH": src}
    r = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, env=env, timeout=600, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def _write(path: Path, head: list[str], line: str, mib: int) -> None:
    n = (mib << 20) // (len(line.format(i=0)) + 1)
    path.write_text("\n".join(head) + "\n" + "".join(line.format(i=i) + "\n" for i in range(n)))


def test_a_folder_of_bug_reports_is_read_one_file_at_a_time(tmp_path):
    for n in range(24):
        head = ["Start of NVIDIA bug report log file.", "", SEP, "", "dmesg:", "", XID, "", SEP, "", "*** /var/log/Xorg.0.log", ""]
        _write(tmp_path / f"nvidia-bug-report_gpu-node-{n:03d}.log", head, '[ {i}.000] (II) NVIDIA(0): Setting mode "DFP-0" on screen 0', 4)
    got = _peak(tmp_path)
    assert "HW001" in got["codes"] and not got["partial"]
    assert got["rss_mib"] < 120, got


def test_a_folder_of_container_logs_stays_under_its_bound(tmp_path):
    for n in range(16):
        _write(tmp_path / f"nvidia-driver-daemonset-{n:03d}.log", [XID], "I0926 18:47:01.123456       1 reconcile.go:311] reconciled {i}", 4)
    got = _peak(tmp_path)
    assert any(c.startswith("HW") for c in got["codes"]), got
    assert got["rss_mib"] < 120, got
