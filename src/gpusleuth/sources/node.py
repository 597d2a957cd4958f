"""The local node as a source: NVML's view of every GPU and the kernel log, as two artifacts.

``gpusleuth node`` does not analyse anything itself. It writes what it read as the artifacts
``gpusleuth-node.json`` (parsers/node_probe.py) and ``kernel.log`` (dmesg text, read by the log parser),
and runs the same pipeline as ``diagnose``; ``--save DIR`` writes the same two files, so
``gpusleuth diagnose DIR`` later gives the same findings.

The kernel log is read from whatever is permitted: ``dmesg``, else ``journalctl -k``, else ``/dev/kmsg``; each
refusal is recorded, and if all fail the report says the kernel log could not be seen.
"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from gpusleuth.model.finding import Gap
from gpusleuth.parsers import node_probe
from gpusleuth.sources.loose import Source
from gpusleuth.sources.nvml import read
from gpusleuth.sources.text import normalise, split_documents

KERNEL_ARTIFACT = "kernel.log"
_KMSG_MAX = 200_000  # records


def node_name() -> str:
    """The Kubernetes node name when the probe runs in a pod (NODE_NAME from the downward API), else the host name."""
    return os.environ.get("NODE_NAME") or socket.gethostname()


def _run(argv: list[str]) -> tuple[str | None, str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, errors="replace")
    except FileNotFoundError:
        return None, f"{argv[0]}: not installed"
    except subprocess.TimeoutExpired:
        return None, f"{argv[0]}: timed out"
    if done.returncode != 0 or not done.stdout.strip():
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return None, f"{' '.join(argv)}: {why}"
    return done.stdout, ""


def _kmsg() -> tuple[str | None, str]:
    """/dev/kmsg records ("6,1234,5678901,-;message") turned into dmesg's "[seconds] message" lines."""
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return None, f"/dev/kmsg: {exc.strerror}"
    lines = []
    try:
        while len(lines) < _KMSG_MAX:
            try:
                rec = os.read(fd, 8192).decode(errors="replace")
            except OSError as exc:
                if exc.errno == errno.EAGAIN:
                    break
                if exc.errno == errno.EPIPE:  # a record was overwritten while reading; go on
                    continue
                return None, f"/dev/kmsg: {exc.strerror}"
            head, _, msg = rec.partition(";")
            parts = head.split(",")
            usec = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 0
            lines.append(f"[{usec // 1_000_000:5d}.{usec % 1_000_000:06d}] {msg.splitlines()[0] if msg else ''}")
    finally:
        os.close(fd)
    return ("\n".join(lines) + "\n", "") if lines else (None, "/dev/kmsg: empty")


KernelReader = Callable[[], tuple[str | None, list[str]]]


def read_kernel_log() -> tuple[str | None, list[str]]:
    """(text, refusals): the first source that works, and why the ones before it did not."""
    refusals = []
    for attempt in (lambda: _run(["dmesg", "-T"]), lambda: _run(["journalctl", "-k", "-b", "--no-pager", "-o", "short-iso"]), _kmsg):
        text, why = attempt()
        if text:
            return text, refusals
        refusals.append(why)
    return None, refusals


def probe(nvml: Any, kernel: KernelReader = read_kernel_log, node: str | None = None) -> Source:
    """Read the node (NVML through ``nvml``, the kernel log through ``kernel``) into a Source of two artifacts."""
    node = node or node_name()
    reading = read(nvml)
    text, refusals = kernel()
    notes = []
    if text is None:
        notes.append("kernel log not readable, Xids could not be seen (" + "; ".join(refusals) + "); run as root or in a privileged pod")
    collected = datetime.now(timezone.utc).isoformat(timespec="seconds")
    files = {node_probe.ARTIFACT: node_probe.render(node, reading.driver_version, reading.cuda_version, reading.attached_gpus,
                                                    reading.gpus, reading.errors, notes, collected)}
    if text is not None:
        files[KERNEL_ARTIFACT] = text
    source = Source(f"node {node} (NVML + kernel log)", "node", files=len(files))
    for name, body in files.items():
        lines, cut = normalise(body)
        source.gaps.extend(Gap("artifact", c, name) for c in cut)
        source.documents.extend(split_documents(name, lines))
    source.metadata["files"] = files
    return source


def kernel_only(kernel: KernelReader, why: str, node: str | None = None) -> Source:
    """The node without NVML (no GPU, no driver, no nvidia-ml-py: a laptop reading a saved kernel log): the
    kernel log alone, and a gap saying the GPUs were not read. No NVML artifact is written, so nothing
    downstream takes the missing reading for a node without GPUs."""
    node = node or node_name()
    text, refusals = kernel()
    source = Source(f"node {node} (kernel log only; NVML not available)", "node")
    source.gaps.append(Gap("nvml", f"NVML was not available ({why}): the GPUs themselves were not read, only the kernel log"))
    files = {}
    if text is None:
        source.gaps.append(Gap("kernel-log", "kernel log not readable (" + "; ".join(refusals) + ")"))
    else:
        files[KERNEL_ARTIFACT] = text
        lines, cut = normalise(text)
        source.gaps.extend(Gap("artifact", c, KERNEL_ARTIFACT) for c in cut)
        source.documents.extend(split_documents(KERNEL_ARTIFACT, lines))
    source.files = len(files)
    source.metadata["files"] = files
    source.metadata["nvml-unavailable"] = why
    return source


def save(source: Source, directory: Path) -> list[Path]:
    """Write the probe's artifacts so that `gpusleuth diagnose DIR` reads exactly what the probe read."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for name, body in source.metadata["files"].items():
        path = directory / name
        path.write_text(body, encoding="utf-8")
        out.append(path)
    return out
