"""How fast the log parser reads a big log, as a ratio to `for line in f: pass` measured in the same run.

    PYTHONPATH=src python bench/bench_logs.py [--mb 200] [--keep]

Writes a generated must-gather-shaped log (a mix of every line shape the parser knows) to a temp file,
then times: the plain line loop (baseline), decoding + normalising into a Document as sources do, and
parse_log on it. The ratio is what to watch across machines; the absolute time is what the user waits.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

from gpusleuth.model.document import Document
from gpusleuth.parsers.logs import parse_log
from gpusleuth.sources.text import decode, normalise

POD = "nvidia-driver-daemonset-418.94.202510230424-0-564xm"
SHAPES = (
    f"[pod/{POD}/k8s-driver-manager] time=2025-11-21T11:51:@SZ level=info msg=Waiting for MOFED to be installed",
    f"[pod/{POD}/nvidia-driver-ctr] + modprobe -a nvidia-peermem",
    f"[pod/{POD}/nvidia-driver-ctr]   CC [M]  /usr/src/nvidia-580.95.05/kernel/nvidia/nv-pci.o",
    f"[pod/{POD}/nvidia-driver-ctr] Fri Nov 21 11:56:@S UTC 2025",
    "[pod/mofed-rhcos4.18-554bdbd7cf-ds-x7k2p/mofed-container] [21-Nov-25_11:58:@S] Setting driver ready state",
    "[pod/nvidia-device-plugin-daemonset-v46gq/nvidia-device-plugin] I1121 11:59:@S.011552       1 server.go:146] Registered device plugin for 'nvidia.com/gpu' with Kubelet",
    "[pod/nvidia-container-toolkit-daemonset-sxfkr/nvidia-container-toolkit-ctr] 2025-11-21T11:58:@S.123456789Z stdout F time=\"2025-11-21T11:58:40Z\" level=info msg=\"Restarting containerd\"",
    '[pod/gpu-operator-7746c56fcd-4ws9n/gpu-operator] {"level":"info","ts":1763725866.123456,"logger":"controllers.ClusterPolicy","msg":"Reconciling ClusterPolicy"}',
    "[pod/nvidia-driver-daemonset-418.94.202510230424-0-564xm/nvidia-driver-ctr] modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument",
)


def generate(path: str, megabytes: int) -> None:
    rnd = random.Random(7)
    target = megabytes * 1024 * 1024
    written = 0
    with open(path, "w", encoding="utf-8") as fh:
        while written < target:
            chunk = "\n".join(rnd.choice(SHAPES).replace("@S", f"{rnd.randrange(60):02d}") for _ in range(10000)) + "\n"
            fh.write(chunk)
            written += len(chunk)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    fd, path = tempfile.mkstemp(prefix="gpusleuth-bench-", suffix=".log")
    os.close(fd)
    try:
        generate(path, args.mb)
        t0 = time.perf_counter()
        with open(path, encoding="utf-8") as f:
            for _line in f:
                pass
        baseline = time.perf_counter() - t0

        t0 = time.perf_counter()
        with open(path, "rb") as fh:
            text, _ = decode(fh.read())
        lines, _ = normalise(text)
        doc = Document(os.path.basename(path), tuple(lines))
        del text, lines
        load = time.perf_counter() - t0

        t0 = time.perf_counter()
        log = parse_log(doc)
        parse = time.perf_counter() - t0
        n = len(doc.lines)
        print(f"{args.mb} MB, {n:,} lines, {len(log.lines):,} LogLines")
        print(f"baseline `for line in f: pass`: {baseline:6.2f} s")
        print(f"decode + normalise (sources):   {load:6.2f} s  ({load / baseline:5.1f}x baseline)")
        print(f"parse_log:                      {parse:6.2f} s  ({parse / baseline:5.1f}x baseline, {n / parse / 1e6:.2f} M lines/s)")
    finally:
        if not args.keep:
            os.unlink(path)


if __name__ == "__main__":
    main()
