"""Every error in the artifacts, and every sign of health: what a verdict has to account for.

`ErrorLines` holds each error-level line of any log (a level word, a known error shape, a GPU-stack kernel
error), each Warning event, each pod that is failing or waiting, each container that exited non-zero and
each GPU the tools could not read, with who printed it (the pod's operand, the message catalogue, a program
name, a message shape: knowledge/attribution.toml) and the layer. Lines that do not mean a failure now (noise
the components print on healthy runs, a retry that later succeeded, an old error in a pod that is running
and ready) carry the reason. `HealthSigns` holds what shows the stack working. Checks read both;
checks/accounting.py turns the errors no other check cites into findings.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import accumulate

import re2

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.cluster import Cluster, pod_is_healthy
from gpusleuth.facts.gpus import GpuInventory
from gpusleuth.facts.logs import Logs, Signature, messages_text, signatures
from gpusleuth.facts.operands import spec_for, spec_for_name
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.knowledge import table
from gpusleuth.knowledge.message_catalogue import Message, catalogue, compiled
from gpusleuth.knowledge.message_catalogue import starts as match_starts
from gpusleuth.parsers.k8s_common import to_int
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.k8s import Node, Pod
from gpusleuth.model.layers import Layer
from gpusleuth.model.logs import ContainerLog, LogLine


@dataclass(frozen=True, slots=True)
class ErrorLine:
    evidence: Evidence
    message: str
    level: str  # error | fatal | warning
    kind: str  # log | kernel | event | status | tool
    component: str | None  # who printed it, when known
    attributed_by: str | None  # how that is known: pod, catalogue, program, shape, log
    layer: Layer | None
    pod: str | None = None
    namespace: str | None = None
    container: str | None = None
    node: str | None = None
    previous: bool = False
    position: int = 0  # index among its log's lines (0 for non-log errors)
    last: bool = False  # among the last lines of its log, or the last error of it
    retry: bool = False  # announces a retry or a wait: never the decisive line
    noise: str | None = None  # why it does not mean a failure now
    messages: tuple[Message, ...] = ()  # catalogue entries it matches, most specific first
    signature: Signature | None = None  # the most severe knowledge/signatures.toml row it matches, if an error one

    @property
    def key(self) -> tuple[str, int | None]:
        return (self.evidence.artifact, self.evidence.line)


@dataclass(frozen=True, slots=True)
class HealthSign:
    what: str
    evidence: Evidence
    node: str | None = None


@dataclass(frozen=True, eq=False)  # identity-hashed: checks cache their work per view
class ErrorLines:
    lines: tuple[ErrorLine, ...]

    def failing(self) -> list[ErrorLine]:
        return [e for e in self.lines if e.noise is None]


@dataclass(frozen=True, eq=False)
class HealthSigns:
    signs: tuple[HealthSign, ...]


# ----------------------------------------------------------------------------------------------- the table


def _scoped(pattern: str) -> str:
    """A pattern whose leading flags apply to it alone, so that it can be joined with others."""
    m = re.match(r"\(\?([aiLmsux]+)\)", pattern)
    return f"(?{m.group(1)}:{pattern[m.end():]})" if m else f"(?:{pattern})"


@dataclass(frozen=True)
class _AnyOf:
    """Several patterns as one: `search` tries each in turn (one line); `joined` finds any of them in a whole
    log's text, line by line (re.MULTILINE), in one pass."""

    patterns: tuple[re.Pattern, ...]
    joined: "re2._Regexp"

    def search(self, text: str) -> re.Match | None:
        for p in self.patterns:
            if m := p.search(text):
                return m
        return None


@dataclass(frozen=True)
class _Rules:
    shapes: tuple[tuple[re.Pattern, str, Layer], ...]
    files: tuple[tuple[re.Pattern, str, Layer], ...]
    errors: tuple[tuple[re.Pattern, str], ...]
    errors_joined: "re2._Regexp"
    kernel: _AnyOf
    retry: _AnyOf
    noise: tuple[tuple[re.Pattern, str], ...]
    success: _AnyOf
    health: tuple[tuple["re2._Regexp", str], ...]


def error_rows() -> list[dict]:
    """attribution.toml's [[error]] rows, the errno row's pattern made from knowledge/errno.toml: a line ending in
    `: <strerror message>` (`open /dev/nvidiactl: Permission denied`, Go's lower-case `read-only file system`)."""
    rows = []
    for r in table("attribution").get("error", []):
        if r.get("errno"):
            words = "|".join(re.escape(m) for m in table("errno")["messages"])
            r = {**r, "pattern": f"(?i)(?:^|:[ \\t]+)(?:{words})[)\"'\\].]*$"}
        rows.append(r)
    return rows


def _joined(rows: list[dict]):
    """One RE2 pattern for all rows, ^ and $ at line boundaries: linear time over a whole log, whatever the rows."""
    return re2.compile("(?m)" + ("|".join(_scoped(r["pattern"]) for r in rows) or "[^\\s\\S]"))


def _any(rows: list[dict]) -> _AnyOf:
    return _AnyOf(tuple(re.compile(r["pattern"]) for r in rows), _joined(rows))


@cache
def rules() -> _Rules:
    t = table("attribution")
    errors = error_rows()
    return _Rules(
        shapes=tuple((re.compile(r["pattern"]), r["component"], Layer(r["layer"])) for r in t.get("shape", [])),
        files=tuple((re.compile(r["pattern"]), r["component"], Layer(r["layer"])) for r in t.get("file", [])),
        errors=tuple((re.compile(r["pattern"]), r["level"]) for r in errors),
        errors_joined=_joined(errors),
        kernel=_any(t.get("kernel", [])),
        retry=_any(t.get("retry", [])),
        noise=tuple((re.compile(r["pattern"]), r["reason"]) for r in t.get("noise", [])),
        success=_any(t.get("success", [])),
        health=tuple((_joined([r]), r["what"]) for r in t.get("health", [])),
    )


def shape_of(text: str) -> tuple[str, Layer] | None:
    """The component and layer a message's own words point to (knowledge/attribution.toml [[shape]])."""
    for pattern, component, layer in rules().shapes:
        if pattern.search(text):
            return component, layer
    return None


def error_level(text: str) -> str | None:
    """The level of an error shape that carries no level word (`Failed to ...`, `panic:`, an exception)."""
    for pattern, level in rules().errors:
        if pattern.search(text):
            return level
    return None


# Words any error line holds; a log whose text holds none of them is skipped at C speed.
_ERROR_WORDS = ("rror", "RROR", "ail", "AIL", "atal", "ATAL", "anic", "nable", "annot", "an't", "ould not", "ouldn't",
                "xit", "Xid", "xception", "egmentation", "not found", "denied", "Killed", "NVRM")
# one pass over a log's text, not one per word; a failed call's errno message is an error word too
_ANY_ERROR_WORD = re2.compile("|".join(map(re.escape, _ERROR_WORDS)) + "|(?i:" + "|".join(map(re.escape, table("errno")["messages"])) + ")")
_LAST = 3  # the last lines of a log: an error there is what the component said before it stopped


@lru_cache(maxsize=4096)
def _operand(pod: str, namespace: str | None):
    return spec_for(Pod(pod, namespace))


def _attribute(msg: str, log: ContainerLog, pod: str | None, found: tuple[Message, ...], said_by: str = "") -> tuple[str | None, str | None, Layer | None]:
    """(component, how it is known, layer) of an error line: its pod, the catalogue, a program name, its
    wording, the sentences that quote it (`said_by`), the log it is in, the file's name — the strongest sign first."""
    spec = _operand(pod, log.namespace) if pod else None
    if spec is not None:
        return spec.name, "pod", found[0].layer if found and found[0].component.layer != spec.layer else spec.layer
    cat = catalogue()
    if pod and (by_pod := cat.by_pod(pod)):
        comp = cat.component(by_pod)
        return by_pod, "pod", found[0].layer if found else comp.layer
    if found and len({m.component.name for m in found}) == 1:  # a message several components print names none
        return found[0].component.name, "catalogue", found[0].layer
    if (prog := cat.by_program(msg)) is not None:
        return prog, "program", cat.component(prog).layer
    if (shape := shape_of(msg)) is not None:
        return shape[0], "shape", shape[1]
    if said_by and (named := _named_in(said_by)) is not None:
        return named
    if found:
        return None, "catalogue", found[0].layer
    if log.kind == "kernel":
        return "kernel", "log", Layer.KERNEL_DRIVER
    name = log.artifact.replace("\\", "/").rsplit("/", 1)[-1]
    for pattern, component, layer in rules().files:
        if pattern.search(name):
            return component, "file", layer
    if pod:
        return pod, "pod", None
    if log.container:
        return log.container, "log", None
    return None, None, None


_POD_WORD = re.compile(r"\b[a-z0-9][a-z0-9.]*(?:-[a-z0-9]+)+\b")


def _named_in(sentences: str) -> tuple[str, str, Layer] | None:
    """Who the sentences quoting a message say printed it ("the nvidia-vgpu-manager-daemonset pod fails with
    ..."): an operand named by its pod, else a program, else a component's wording."""
    for word in _POD_WORD.findall(sentences):
        if (spec := spec_for_name(word)) is not None:
            return spec.name, "sentence", spec.layer
    cat = catalogue()
    if (prog := cat.by_program(sentences)) is not None:
        return prog, "sentence", cat.component(prog).layer
    if (shape := shape_of(sentences)) is not None:
        return shape[0], "sentence", shape[1]
    return None


_SEVERE = {"critical": 0, "error": 1}


@cache
def _order() -> dict[str, int]:
    return {sig.id: i for i, sig in enumerate(signatures()[0])}


def _line_starts(log: ContainerLog) -> list[int]:
    """The offset of each line's message in messages_text(log) (messages joined by newlines)."""
    return list(accumulate((len(ln.message) + 1 for ln in log.lines), initial=0))


def _candidates(log: ContainerLog, text: str, starts: list[int], known: list[Message]) -> dict[int, str]:
    """index -> level of the lines with no level word that are errors all the same, found by scanning the
    log's joined text at C speed (a healthy log of a million lines costs a few regex passes, not a million)."""
    r = rules()
    lines = log.lines
    out: dict[int, str] = {}

    def at(pos: int) -> int:
        return bisect_right(starts, pos) - 1

    if log.kind != "kernel":
        levels: dict[str, str | None] = {}  # message -> its error shape's level: loops repeat their lines
        for pos in match_starts(r.errors_joined, text):
            i = at(pos)
            msg = lines[i].message
            if i not in out and lines[i].level is None and not (lines[i].time_format or "").startswith("dmesg"):
                level = levels[msg] if msg in levels else levels.setdefault(msg, error_level(msg))
                if level:
                    out[i] = level
    kernel_lines = log.kind in ("kernel", "journal") or any((ln.time_format or "").startswith("dmesg") for ln in lines)
    for pos in match_starts(r.kernel.joined, text) if kernel_lines else ():
        i = at(pos)
        ln = lines[i]
        if i not in out and ln.level is None and (log.kind in ("kernel", "journal") or (ln.time_format or "").startswith("dmesg")):
            out[i] = "error"
    for msg in known:  # a message the component's source prints as an error is one
        for pos in match_starts(compiled(msg.pattern), text):
            i = at(pos)
            if i not in out and lines[i].level is None:
                out[i] = msg.level
    return out


def _log_errors(log: ContainerLog, ctx: "_Context", out: list[ErrorLine]) -> None:
    """The error lines of one log, each with who printed it, its layer, and whether it means a failure now."""
    text = messages_text(log)
    lines = log.lines
    known = catalogue().errors_in(text)
    starts = _line_starts(log) if known or _ANY_ERROR_WORD.search(text) else None  # only a log with error words
    extra = _candidates(log, text, starts, known) if starts is not None else {}
    picked = sorted([(i, ln, ln.level) for i, ln in enumerate(lines) if ln.level in ("error", "fatal")]
                    + [(i, lines[i], level) for i, level in extra.items()], key=lambda t: t[0])
    if not picked:
        return
    starts = _line_starts(log) if starts is None else starts
    r = rules()
    cat = catalogue()
    n = len(lines)
    last_error = picked[-1][0]
    recovered_after = _recovered_after(log, picked)
    retries = [bisect_right(starts, pos) - 1 for pos in match_starts(r.retry.joined, text)] if recovered_after is not None else []
    said: dict[tuple, tuple] = {}  # (pod, message) -> what the catalogue, attribution and noise table say: loops repeat lines
    raw_of = {x.line: x.raw for x in lines if x.message == x.raw.strip()} if log.kind == "text" else {}  # a ticket's sentences
    for i, ln, level in picked:
        pod = ln.pod or log.pod
        p = ctx.pods.get(pod) if pod else None
        key = (pod, ln.message)
        if key not in said:
            found = tuple(cat.match(ln.message))
            # a message a ticket quotes: the sentences up to the quote say whose it is
            quoting = " ".join(raw_of.get(k, "") for k in range(ln.line - 3, ln.line + 1)) if raw_of and ln.message != ln.raw.strip() else ""
            said[key] = (found, *_attribute(ln.message, log, pod, found, quoting), _noise(ln.message, found), bool(r.retry.search(ln.message)))
        found, component, how, layer, noise, retry = said[key]
        # the table's own rule: the higher severity, then the row listed first (the specific before the generic)
        sig = min((x for x in ctx.known.get((ln.artifact, ln.line), ()) if x.severity in _SEVERE and x.layer),
                  key=lambda x: (_SEVERE[x.severity], _order()[x.id]), default=None)
        if sig is not None:
            layer = Layer(sig.layer)  # the table says which layer the line points to, whoever printed it
            if sig.component and how in (None, "shape", "file", "log", "catalogue") and not (how == "catalogue" and component):
                component, how = sig.component, "signature"  # the table knows who prints this line
        if layer is None and log.kind in ("kernel", "journal") and (s := shape_of(ln.message)):
            layer = s[1]
        if (noise is None and recovered_after is not None and i < recovered_after and level != "fatal"
                and bisect_left(retries, i) < len(retries) and retries[bisect_left(retries, i)] < recovered_after):
            noise = f"it was retried and a later line of the same log shows success ({lines[recovered_after].evidence().cite()})"
        if noise is None and p is not None and not log.previous and pod_is_healthy(p) and (i < n - _LAST or level != "fatal"):
            noise = f"pod {pod} is running and ready since ({p.evidence.cite() if p.evidence else 'its status'})"
        out.append(ErrorLine(
            ln.evidence(), ln.message.strip(), level, "kernel" if log.kind == "kernel" else "log", component, how, layer,
            pod, log.namespace, ln.container or log.container, log.node or (p.node if p is not None else None), log.previous, log.position(i),
            i >= n - _LAST or i == last_error, retry, noise, found, sig,
        ))


@dataclass(frozen=True)
class _Context:
    pods: dict  # name -> Pod
    known: dict  # (artifact, line) -> signatures the line matches


def _recovered_after(log: ContainerLog, picked: list[tuple[int, LogLine, str]]) -> int | None:
    """The index of a success line after the last error of a log, when nothing failed after it: the errors
    before it were retries that worked."""
    last_error = picked[-1][0]
    success = rules().success
    for j in range(len(log.lines) - 1, last_error, -1):
        ln = log.lines[j]
        if ln.level in (None, "info") and success.search(ln.message):
            # a start banner that came before the errors too is a loop starting over, not a recovery
            before = {x.message for x in log.lines[:picked[0][0]]}
            return None if ln.message in before else j
    return None


def _noise(msg: str, found: tuple[Message, ...]) -> str | None:
    for pattern, reason in rules().noise:
        if pattern.search(msg):
            return reason
    if found and found[0].benign:
        return f"{found[0].component.name} prints this on healthy runs too ({found[0].where})"
    return None


_BAD_STATUS = re.compile(r"CrashLoopBackOff|Error|ErrImage|ImagePull|BackOff|OOMKilled|Evicted|ContainerStatusUnknown|"
                         r"CreateContainer|RunContainerError|UnexpectedAdmissionError|InvalidImageName|Init:Err|Init:Crash|"
                         r"Terminating|Unknown|NodeLost|OutOf")


def _pod_errors(cluster: Cluster, out: list[ErrorLine]) -> None:
    for p in cluster.pods:
        status = p.status or p.phase or ""
        spec = spec_for(p)
        comp = spec.name if spec else p.name
        bad = _BAD_STATUS.search(status) is not None
        # a failing pod of no known operand: its status's own words may name the layer (UnexpectedAdmissionError: device allocation)
        layer = spec.layer if spec else (shaped[1] if bad and (shaped := shape_of(status)) else None)
        ev = p.evidence or Evidence("pods", None, f"{p.name} {status}")
        if bad:
            out.append(ErrorLine(ev, f"pod {p.name} is {status}", "error", "status", comp, "pod", layer, p.name, p.namespace, node=p.node, last=True))
        elif status == "Pending":
            out.append(ErrorLine(ev, f"pod {p.name} is Pending", "warning", "status", comp, "pod", layer or Layer.SCHEDULER, p.name,
                                 p.namespace, node=p.node, last=True))
        healthy = pod_is_healthy(p)
        for c in p.containers:
            code = c.exit_code if c.state == "terminated" else None
            if code not in (None, 0) and not (c.init and healthy):
                text = f"container {c.name} of pod {p.name} exited with code {code}" + (f" ({c.reason})" if c.reason else "")
                if c.message:
                    text += f": {c.message.strip()[:300]}"
                out.append(ErrorLine(c.evidence or ev, text, "error", "status", comp, "pod", layer, p.name, p.namespace, c.name, p.node,
                                     last=True, noise=None))
            elif c.last_exit_code not in (None, 0) and not healthy:
                text = f"container {c.name} of pod {p.name} last exited with code {c.last_exit_code}" + (f" ({c.last_reason})" if c.last_reason else "")
                if c.last_message:
                    text += f": {c.last_message.strip()[:300]}"
                out.append(ErrorLine(c.evidence or ev, text, "error", "status", comp, "pod", layer, p.name, p.namespace, c.name, p.node, last=True))


def _event_errors(cluster: Cluster, out: list[ErrorLine]) -> None:
    cat = catalogue()
    for e in cluster.events:
        if (e.type or "").lower() != "warning":
            continue
        kind, _, name = (e.object or "").rpartition("/")
        pod = name if kind.lower() in ("pod", "pods", "") and name else None
        p = cluster.pod(pod) if pod else None
        spec = spec_for(p) if p is not None else (spec_for(Pod(pod, e.namespace)) if pod else None)
        found = tuple(cat.match(e.message))
        if spec is not None:
            comp, how, layer = spec.name, "pod", spec.layer
        elif found:
            comp, how, layer = found[0].component.name, "catalogue", found[0].layer
        elif (s := shape_of(f"{e.reason} {e.message}")) is not None:
            comp, how, layer = s[0], "shape", s[1]
        else:
            comp, how, layer = pod or name or None, "event", None
        noise = None
        if p is not None and pod_is_healthy(p):
            noise = f"pod {pod} is running and ready since ({p.evidence.cite() if p.evidence else 'its status'})"
        ev = e.evidence or Evidence("events", None, f"{e.reason}: {e.message}"[:400])
        out.append(ErrorLine(ev, f"{e.reason}: {e.message.strip()}", "error" if e.reason != "Unhealthy" else "warning", "event", comp, how,
                             layer, pod, e.namespace, node=e.node or (p.node if p else None), last=True, noise=noise, messages=found))


def _tool_errors(inv: GpuInventory, out: list[ErrorLine]) -> None:
    for ng in inv.nodes:
        for err in ng.errors:
            ev = err.evidence or Evidence("nvidia-smi", None, err.message[:400])
            out.append(ErrorLine(ev, err.message.strip(), "error", "tool", "nvml", "tool", Layer.USERSPACE_DRIVER, node=ng.node, last=True))


def _optional(facts: Facts, cls: type):
    try:
        return facts.get(cls)
    except NotApplicable:
        return None


@combiner(ErrorLines)
def build_error_lines(facts: Facts) -> ErrorLines:
    logs: Logs | None = _optional(facts, Logs)
    cluster: Cluster | None = _optional(facts, Cluster)
    inv: GpuInventory | None = _optional(facts, GpuInventory)
    out: list[ErrorLine] = []
    ctx = _Context({p.name: p for p in cluster.pods} if cluster is not None else {}, logs.signatures_at() if logs else {})
    for log in logs.logs if logs else ():
        _log_errors(log, ctx, out)
    if cluster is not None:
        _pod_errors(cluster, out)
        _event_errors(cluster, out)
    if inv is not None:
        _tool_errors(inv, out)
    return ErrorLines(tuple(out))


# Controllers and labellers: running, they say nothing about whether a GPU can be used.
_NOT_GPU_PATH = frozenset({"gpu-operator", "network-operator", "nfd-master", "nfd-worker", "nfd-gc"})


def _on_the_gpu_path(p: Pod) -> bool:
    """An operand that only runs when the layers below it work (driver, toolkit, plugin, validators, DCGM)."""
    spec = _operand(p.name, p.namespace) if p.name else None
    return spec is not None and spec.name not in _NOT_GPU_PATH


@combiner(HealthSigns)
def build_health_signs(facts: Facts) -> HealthSigns:
    signs: list[HealthSign] = []
    cluster: Cluster | None = _optional(facts, Cluster)
    if cluster is not None:
        gpu_pods = {id(p) for p in cluster.gpu_pods()}
        for p in cluster.pods:
            if pod_is_healthy(p) and p.evidence is not None and (id(p) in gpu_pods or _on_the_gpu_path(p)):
                signs.append(HealthSign(f"pod {p.name} is {p.status or p.phase}" + (f" and ready ({p.ready})" if p.ready else ""), p.evidence, p.node))
        nodes = [*cluster.nodes.values(), *(f for f in cluster.fragments if isinstance(f, Node))]
        for n in nodes:
            offered = [(k, v) for k, v in n.allocatable.items() if k.startswith("nvidia.com/") and (to_int(v) or 0) > 0]
            short = any((to_int(v) or 0) < (to_int(n.capacity.get(k)) or 0) for k, v in n.allocatable.items() if k.startswith("nvidia.com/"))
            if offered and not short:  # a node that lost GPUs out of allocation shows no health
                k, v = offered[0]
                ev = n.evidence.get(f"allocatable:{k}") or next(iter(n.evidence.values()), None)
                if ev is not None:
                    who = f"node {n.name}" if n.name else "a node (its name is not in the paste)"
                    signs.append(HealthSign(f"{who} offers {k} ({v} allocatable)", ev, n.name))
    inv: GpuInventory | None = _optional(facts, GpuInventory)
    for ng in inv.nodes if inv else ():
        for g in ng.gpus:
            signs.append(HealthSign(f"the driver reads {g.label}" + (f", {g.name}" if g.name else ""), g.ev(), ng.node))
    logs: Logs | None = _optional(facts, Logs)
    health = rules().health
    for log in logs.logs if logs else ():
        if log.kind == "text":
            continue  # a sentence that says something works is not the tool saying it: prose earns no HEALTHY
        text = messages_text(log)
        for pattern, what in health:
            if m := pattern.search(text):
                ln = log.lines[bisect_right(_line_starts(log), m.start()) - 1]
                signs.append(HealthSign(what, ln.evidence(), log.node))
    return HealthSigns(tuple(signs))
