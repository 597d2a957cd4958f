"""The local node as a source: NVML's view of every GPU, the kernel log, and the host files and commands a
cluster's node probe reads, as one bundle.

``gpusleuth node`` does not analyse anything itself. It writes what it read as artifacts with provenance
(``gpusleuth-node.json`` from NVML, parsers/node_probe.py; ``kernel.log``, read by the log parser; and every
file, listing and command of knowledge/live.toml [probe], read by the same probe script and turned into
artifacts the same way as ``gpusleuth collect --node-probes``), redacts them as ``collect`` does, and runs
the pipeline on that collection. ``--save DIR`` writes the collection as a gpusleuth bundle, so
``gpusleuth diagnose DIR`` later reads the same artifacts with the same provenance and gives the same findings.

The kernel log is read from whatever is permitted: ``dmesg``, else ``journalctl -k``, else ``/dev/kmsg``; each
refusal is recorded, and if all fail the report says the kernel log could not be seen.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import threading
from datetime import datetime, timezone
from typing import Any, Callable

from gpusleuth import __version__
from gpusleuth.live import probe_format, probes
from gpusleuth.live.collect import SCHEMA, Artifact, Collection
from gpusleuth.live.redact import Redactor
from gpusleuth.model.gpu import GpuError, error_kind
from gpusleuth.parsers import node_probe
from gpusleuth.sources.loose import Source, read_artifacts
from gpusleuth.sources.nvml import read

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


KernelReader = Callable[[], tuple[str | None, list[str], str | None]]  # (text, refusals, the command that printed it)
HostReader = Callable[[], tuple[list[tuple[str, str, dict]], list[str]]]  # ([(artifact, text, provenance)], gaps)
_KERNEL_SOURCES = (["dmesg", "-T"], ["journalctl", "-k", "-b", "--no-pager", "-o", "short-iso"])
# Read another way: the kernel log (kernel.log, with times) and the GPUs (NVML).
_HOST_SKIP = ("dmesg-nvidia.txt", "nvidia-smi-q-x.xml")
_HOST_TIMEOUT_S = 120.0


def read_kernel_log() -> tuple[str | None, list[str], str | None]:
    """(text, refusals, command): the first source that works, and why the ones before it did not."""
    refusals = []
    for argv in _KERNEL_SOURCES:
        text, why = _run(argv)
        if text:
            return text, refusals, " ".join(argv)
        refusals.append(why)
    text, why = _kmsg()
    if text:
        return text, refusals, None
    return None, [*refusals, why], None


def read_host(root: str = "") -> tuple[list[tuple[str, str, dict]], list[str]]:
    """The files, listings and commands of knowledge/live.toml [probe], read by the cluster probe's own script
    under `root` ("": this machine; a host root mounted into a pod, e.g. /host), as artifacts."""
    env = {**os.environ, "GPUSLEUTH_PROBE_ROOT": root.rstrip("/")}
    try:
        proc = subprocess.Popen(["sh", "-c", probes.script(skip=_HOST_SKIP)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    except OSError as exc:
        return [], [f"host files and commands could not be read ({exc.strerror or exc})"]
    timer = threading.Timer(_HOST_TIMEOUT_S, proc.kill)  # a command that hangs (a stuck mount) ends the read
    timer.start()
    try:
        data = proc.stdout.read(probes.MAX_OUTPUT)  # as much as a probe pod's log is read: a huge file ends it
    finally:
        timer.cancel()
        proc.kill()
        proc.wait()
        proc.stdout.close()
    output = probe_format.parse(data.decode("utf-8", "replace"))
    gaps = [] if output.complete else [f"the host files and commands were read only in part (the probe stopped after "
                                       f"{len(data) >> 20} MiB or {_HOST_TIMEOUT_S:.0f} s); what it printed is kept"]
    return probes.artifacts(output, ""), gaps


def no_host() -> tuple[list[tuple[str, str, dict]], list[str]]:
    """Host files are not this machine's to read (a saved kernel log read elsewhere)."""
    return [], []


class _Bundle:
    """Artifacts with provenance, redacted as they are added, as `collect` builds them."""

    def __init__(self, node: str):
        self.node, self.redactor = node, Redactor()
        self.artifacts: list[Artifact] = []
        self.gaps: list[dict] = []

    def add(self, name: str, text: str, record: dict) -> None:
        data = self.redactor.text(text, name).encode()
        self.artifacts.append(Artifact(name, data, {"name": name, "source": "node", "node": self.node, **record, "size": len(data)}))

    def collection(self, collected: str) -> Collection:
        return Collection(self.artifacts, {
            "schema": SCHEMA, "tool": {"name": "gpusleuth", "version": __version__}, "captured_at": collected,
            "clock": {"source": "this machine"}, "node": self.node,
            "artifacts": [a.record for a in self.artifacts], "gaps": self.gaps, "redaction": self.redactor.report(),
        })


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def probe(nvml: Any, kernel: KernelReader = read_kernel_log, node: str | None = None, host: HostReader = read_host) -> Collection:
    """Read the node (NVML through ``nvml``, the kernel log through ``kernel``, host files through ``host``)."""
    node = node or node_name()
    reading = read(nvml)
    out = _Bundle(node)
    text, refusals, command = kernel()
    notes = []
    if text is None:
        notes.append("kernel log not readable, Xids could not be seen (" + "; ".join(refusals) + "); run as root or in a privileged pod")
    collected = _now()
    out.add(node_probe.ARTIFACT, node_probe.render(node, reading.driver_version, reading.cuda_version, reading.attached_gpus,
                                                   reading.gpus, reading.errors, notes, collected), {"command": "gpusleuth node"})
    if text is not None:
        out.add(KERNEL_ARTIFACT, text, {"command": command})
    _add_host(out, host)
    return out.collection(collected)


def kernel_only(kernel: KernelReader, why: str, node: str | None = None, host: HostReader = no_host,
                nvml_error: str | None = None) -> Collection:
    """The node without a reading of its GPUs (no driver loaded, no nvidia-ml-py, or a laptop reading a saved
    kernel log): the kernel log and host files, and a gap saying the GPUs were not read. On the node itself,
    NVML's own refusal (`nvml_error`, "Driver Not Loaded") is a fact about the node and goes into the NVML
    artifact as an error, so the checks weigh it with the kernel log and module list; a saved log read
    elsewhere gets no NVML artifact at all, since this machine's NVML says nothing about that node."""
    node = node or node_name()
    out = _Bundle(node)
    out.gaps.append({"what": "nvml", "why": f"NVML was not available ({why}): the GPUs themselves were not read"})
    text, refusals, command = kernel()
    collected = _now()
    if nvml_error is not None:
        error = GpuError(error_kind(nvml_error), nvml_error, function="nvmlInit")
        out.add(node_probe.ARTIFACT, node_probe.render(node, None, None, None, [], [error], [], collected), {"command": "gpusleuth node"})
    if text is None:
        out.gaps.append({"what": "kernel-log", "why": "kernel log not readable (" + "; ".join(refusals) + ")"})
    else:
        out.add(KERNEL_ARTIFACT, text, {"command": command})
    _add_host(out, host)
    return out.collection(collected)


def _add_host(out: _Bundle, host: HostReader) -> None:
    artifacts, gaps = host()
    for name, text, record in artifacts:
        out.add(name, text, record)
    out.gaps.extend({"what": "host", "why": g} for g in gaps)


def source(collection: Collection, description: str) -> Source:
    """The collection as a source, read exactly as `gpusleuth diagnose` reads the saved bundle."""
    return read_artifacts(description, "node", ((a.name, a.data) for a in collection.artifacts),
                          {"manifest.json": json.dumps(collection.manifest).encode()})
