"""NVIDIA GPU Operator must-gather output (hack/must-gather.sh), recognised by its file names' shapes.

Each file gets the kubectl command the script ran to write it (so a table without a NAMESPACE column
knows its namespace, and a log knows its pod and instance); ``nvidia-bug-report_<node>.log(.gz)`` is split
into its sections for that node. ``must-gather.stderr.log`` holds the script's ``set -x`` trace and the
errors of failed kubectl calls: each error becomes a gap naming the call (a missing previous instance is
not an error). Empty files are what a failed call leaves: a gap, with the error when the trace has it.
``cluster_policy.missing`` means the cluster has no ClusterPolicy.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from gpusleuth.model.document import Document
from gpusleuth.model.finding import Gap
from gpusleuth.sources import bugreport
from gpusleuth.sources.text import frozen

# A directory is a must-gather when at least two of these shapes are present.
MARKERS = ("must-gather.log", "must-gather.stderr.log", "cluster_policy.yaml", "cluster_policy.missing", "gpu_nodes.*",
           "gpu_operator_pod.*", "gpu_operand_pods.*", "gpu_operand_ds.*", "network_operator_pod.*", "network_operand_pods.*")
_NS_LINE = re.compile(r"^Using '(?P<ns>[^']+)' as operator namespace")
_TRACE = re.compile(r"^\++ (?P<cmd>(?:kubectl|oc) .*)$")
_NO_PREVIOUS = re.compile(r"previous terminated container .* not found")
_BUG_REPORT = re.compile(r"^nvidia-bug-report_(?P<node>.+)\.log$")

# base name shape -> command template ({x} = the name's variable part, {op} = the operator pod, {n} = " -n <ns>"
# for the GPU Operator's files, whose namespace must-gather.log names; the Network Operator's twins
# (network_*) get none: their namespace is not written down, and a table without one merges by pod name)
_COMMANDS = (
    ("gpu_nodes.status", "kubectl get nodes -l nvidia.com/gpu.present=true -o wide"),
    ("gpu_nodes.descr", "kubectl describe nodes -l nvidia.com/gpu.present=true"),
    ("*_operator_pod.status", "kubectl get {op} -o wide{n}"),
    ("*_operator_pod.yaml", "kubectl get {op} -o yaml{n}"),
    ("*_operator_pod.previous.log", "kubectl logs {op}{n} --previous"),
    ("*_operator_pod.log", "kubectl logs {op}{n}"),
    ("*_operand_pods.status", "kubectl get pods -o wide{n}"),
    ("*_operand_pods.yaml", "kubectl get pods -o yaml{n}"),
    ("*_operand_pod_*.previous.log", "kubectl logs pod/{x}{n} --all-containers --prefix --previous"),
    ("*_operand_pod_*.log", "kubectl logs pod/{x}{n} --all-containers --prefix"),
    ("*_operand_pod_*.descr", "kubectl describe pod/{x}{n}"),
    ("*_operand_ds.status", "kubectl get ds{n}"),
    ("*_operand_ds.yaml", "kubectl get ds -o yaml{n}"),
    ("*_operand_ds_*.descr", "kubectl describe daemonset/{x}{n}"),
    ("cluster_policy.yaml", "kubectl get clusterpolicies.nvidia.com -o yaml"),
    ("openshift_version.yaml", "kubectl get clusterversion/version -o yaml"),
    ("all_machines.list", "kubectl get machines -A"),
    ("hyperconverged.yaml", "kubectl get hyperconvergeds.hco.kubevirt.io -A -o yaml"),
    ("kubevirt.yaml", "kubectl get kubevirts.kubevirt.io -A -o yaml"),
)
_VARIABLE = re.compile(r"_(?:operand_pod|operand_ds)_(?P<x>.+?)(?:\.previous)?\.(?:log|descr)$")
METADATA = ("must-gather.log", "must-gather.stderr.log", "version")
REDUNDANT = ("gpu_operand_pod_images.txt",)  # `name:\timage ...`: the images gpu_operand_pods.yaml holds too


def base(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def is_must_gather(names: list[str]) -> bool:
    bases = {base(n) for n in names}
    return sum(1 for pat in MARKERS if any(fnmatch.fnmatchcase(b, pat) for b in bases)) >= 2


def _namespace(texts: list[tuple[str, list[str]]]) -> str | None:
    for name, lines in texts:
        if base(name) == "must-gather.log":
            for line in lines:
                m = _NS_LINE.match(line.strip())
                if m:
                    return m.group("ns")
    for name, lines in texts:
        if fnmatch.fnmatchcase(base(name), "*_operand_pods.yaml") or fnmatch.fnmatchcase(base(name), "*_operator_pod.yaml"):
            for line in lines[:400]:
                m = re.match(r"^\s+namespace:\s*(\S+)", line)
                if m:
                    return m.group(1)
    return None


def _operator_pod(texts: list[tuple[str, list[str]]]) -> str | None:
    for name, lines in texts:
        if fnmatch.fnmatchcase(base(name), "*_operator_pod.status"):
            rows = [ln.split() for ln in lines if ln.strip() and not ln.startswith("NAME")]
            if rows:
                return rows[0][0] if rows[0][0].startswith("pod/") else f"pod/{rows[0][0]}"
    return None


def _errors(texts: list[tuple[str, list[str]]]) -> list[tuple[str, str]]:
    """(kubectl command, error line) pairs from the script's stderr trace."""
    out: list[tuple[str, str]] = []
    for name, lines in texts:
        if base(name) != "must-gather.stderr.log":
            continue
        last = None
        for line in lines:
            m = _TRACE.match(line)
            if m:
                last = m.group("cmd").strip()
            elif line.startswith(("Error from server", "error:", "Error:", "E0", "Unable to connect")) and last:
                out.append((last, line.strip()))
    return out


def _target(cmd: str) -> str | None:
    """The file a failed kubectl call was writing, when the script's layout says so."""
    verb = cmd.split()[1] if len(cmd.split()) > 1 else ""
    m = re.search(r"\spod/(?P<pod>[a-z0-9][a-z0-9.-]*)", cmd)
    if verb == "logs" and m:
        prev = ".previous" if "--previous" in cmd else ""
        if "--all-containers" in cmd:
            return f"gpu_operand_pod_{m.group('pod')}{prev}.log"
        return f"gpu_operator_pod{prev}.log"
    if verb == "describe" and m:
        return f"gpu_operand_pod_{m.group('pod')}.descr"
    return None


CONTEXT = ("*_operator_pod.status", "*_operand_pods.yaml", "*_operator_pod.yaml")  # read first: they name the namespace and operator pod


# each CONTEXT pattern is `*` and a literal: it matches the names that end with the literal (asked of every file listed)
_CONTEXT_ENDS = tuple(p[1:] for p in CONTEXT)
assert all(p[:1] == "*" and not any(c in p[1:] for c in "*?[") for p in CONTEXT)


def is_context(name: str) -> bool:
    """Whether a file is one of those read before the others (the script's logs, the files naming the operator's
    namespace and pod), so that every other file can be read on its own."""
    b = base(name)
    return b in METADATA[:2] or b.endswith(_CONTEXT_ENDS)


@dataclass
class Context:
    namespace: str | None
    operator_pod: str
    errors: list[tuple[str, str]]
    fatal: list[Gap]


def context(texts: list[tuple[str, list[str]]]) -> Context:
    """What every file's command needs, from the context files (is_context) alone."""
    fatal = [Gap("must-gather", ln.strip(), name) for name, lines in texts if base(name) == "must-gather.log"
             for ln in lines if ln.startswith("FATAL")]
    return Context(_namespace(texts), _operator_pod(texts) or "pod/<operator pod>", _errors(texts), fatal)


def gaps(ctx: Context, empty: list[str]) -> list[Gap]:
    """The failed kubectl calls of the script's trace, the empty files they left, the script's FATAL lines."""
    out: list[Gap] = []
    by_file: dict[str, str] = {}
    quiet: set[str] = set()
    for cmd, err in ctx.errors:
        target = _target(cmd)
        if _NO_PREVIOUS.search(err):
            if target:
                quiet.add(target)  # no previous instance: nothing is missing
            continue
        if target:
            by_file[target] = err
        out.append(Gap(f"must-gather call `{cmd}`", err, "must-gather.stderr.log"))
    for name in empty:
        b = base(name)
        if b == "cluster_policy.missing":
            out.append(Gap("ClusterPolicy", "must-gather found no ClusterPolicy (clusterpolicies.nvidia.com) in the cluster", name))
        elif b not in quiet and b not in by_file:
            out.append(Gap("artifact", "empty: the kubectl call that writes it printed nothing (failed, or no such object)", name))
    return out + ctx.fatal


def bug_report_node(name: str) -> str | None:
    """The node of a must-gather's nvidia-bug-report_<node>.log, or None for any other file."""
    bug = _BUG_REPORT.match(base(name))
    return bug.group("node") if bug else None


def documents(name: str, lines: list[str], ctx: Context, fallback) -> list[Document]:
    """The Documents of one must-gather file; the script's own logs and version file are read, not analysed."""
    b = base(name)
    if b in METADATA or b in REDUNDANT:
        return []
    bug = _BUG_REPORT.match(b)
    if bug and bugreport.is_bug_report(lines):
        return bugreport.split(name, lines, {"node": bug.group("node"), "source": "must-gather"})
    for pattern, template in _COMMANDS:
        if fnmatch.fnmatchcase(b, pattern):
            v = _VARIABLE.search(b)
            n = f" -n {ctx.namespace}" if ctx.namespace and b.startswith("gpu_") else ""
            command = template.format(n=n, x=v.group("x") if v else "", op=ctx.operator_pod if b.startswith("gpu_") else "pod/<operator pod>")
            return [Document(name, frozen(lines), 1, command=command, meta={"source": "must-gather", "namespace": ctx.namespace})]
    return fallback(name, lines)


def read(texts: list[tuple[str, list[str]]], empty: list[str], fallback) -> tuple[list[Document], list[Gap]]:
    """(documents, gaps) of a must-gather read whole."""
    ctx = context(texts)
    return [d for name, lines in texts for d in documents(name, lines, ctx, fallback)], gaps(ctx, empty)
