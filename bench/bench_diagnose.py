"""How long does a whole diagnosis take on a large must-gather, against what a human would run?

Builds a synthetic must-gather of N GPU nodes from the bundled peermem-race example (every operand pod
and log replicated per node, names made unique), then times in the same run:

  baseline-read   Python reading every file and splitting it into lines (the I/O floor)
  baseline-grep   `grep -c -E 'error|Error|ERROR'` over the same files (what a person does first)
  diagnose        the full gpusleuth pipeline: sniff, parse, views, checks, ranking, report

and prints the ratios diagnose/baseline. Timings vary on shared 2-core machines: compare ratios, not
seconds. Usage: python bench/bench_diagnose.py [--nodes 40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.report.json_report import render
from gpusleuth.sources import examples_root, open_source

PER_NODE = ("gpu_operand_pod_",)  # files replicated per node; the cluster-wide ones are kept once


def build(root: Path, nodes: int) -> int:
    src = examples_root() / "peermem-race"
    size = 0
    for f in sorted(src.iterdir()):
        if f.name == "example.toml":
            continue
        text = f.read_text(encoding="utf-8")
        if f.name.startswith(PER_NODE):
            for n in range(nodes):
                name = f.name.replace("564xm", f"n{n:04d}").replace("sxfkr", f"t{n:04d}").replace("v46gq", f"d{n:04d}").replace("cd78t", f"e{n:04d}")
                body = text.replace("564xm", f"n{n:04d}").replace("sxfkr", f"t{n:04d}").replace("v46gq", f"d{n:04d}").replace("cd78t", f"e{n:04d}")
                (root / name).write_text(body, encoding="utf-8")
                size += len(body)
        else:
            (root / f.name).write_text(text, encoding="utf-8")
            size += len(text)
    return size


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="gpusleuth-bench-"))
    try:
        size = build(root, args.nodes)
        files = sorted(p for p in root.iterdir())

        def read_all():
            for p in files:
                p.read_text(encoding="utf-8").split("\n")

        def grep():
            subprocess.run(["grep", "-c", "-E", "error|Error|ERROR", *map(str, files)], capture_output=True, check=False)

        def run():
            render(diagnose(open_source(str(root))))

        t_read, t_grep, t_diag = best(read_all, args.repeat), best(grep, args.repeat), best(run, args.repeat)
        print(f"synthetic must-gather: {args.nodes} nodes, {len(files)} files, {size / 1e6:.1f} MB")
        print(f"baseline-read  {t_read:8.3f} s")
        print(f"baseline-grep  {t_grep:8.3f} s")
        print(f"diagnose       {t_diag:8.3f} s   ({size / 1e6 / t_diag:.1f} MB/s)")
        print(f"ratio diagnose/read {t_diag / t_read:6.1f}x   diagnose/grep {t_diag / t_grep:6.1f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
