"""A structure-aware fuzzer for `diagnose`: YAML anchors and bombs, deep nesting, long lines, archives with
links and escapes, and mutations of the bundled examples. Standard library only.

Every case is written to a temporary folder or archive and diagnosed in this process. A case fails when an
exception leaves the pipeline (anything but SourceError from opening it), when a parser or check records a
bug (the report's "internal error" gaps), when the JSON report does not render, or when it runs past the
time budget. Failing inputs are kept with --keep.

    PYTHONPATH=src python tests/hostile/fuzz.py --runs 2000 --start 1 --keep /tmp/fuzz-failures
    PYTHONPATH=src python tests/hostile/fuzz.py --minutes 30

tests/hostile/test_fuzz.py runs a few dozen cases of every generator on each test run.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import random
import shutil
import signal
import sys
import tarfile
import tempfile
import threading
import time
import traceback
import warnings
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

from gpusleuth.analysis.diagnose import analyse, build_facts
from gpusleuth.report.json_report import render
from gpusleuth.sources.loose import SourceError, examples_root, open_source
from gpusleuth.sources.text import MAX_LINE

Case = Callable[[random.Random, Path], Path]  # writes a case under the folder, returns the SOURCE path


def _k8s_header(rng: random.Random) -> str:
    kind = rng.choice(["Pod", "ConfigMap", "DaemonSet", "Node", "ClusterPolicy"])
    api = {"DaemonSet": "apps/v1", "ClusterPolicy": "nvidia.com/v1"}.get(kind, "v1")
    return f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: fuzz-{rng.randrange(1000)}\n  namespace: gpu-operator\n"


def yaml_anchors(rng: random.Random, root: Path) -> Path:
    """Objects with anchors, aliases, merge keys; sometimes a bomb of random shape, or an alias to itself."""
    out = [_k8s_header(rng), "spec:"]
    names: list[str] = []
    for i in range(rng.randrange(1, 12)):
        name = f"a{i}"
        if names and rng.random() < 0.6:
            refs = ", ".join(f"*{rng.choice(names)}" for _ in range(rng.randrange(1, 12)))
            out.append(f"  k{i}: &{name} [{refs}]")
        elif names and rng.random() < 0.3:
            out.append(f"  k{i}: &{name}\n    <<: *{rng.choice(names)}\n    extra: {i}")
        else:
            out.append(f"  k{i}: &{name} {{key: nvidia.com/gpu, operator: Exists, value: \"{'x' * rng.randrange(5)}\"}}")
        names.append(name)
    if rng.random() < 0.1:
        out.append("  self: &self [1, *self]")
    if rng.random() < 0.5:
        out.append("---\n" + _k8s_header(rng) + "data: {a: b}")
    path = root / rng.choice(["pods.yaml", "values.yaml", "config.yaml", "x"])
    path.write_text("\n".join(out) + "\n")
    return root


def deep_nesting(rng: random.Random, root: Path) -> Path:
    depth = rng.choice([50, 999, 1001, 3000])
    kind = rng.randrange(4)
    if kind == 0:
        text = _k8s_header(rng) + "spec: " + "[" * depth + "]" * depth + "\n"
    elif kind == 1:
        text = '{"apiVersion": "v1", "kind": "Pod", "spec": ' + "[" * depth + "]" * depth + "}\n"
    elif kind == 2:
        text = _k8s_header(rng) + "spec:\n" + "".join(" " * (2 * (i + 1)) + f"k{i}:\n" for i in range(min(depth, 400)))
    else:
        d = root
        for _ in range(rng.randrange(100, 1200)):
            d = d / "d"
            d.mkdir()
        (d / "dmesg.txt").write_text("NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n")
        return root
    (root / "deep.txt").write_text(text)
    return root


def long_lines(rng: random.Random, root: Path) -> Path:
    n = rng.choice([MAX_LINE - 1, MAX_LINE, MAX_LINE + 1, 5 * MAX_LINE])
    items = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "ml", "labels": {"pad": "x" * 100}},
              "spec": {"nodeName": "gpu-node-1"}, "status": {"phase": "Running"}} for i in range(rng.randrange(1, 400))]
    blob = json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}, separators=(",", ":"))
    if rng.random() < 0.3:
        blob = blob[: rng.randrange(1, len(blob))]
    (root / "pods.json").write_text(blob + "\n")
    (root / "log.txt").write_text("I0101 00:00:00.000000 1 x.go:1] " + "y" * n + "\nNVRM: Xid (PCI:0000:3b:00): 79\n")
    if rng.random() < 0.3:
        (root / "one.txt").write_text("{" * n)
    return root


def _tar_member(tar: tarfile.TarFile, rng: random.Random, name: str, data: bytes, kind: int) -> None:
    info = tarfile.TarInfo(name)
    if kind == 1:
        info.type, info.linkname = tarfile.SYMTYPE, rng.choice(["/etc/passwd", "../../x", "dmesg.txt"])
    elif kind == 2:
        info.type, info.linkname = tarfile.LNKTYPE, rng.choice(["/etc/shadow", "dmesg.txt"])
    elif kind == 3:
        info.type = rng.choice([tarfile.FIFOTYPE, tarfile.CHRTYPE, tarfile.BLKTYPE])
    else:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        return
    tar.addfile(info)


def archives(rng: random.Random, root: Path) -> Path:
    """tar/zip with escaping names, links, special members, duplicates, fake .gz, nested archives, cut tails."""
    names = ["dmesg.txt", "../escape.txt", "/abs/path.txt", "a/../../b.txt", "C:\\win.txt", "ok/containerd.toml",
             "logs.gz", "inner.tar.gz", "", "./", "dup.txt", "dup.txt", "x" * 300]
    payloads = [b"NVRM: Xid (PCI:0000:3b:00): 79, pid=1\n", b"\x1f\x8b\x08garbage", gzip.compress(b"kubectl get pods\n" * 10),
                b"\x00" * 100, "NAME READY\n".encode("utf-16-le"), b"version = 2\n[plugins]\n"]
    if rng.random() < 0.5:
        path = root.parent / f"{root.name}.tar.gz"
        with tarfile.open(path, "w:gz") as tar:
            for _ in range(rng.randrange(1, 10)):
                name = rng.choice(names) or "empty"
                _tar_member(tar, rng, name, rng.choice(payloads), rng.choice([0, 0, 1, 2, 3]))
        if rng.random() < 0.3:
            data = path.read_bytes()
            path.write_bytes(data[: rng.randrange(10, len(data))])
        return path
    path = root.parent / f"{root.name}.zip"
    with warnings.catch_warnings(), zipfile.ZipFile(path, "w") as zf:
        warnings.simplefilter("ignore")  # duplicate names are the point
        for _ in range(rng.randrange(1, 10)):
            name = rng.choice(names) or "empty"
            info = zipfile.ZipInfo(name)
            if rng.random() < 0.2:
                info.external_attr = 0o120777 << 16  # a symlink
            zf.writestr(info, rng.choice(payloads))
    return path


def _mutate(rng: random.Random, data: bytes) -> bytes:
    for _ in range(rng.randrange(1, 6)):
        op = rng.randrange(9)
        at = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1:]
        elif op == 1:
            data = data[:at]
        elif op == 2:
            data = data[:at] + b"\x00" * rng.randrange(1, 4) + data[at:]
        elif op == 3:
            data = data[:at] + rng.choice([b"\n$ kubectl get pods -A\n", b"\n# cat /etc/containerd/config.toml\n", b"\n```\n", b"\n> "]) + data[at:]
        elif op == 4:
            end = min(len(data), at + rng.randrange(1, 2000))
            data = data[:end] + data[at:end] * rng.randrange(1, 4) + data[end:]
        elif op == 5:
            data = data.replace(b"\n", b"\r\n")
        elif op == 6:
            try:
                data = data.decode("utf-8").encode(rng.choice(["utf-16-le", "utf-16-be", "utf-32-le", "utf-16"]))
            except UnicodeDecodeError:
                pass
        elif op == 7:
            data = data[:at] + b"y" * rng.choice([MAX_LINE, 3 * MAX_LINE]) + data[at:]
        else:
            data = data[:at] + b"&a [*a]\n" + data[at:]
    return data


def mutated_examples(rng: random.Random, root: Path) -> Path:
    ex = rng.choice(sorted(p for p in examples_root().iterdir() if p.is_dir()))
    files = sorted(p for p in ex.rglob("*") if p.is_file())
    for f in files:
        rel = f.relative_to(ex)
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        data = f.read_bytes()
        (root / rel).write_bytes(_mutate(rng, data) if rng.random() < 0.3 else data)
    return root


GENERATORS: dict[str, Case] = {
    "yaml-anchors": yaml_anchors, "deep-nesting": deep_nesting, "long-lines": long_lines,
    "archives": archives, "mutated-examples": mutated_examples,
}


def run_case(gen: str, number: int, budget: float = 30.0) -> str | None:
    """None when the case passes, else what went wrong (one paragraph)."""
    rng = random.Random(f"{gen}:{number}")  # case N of a generator is always the same input
    work = Path(tempfile.mkdtemp(prefix="gpusleuth-fuzz-"))
    try:
        case = work / "case"
        case.mkdir()
        source = GENERATORS[gen](rng, case)
        t0 = time.perf_counter()
        with _alarm(3 * budget):
            try:
                src = open_source(str(source))
            except SourceError:
                return None
            facts = build_facts(src)
            report = analyse(facts, {"description": "fuzz"})
            json.loads(render(report))
        took = time.perf_counter() - t0
        if facts.errors:
            return f"{gen} case {number}: recorded bug: {facts.errors[0]}"
        if took > budget:
            return f"{gen} case {number}: took {took:.1f} s (budget {budget:.0f} s)"
        return None
    except Exception:  # noqa: BLE001 - what the fuzzer is looking for
        return f"{gen} case {number}: escaped: {traceback.format_exc(limit=-4)}"
    finally:
        _remove(work)


class Hung(Exception):
    pass


@contextmanager
def _alarm(seconds: float):
    """A hang becomes an exception (the main thread on POSIX; elsewhere the budget is checked afterwards)."""
    usable = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def ring(*_):
        raise Hung(f"no answer after {seconds:.0f} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _remove(path: Path) -> None:
    """shutil.rmtree recurses per level: deep trees go bottom-up with an explicit stack."""
    try:
        shutil.rmtree(path)
    except RecursionError:
        for dirpath, _dirs, files in _walk_bottom_up(path):
            for f in files:
                os.unlink(os.path.join(dirpath, f))
            os.rmdir(dirpath)


def _walk_bottom_up(root: Path):
    order, stack = [], [str(root)]
    while stack:
        d = stack.pop()
        with os.scandir(d) as it:
            entries = list(it)
        order.append((d, [e.path for e in entries if e.is_dir(follow_symlinks=False)],
                      [e.name for e in entries if not e.is_dir(follow_symlinks=False)]))
        stack.extend(p for p in order[-1][1])
    return reversed(order)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200, help="cases per generator")
    ap.add_argument("--minutes", type=float, default=None, help="run until this much time has passed instead")
    ap.add_argument("--start", type=int, default=0, help="number of the first case (cases are reproducible by number)")
    ap.add_argument("--only", choices=sorted(GENERATORS), action="append", help="only these generators")
    ap.add_argument("--keep", type=Path, default=None, help="write the failures' descriptions here")
    args = ap.parse_args(argv)
    gens = args.only or sorted(GENERATORS)
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    failures, runs, number = [], 0, args.start
    while (deadline is None and number < args.start + args.runs) or (deadline is not None and time.monotonic() < deadline):
        for gen in gens:
            problem = run_case(gen, number)
            runs += 1
            if problem:
                failures.append(problem)
                print(problem, file=sys.stderr)
        number += 1
    print(f"{runs} runs, {len(failures)} failure(s)")
    if args.keep and failures:
        args.keep.mkdir(parents=True, exist_ok=True)
        (args.keep / "failures.txt").write_text("\n\n".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
