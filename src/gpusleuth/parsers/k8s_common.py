"""What the kubectl table, describe and JSON/YAML parsers share: kubectl's own rules, rewritten once.

The pod STATUS column is computed the way kubectl's printer does it (printPod in
k8s.io/kubernetes/pkg/printers/internalversion/printers.go), so a describe or a JSON pod reads the same
as the `get pods` row a user would have pasted.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime
from typing import Iterable, Sequence

from gpusleuth.model.k8s import ContainerStatus

GPU_RESOURCE = "nvidia.com/gpu"

# generateName suffixes come from k8s.io/apimachinery/pkg/util/rand: 5 characters of this alphabet.
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_GENERATED = re.compile(rf"^(?P<base>[a-z0-9][a-z0-9.-]*[a-z0-9])-[{_SUFFIX_ALPHABET}]{{5}}$")
# A ReplicaSet's pod-template-hash is SafeEncodeString(decimal uint32): only these ten characters.
_TEMPLATE_HASH = re.compile(r"^[4-9bcdf]{6,10}$")
_RESTARTS = re.compile(r"^(?P<n>\d+)(?:\s*\((?P<note>[^)]*)\))?$")
_INTERVAL = re.compile(r"^(?P<last>\S+)\s+\(x(?P<count>\d+) over (?P<first>[^)]+)\)$")
_NAMESPACE_OPT = re.compile(r"(?:^|\s)(?:-n|--namespace)(?:=|\s+|(?=[a-z0-9]))(?P<ns>[a-z0-9][a-z0-9-]*)")
_RFC1123Z = "%a, %d %b %Y %H:%M:%S %z"


def parse_restarts(cell: str | None) -> tuple[int | None, str | None]:
    """RESTARTS as kubectl prints it: "64", "64 (4m7s ago)"; hand-edited "1 (errors)" keeps the count."""
    m = _RESTARTS.match((cell or "").strip())
    if not m:
        return None, None
    note = (m.group("note") or "").strip()
    return int(m.group("n")), note[:-4].strip() if note.endswith(" ago") else None


def parse_interval(age: str | None) -> tuple[int | None, str | None, str | None]:
    """An event age "2m (x832 over 3h28m)" -> (832, "2m", "3h28m"); a plain "23m" -> (None, "23m", None)."""
    age = (age or "").strip()
    m = _INTERVAL.match(age)
    if m:
        return int(m.group("count")), m.group("last"), m.group("first")
    return None, age or None, None


def source_node(source: str | None) -> str | None:
    """The node in an event source: "kubelet, node-1" (formatEventSource) or 1.x's "{kubelet node-1}"."""
    source = (source or "").strip()
    if source.startswith("{") and source.endswith("}"):
        parts = source[1:-1].split()
        return parts[1] if len(parts) == 2 else None
    if "," in source:
        return source.split(",", 1)[1].strip() or None
    return None


def parse_time(text: str | None) -> datetime | None:
    """RFC 3339 (JSON/YAML) or RFC 1123Z (describe) times; None for `<unset>`, `<unknown>`, blanks."""
    text = (text or "").strip()
    if not text or text.startswith("<"):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        pass
    try:
        return datetime.strptime(text, _RFC1123Z)
    except ValueError:
        return None


def to_int(text) -> int | None:
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


def daemonset_base(pod_name: str | None) -> str | None:
    """The name a DaemonSet would have given this pod (`<ds>-<5 chars>`), or None when the name cannot be a
    DaemonSet pod's (no generated suffix, or a ReplicaSet pod-template-hash before it)."""
    m = _GENERATED.match(pod_name or "")
    if not m:
        return None
    base = m.group("base")
    if _TEMPLATE_HASH.match(base.rsplit("-", 1)[-1]):
        return None
    return base


def owner_from_pod_name(pod_name: str | None) -> str | None:
    """DaemonSet owner from the name alone, only where the name says "daemonset" (or ends in "-ds") before
    the generated suffix: a Job's pods have the same suffix shape, so anything else is left to evidence."""
    base = daemonset_base(pod_name)
    if base is None:
        return None
    parts = base.split("-")
    if "daemonset" in parts or parts[-1] == "ds":
        return f"DaemonSet/{base}"
    return None


def namespace_from_command(command: str | None) -> str | None:
    """`kubectl get pods -n gpu-operator` -> "gpu-operator" (what a table without NAMESPACE belongs to)."""
    if not command:
        return None
    m = _NAMESPACE_OPT.search(command)
    return m.group("ns") if m else None


def parse_label_string(text: str | None) -> dict[str, str]:
    """A `--show-labels` cell: "k=v,k2=v2" (label values cannot hold commas); `<none>` -> {}."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        key, eq, value = part.strip().partition("=")
        if eq and key:
            out[key] = value
    return out


def resource_totals(containers: Iterable[tuple[bool, dict, dict]]) -> dict[str, int]:
    """Extended resources (domain-prefixed names) a pod asks for, from (is_init, requests, limits) per container.

    Requests default to limits for extended resources; the pod's effective request is the larger of the sum
    over app containers and the largest init container (the scheduler's rule).
    """
    app: dict[str, int] = defaultdict(int)
    init: dict[str, int] = defaultdict(int)
    for is_init, requests, limits in containers:
        for name in {*requests, *limits}:
            if "/" not in name:
                continue
            qty = to_int(requests.get(name, limits.get(name)))
            if qty is None:
                continue
            if is_init:
                init[name] = max(init[name], qty)
            else:
                app[name] += qty
    return {name: max(app.get(name, 0), init.get(name, 0)) for name in sorted({*app, *init})}


def kubectl_status(
    phase: str | None,
    reason: str | None,
    inits: Sequence[ContainerStatus],
    containers: Sequence[ContainerStatus],
    ready_condition: bool | None = None,
    deleting: bool = False,
    n_init: int | None = None,
) -> tuple[str | None, int | None]:
    """(STATUS, RESTARTS) exactly as `kubectl get pods` would print them for this pod.

    Like kubectl, only containers that have a status count (state not None); `n_init` is the number of init
    containers in the spec (default: len(inits)), the n of "Init:i/n".
    """
    n_init = len(inits) if n_init is None else n_init
    restarts: int | None = 0 if inits or containers or n_init else None
    inits = [c for c in inits if c.state is not None]
    containers = [c for c in containers if c.state is not None]
    status = reason or phase
    initializing = False
    for i, c in enumerate(inits):
        restarts = (restarts or 0) + (c.restarts or 0)
        if c.state == "terminated" and c.exit_code == 0:
            continue
        if c.state == "terminated":
            status = f"Init:{c.reason}" if c.reason else f"Init:ExitCode:{c.exit_code}"
        elif c.state == "waiting" and c.reason and c.reason != "PodInitializing":
            status = f"Init:{c.reason}"
        else:
            status = f"Init:{i}/{n_init}"
        initializing = True
        break
    if not initializing:
        restarts = None if restarts is None else 0
        has_running = False
        for c in reversed(containers):
            restarts = (restarts or 0) + (c.restarts or 0)
            if c.state in ("waiting", "terminated") and c.reason:
                status = c.reason
            elif c.state == "terminated":
                status = f"ExitCode:{c.exit_code}"
            elif c.ready and c.state == "running":
                has_running = True
        if status == "Completed" and has_running:
            status = "Running" if ready_condition else "NotReady"
    if deleting and phase not in ("Succeeded", "Failed"):
        status = "Unknown" if reason == "NodeLost" else "Terminating"
    return status, restarts
