"""Start-up time of the command line, as ratios to a bare interpreter measured in the same run.

    PYTHONPATH=src python bench/bench_startup.py [--runs 20] [--src OTHER/src] [--no-cache]

Runs, one after the other and interleaved round by round (so that a busy minute hits all of them alike):
`python -c pass` (the baseline), `gpusleuth --version`, `gpusleuth diagnose example:peermem-race --format json`
and the same diagnosis rendered for the terminal (with `--no-cache`, also the JSON diagnosis with the parsed
knowledge tables' cache turned off, which is what the first run after an install or upgrade costs). Each is a
fresh subprocess; the table gives the median and the best of the runs, each median as a ratio to (and
milliseconds above) the baseline's, and the median CPU time (user + system) of each command, which a busy machine
stretches less than the wall clock.

Bytecode is written to a private cache first (PYTHONPYCACHEPREFIX), so that what is measured is an installed
tool's start-up, not compiling the sources (a checkout run with PYTHONDONTWRITEBYTECODE=1 compiles every module
on every run). `--src` measures another checkout's sources the same way, for a before/after in one run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "src"


def commands(src: Path) -> dict[str, list[str]]:
    gs = [sys.executable, "-m", "gpusleuth"]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        f"--version ({src.parent.name})": gs + ["--version"],
        f"diagnose json ({src.parent.name})": gs + ["diagnose", "example:peermem-race", "--format", "json"],
        f"diagnose text ({src.parent.name})": gs + ["diagnose", "example:peermem-race", "--no-pager"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--src", action="append", default=[], help="another checkout's src/ to measure beside this one")
    ap.add_argument("--no-cache", action="store_true",
                    help="also run the JSON diagnosis with the knowledge cache turned off (GPUSLEUTH_CACHE_DIR=)")
    args = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="gpusleuth-pyc-")
    jobs: dict[str, tuple[list[str], dict]] = {}
    for src in [HERE, *map(lambda p: Path(p).resolve(), args.src)]:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPATH=str(src), PYTHONPYCACHEPREFIX=os.path.join(cache, str(abs(hash(str(src))))),
                   COLUMNS="100")
        for name, cmd in commands(src).items():
            jobs[name] = (cmd, env)
        if src == HERE and args.no_cache:  # the same diagnosis parsing every knowledge table, as a first run does
            jobs[f"diagnose json, no cache ({src.parent.name})"] = (
                commands(src)[f"diagnose json ({src.parent.name})"], {**env, "GPUSLEUTH_CACHE_DIR": ""})
    for name, (cmd, env) in jobs.items():  # warm-up: writes the bytecode cache, and each command must work
        proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode not in (0, 1):  # 1: the example has findings
            raise SystemExit(f"{name} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    times: dict[str, list[float]] = {name: [] for name in jobs}
    cpu: dict[str, list[float]] = {name: [] for name in jobs}
    load = [os.getloadavg()[0]]
    for _ in range(args.runs):
        for name, (cmd, env) in jobs.items():
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    load.append(os.getloadavg()[0])
    base = statistics.median(times["python -c pass"])
    print(f"{args.runs} runs each, interleaved; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"load {load[0]:.2f} before, {load[1]:.2f} after")
    # CPU time (user + system of the child) moves less than the wall clock when other processes share the CPUs
    print(f"{'command':<36} {'median':>9} {'best':>9} {'ratio':>7} {'above bare':>11} {'cpu median':>11}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<36} {med * 1000:7.1f}ms {min(ts) * 1000:7.1f}ms {med / base:6.1f}x {(med - base) * 1000:9.1f}ms"
              f" {statistics.median(cpu[name]) * 1000:9.1f}ms")


if __name__ == "__main__":
    main()
