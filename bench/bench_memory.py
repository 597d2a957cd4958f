"""Peak memory against input size: does RSS grow with what is kept, or with the input's lines?

    PYTHONPATH=src python bench/bench_memory.py [--sizes 16,64,256] [--gb] [--shapes short-log,short-bundle,long-log,long-bundle]
                                               [--src OTHER_CHECKOUT/src] [--mem-limit 3G] [--timeout 900] [--stage read]

Generates, per size (MiB; --gb adds 1024), four inputs of container-log text made of realistic lines (a klog or
logrus line with a timestamp; one line in 5,000 an error, one in 20,000 a known driver signature):

  short-log     one log file of ~60-byte lines         short-bundle  a folder of 4 MiB log files of ~60-byte lines
  long-log      one log file of ~1 KiB lines           long-bundle   a folder of 4 MiB log files of ~1 KiB lines
  bugreports    a folder of 4 MiB nvidia-bug-report logs: a kernel log with an Xid, then a section nothing analyses
                (what memory costs when the input is read but not kept)

Each input is diagnosed in a fresh subprocess (imports + open_source + diagnose + the JSON report) that prints its
wall time and peak RSS (VmHWM from /proc/self/status: its own, where ru_maxrss can carry the forking process's); with --stage read, the child only opens the source and
iterates its documents (the readers alone, without the parsers and what they keep). In the same run, a second subprocess only reads every
file of the input in 1 MiB blocks (what `cat` does): the baseline, for the time and memory that reading alone
costs. A child is limited to --mem-limit of address space (default 3 GiB), so that a run that would grow past it
stops with "over the limit" instead of taking a shared machine's memory. --src runs the same inputs through
another checkout (today's main, say): run both in the same minutes and compare within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SHAPES = ("short-log", "short-bundle", "long-log", "long-bundle", "bugreports")
FILE_MIB = 4  # one log file of a bundle: a pod log of a busy operand

_ERROR = 'time="2025-09-26T18:47:{s:02d}Z" level=error msg="failed to get node labels: connection refused" node=gpu-node-{n:04d}'
_SIGNATURE = "NVRM: Xid (PCI:0000:{n:02x}:00): 79, pid=1234, name=python3, GPU has fallen off the bus."


def _line(i: int, width: int, rng: random.Random) -> str:
    """One log line of about ``width`` characters: mostly info lines, a few errors and known signatures."""
    s, n = i % 60, i % 10_000
    if i % 20_000 == 19_999:
        return _SIGNATURE.format(n=n % 256)
    if i % 5_000 == 4_999:
        return _ERROR.format(s=s, n=n)
    head = f"I0926 18:{(i // 60) % 60:02d}:{s:02d}.{i % 1_000_000:06d}       1 reconcile.go:{100 + i % 900}] "
    body = f"reconciled state=ready node=gpu-node-{n:04d} generation={i} "
    if len(head) + len(body) < width:
        body += "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(width - len(head) - len(body)))
    return head + body


def _write_log(path: Path, size: int, width: int, start: int, rng: random.Random) -> int:
    """A log of ``size`` bytes; returns the index of the next line (line numbers go on across files)."""
    i = start
    with path.open("w", encoding="utf-8") as fh:
        written = 0
        block: list[str] = []
        while written < size:
            ln = _line(i, width, rng) + "\n"
            block.append(ln)
            written += len(ln)
            i += 1
            if len(block) >= 4096:
                fh.write("".join(block))
                block = []
        fh.write("".join(block))
    return i


def generate(root: Path, shape: str, mib: int) -> Path:
    """The input of one shape and size under ``root``; its path."""
    rng = random.Random(mib)
    width = 60 if shape.startswith("short") else 1024
    size = mib << 20
    if shape.endswith("-log"):
        path = root / "nvidia-driver-ctr.log"
        _write_log(path, size, width, 0, rng)
        return path
    folder = root / "bundle"
    if shape == "bugreports":
        folder.mkdir()
        for n in range(max(1, size // (FILE_MIB << 20))):
            with (folder / f"nvidia-bug-report_gpu-node-{n:05d}.log").open("w", encoding="utf-8") as fh:
                fh.write("Start of NVIDIA bug report log file.\n\n" + "_" * 44 + "\n\ndmesg:\n\n" + _SIGNATURE.format(n=n % 256) + "\n\n"
                         + "_" * 44 + "\n\n*** /var/log/Xorg.0.log\n\n")
                line = '[ {i}.000] (II) NVIDIA(0): Setting mode "DFP-0:nvidia-auto-select" on screen 0\n'
                fh.write("".join(line.format(i=i) for i in range((FILE_MIB << 20) // len(line.format(i=0)))))
        return folder
    i = 0
    for n in range(max(1, size // (FILE_MIB << 20))):
        pod = folder / "pods" / f"nvidia-driver-daemonset-{n:05d}"
        pod.mkdir(parents=True, exist_ok=True)
        i = _write_log(pod / "nvidia-driver-ctr.log", min(FILE_MIB << 20, size), width, i, rng)
    return folder


_PEAK = """
import resource


def peak():  # VmHWM is this process's own; ru_maxrss can carry the RSS of the process that forked it
    try:
        return next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

# What a gpusleuth stage's child does first: the memory limit, the clock, the whole input read however long it takes.
_OPENING = _PEAK + """
import json, resource, sys, time
limit = int(sys.argv[2])
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
t = time.perf_counter()
import gpusleuth.sources.loose as loose
from gpusleuth.sources import open_source
if hasattr(loose, "TIME_BUDGET_S"):
    loose.TIME_BUDGET_S = None  # measure the whole input, however long it takes
"""

_DIAGNOSE = _OPENING + """
from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.report.json_report import render
report = diagnose(open_source(sys.argv[1]))
out = render(report)
print(json.dumps({"seconds": time.perf_counter() - t, "rss_mib": peak(),
                  "findings": len(report.findings), "cut": any(g.what == "partial-input" for g in report.gaps)}))
"""

_READ = _OPENING + """
src = open_source(sys.argv[1])
lines, docs = 0, iter(src.documents)
while (d := next(docs, None)) is not None:
    lines += len(d.lines)
    del d
print(json.dumps({"seconds": time.perf_counter() - t, "rss_mib": peak(),
                  "lines": lines, "cut": any(g.what == "partial-input" for g in src.gaps)}))
"""

_CAT = _PEAK + """
import json, os, resource, sys, time
t = time.perf_counter()
root = sys.argv[1]
paths = [root] if os.path.isfile(root) else [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
n = 0
for p in paths:
    with open(p, "rb") as fh:
        while chunk := fh.read(1 << 20):
            n += len(chunk)
print(json.dumps({"seconds": time.perf_counter() - t, "rss_mib": peak(), "bytes": n}))
"""


def measure(code: str, path: Path, src: str | None, mem_limit: int, timeout: float) -> dict:
    """Run ``code`` in a fresh interpreter on ``path``: its JSON line, or {"error": why}."""
    src = src or str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    try:
        r = subprocess.run([sys.executable, "-c", code, str(path), str(mem_limit)], capture_output=True, text=True,
                           timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:g} s"}
    if r.returncode:
        return {"error": "over the memory limit" if "MemoryError" in r.stderr else r.stderr.strip().splitlines()[-1][:80]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def _size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().rstrip("ib")
    return int(float(t[:-1]) * units[t[-1]]) if t[-1:] in units else int(t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="16,64,256", help="input sizes in MiB, comma-separated")
    ap.add_argument("--gb", action="store_true", help="add a 1 GiB input of each shape")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="which of " + ", ".join(SHAPES))
    ap.add_argument("--src", help="diagnose with the gpusleuth under this src/ (another checkout), in the same run")
    ap.add_argument("--mem-limit", default="3G", help="address-space limit of each child (0: none)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds allowed per child")
    ap.add_argument("--stage", choices=("diagnose", "read"), default="diagnose",
                    help="read: only open the source and iterate its documents (the readers alone, no parser)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()] + ([1024] if args.gb else [])
    shapes = [s for s in args.shapes.split(",") if s in SHAPES]
    limit = _size(args.mem_limit)
    cut_seen = False
    runs = [("this", None)] + ([("other", args.src)] if args.src else [])
    print(f"{'shape':<13} {'MiB':>5} {'files':>6} {'cat s':>6} {'cat MiB':>8}  " + "  ".join(f"{name + ' s':>9} {name + ' RSS MiB':>14}" for name, _ in runs))
    for shape in shapes:
        for mib in sizes:
            root = Path(tempfile.mkdtemp(prefix="gpusleuth-mem-"))
            try:
                path = generate(root, shape, mib)
                files = 1 if path.is_file() else sum(1 for p in path.rglob("*") if p.is_file())
                cat = measure(_CAT, path, None, 0, args.timeout)
                cells = []
                for _name, src in runs:  # alternately, in the same minutes
                    m = measure(_DIAGNOSE if args.stage == "diagnose" else _READ, path, src, limit, args.timeout)
                    if "error" in m:
                        cells.append(f"{m['error']:>24}")
                    else:
                        cut = "*" if m["cut"] else " "
                        cut_seen = cut_seen or m["cut"]
                        cells.append(f"{m['seconds']:>9.1f} {m['rss_mib']:>13.0f}{cut}")
                print(f"{shape:<13} {mib:>5} {files:>6} {cat['seconds']:>6.2f} {cat['rss_mib']:>8.0f}  " + "  ".join(cells), flush=True)
            finally:
                shutil.rmtree(root, ignore_errors=True)
    if cut_seen:
        print("* the input was read only in part (a budget or cap reached)")


if __name__ == "__main__":
    main()
