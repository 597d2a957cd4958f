"""Operator layer: the GPU Operator's and Network Operator's operands as a whole, from the operand graph."""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.classes import clip
from gpusleuth.facts import Cluster, Configuration, Logs
from gpusleuth.facts.configuration import truthy
from gpusleuth.facts.operands import OperandGraph, marker, spec_for
from gpusleuth.knowledge import table, versions
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import (
    Component,
    ComponentState,
    Fix,
    FixKind,
    Hit,
    Role,
    Severity,
)
from gpusleuth.model.k8s import Pod
from gpusleuth.model.layers import Layer
from gpusleuth.parsers.helm import OPERATOR_KEYS
from gpusleuth.checks.stated_common import stated_hits
from gpusleuth.facts.prose import Prose
from gpusleuth.facts.validation import Problem, dotted, fix_snippet, image_version, summary, validate
from gpusleuth.knowledge.config_schemas import load as load_schema, vkey


def _ns(ns: str | None) -> str:
    return f" -n {ns}" if ns else ""


@check("OP001", "operand-crashlooping")
def operand_crashlooping(graph: OperandGraph) -> Iterable[Hit]:
    """An operator operand pod is crash-looping; its last error before the crash says why.

    What it does: For every GPU Operator / Network Operator operand pod in CrashLoopBackOff, Error or
    OOMKilled (pod status or container state), names the component, its layer (knowledge/operands.toml)
    and the container that failed, and cites the decisive log line: the last error before the crash (a
    known signature first, then an error-level line; the `--previous` log before the current one).
    Why it matters: a crashing operand never writes its readiness marker, so everything that waits on it
    stays blocked; the decisive line is usually the whole diagnosis. This is the generic fallback
    (confidence 0.5): when a specific check explains the same crash, the ranking shows that one as the root
    cause and this one as its symptom.
    How to fix: Read the crashed instance's log (`kubectl logs --previous POD -c CONTAINER`), fix what its
    last error says, then delete the pod so its DaemonSet recreates it.
    """
    for c in graph.by_state(ComponentState.FAILED):
        if graph.crashlooping(c):
            yield _crash_hit(graph, c)


def _crash_hit(graph: OperandGraph, c: Component) -> Hit:
    obs = graph.observation(c)
    pod = graph.pod_of(c)
    lines = graph.decisive_lines(c.pod)
    container = (obs.container if obs else None) or (lines[-1].container if lines else None) or next(
        (pl.container for pl in graph.pod_logs(c.pod) if pl.container), None)
    behind = graph.blocked_behind(c)
    # the pod, then its decisive line (a report that shows a symptom's first three citations shows that one), then
    # the rest of its status and the log lines that led up to it
    evidence = [*c.evidence[:1], *(ln.evidence() for ln in lines[-1:]), *c.evidence[1:], *(ln.evidence() for ln in lines)]
    ctr = f" -c {container}" if container else ""
    ns = _ns(c.namespace)
    if lines:
        decisive = lines[-1]
        said = f"Its last error before the crash: \"{clip(decisive.message, 200)}\" ({decisive.evidence().cite()})."
        title = f"{c.name} is crash-looping: {clip(decisive.message, 120)}"
    else:
        said = (f"No log of {c.pod} is in the artifacts, so the reason is not visible: "
                f"`kubectl logs --previous {c.pod}{ns}{ctr}` shows it.")
        title = f"{c.name} is crash-looping ({c.status or 'CrashLoopBackOff'})"
    waiting = f" {len(behind)} operand(s) wait on it: {', '.join(b.name for b in behind)}." if behind else ""
    restarts = pod.restarts if pod is not None else None
    return Hit(
        title=title,
        explanation=(
            f"{c.name} ({c.layer.value} layer) pod {c.pod}"
            + (f", container {container}," if container else "")
            + f" keeps failing ({c.status or 'CrashLoopBackOff'}). {said}{waiting}"
        ),
        severity=Severity.ERROR,
        role=Role.ROOT_CAUSE,
        evidence=tuple(dict.fromkeys(e for e in evidence if e)),
        fixes=(
            Fix(
                FixKind.IMMEDIATE,
                "Read the crashed instance's log and the pod's events; fix what the last error says, then delete the pod "
                "so that its DaemonSet starts a fresh one.",
                (f"kubectl logs --previous {c.pod}{ns}{ctr}", f"kubectl describe pod {c.pod}{ns}", f"kubectl delete pod {c.pod}{ns}"),
            ),
        ),
        node=c.node,
        component=c.name,
        confidence=0.5,
        layer=c.layer,
        facts={"pod": c.pod, "namespace": c.namespace, "container": container, "restarts": restarts,
               "decisive_line": lines[-1].evidence().to_dict() if lines else None, "blocked": [b.name for b in behind]},
    )


@check("OP002", "operand-blocked")
def operand_blocked(graph: OperandGraph) -> Iterable[Hit]:
    """An operand is stuck waiting on a readiness marker that another operand never created.

    What it does: For every operand the operand graph classifies as blocked (its pod is in Init:N/M or not
    ready, and the init container it is stuck in waits on a marker such as toolkit-ready), names what
    blocks it, the marker, and the chain down to the failed component at its root, citing the pod's status
    line and its waiting log line.
    Why it matters: blocked operands are not broken themselves; restarting them does nothing. Listing them
    as blocked, linked to the root cause, keeps attention on the one component to fix.
    How to fix: nothing on the blocked operand itself: fix the root component of the chain; the markers are
    created in turn and the blocked pods start by themselves.
    """
    for c in graph.by_state(ComponentState.BLOCKED):
        root = graph.root_of(c)
        chain = graph.chain(c)
        short = c.waiting_on.rsplit("/", 1)[-1] if c.waiting_on else None
        if c.blocked_by:
            title = f"{c.name} is blocked: waiting on {short} from {c.blocked_by}"
            if root is not None and root is chain[1]:
                tail = f"; {root.name} failed"
            elif root is not None:
                tail = f"; the chain ends at {root.name}, which failed: {' -> '.join(x.name for x in chain)}"
            else:
                tail = f"; the chain ends at {chain[-1].name} ({chain[-1].state.value}), whose cause is not in the artifacts"
            explanation = f"{c.name} ({c.status or 'not started'}) waits on {c.waiting_on}, which {c.blocked_by} creates when healthy{tail}."
            meaning = marker(c.waiting_on)
            if meaning is not None and meaning.meaning:
                explanation += f" {short}: {meaning.meaning}"
        else:
            title = f"{c.name} is stuck ({c.status or 'not started'})" + (f" waiting on {short}" if short else "")
            explanation = f"{c.name}: {c.reason}."
        yield Hit(
            title=title,
            explanation=explanation + " It starts by itself once the marker exists.",
            severity=Severity.WARNING,
            role=Role.BLOCKED,
            evidence=c.evidence,
            node=c.node,
            component=c.name,
            confidence=0.9 if c.blocked_by else 0.6,
            layer=c.layer,
            caused_by=("OP001",) if root is not None and graph.crashlooping(root) else (),
            facts={"pod": c.pod, "blocked_by": c.blocked_by, "waiting_on": c.waiting_on, "root": root.name if root else None,
                   "chain": [x.name for x in chain]},
        )


_PULL_REASONS = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"})
_IMAGE_IN_TEXT = re.compile(r'(?:image|Image) \\?"(?P<image>[^"\\]+)\\?"')




# ------------------------------------------------------------------------------------------------ OP107


@check("OP107", "operand-failing-to-start")
def operand_failing_to_start(graph: OperandGraph, cluster: Cluster | None = None) -> Iterable[Hit]:
    """An operator operand never starts: its image, its container config or its admission fails.

    What it does: The fallback for failed operands that do not crash-loop (OP001 covers crashes): for every
    GPU/Network Operator operand whose pod is in ImagePullBackOff, ErrImagePull, CreateContainerConfigError,
    CreateContainerError, UnexpectedAdmissionError, Evicted or Pending with warning events, names the
    component, its layer, the container, and the decisive line: the container's waiting message, the pod's
    latest warning event, or its last error log line.
    Why it matters: such an operand writes no log of its own and never creates its readiness marker, so
    everything behind it waits; the decisive line is in the pod's status and events, which are easy to
    overlook. This is a generic guess (confidence 0.5): a specific check for the same pod (OP102 image
    pull, a failure class) is ranked above it.
    How to fix: Read the pod's events (`kubectl describe pod`), fix what the decisive line says, then delete
    the pod so its DaemonSet recreates it.
    References: https://github.com/NVIDIA/gpu-operator/issues/858; https://github.com/NVIDIA/gpu-operator/issues/2511
    """
    for c in graph.by_state(ComponentState.FAILED):
        if graph.crashlooping(c) or not c.pod:
            continue
        yield _start_failure(graph, c, cluster)


def _start_failure(graph: OperandGraph, c: Component, cluster: Cluster | None) -> Hit:
    obs = graph.observation(c)
    pod = graph.pod_of(c)
    bad = next((x for x in (pod.containers if pod else ()) if x.state == "waiting" and x.reason and x.reason not in ("PodInitializing", "ContainerCreating")), None)
    container = (bad.name if bad else None) or (obs.container if obs else None)
    decisive: Evidence | None = None
    said = None
    if bad is not None and bad.message:
        said = f"{bad.reason}: {bad.message.strip()}"
        decisive = bad.evidence
    warnings = [e for e in (cluster.events_for(c.pod) if cluster else []) if (e.type or "").lower() == "warning"]
    if warnings:
        last = warnings[-1]
        said = said or f"{last.reason}: {last.message.strip()}"
        decisive = decisive or last.evidence
    lines = graph.decisive_lines(c.pod, container)
    if not said and lines:
        said = lines[-1].message.strip()
        decisive = lines[-1].evidence()
    reason = (bad.reason if bad else None) or (obs.reason if obs else None) or c.status or "failed"
    evidence = [*c.evidence, *(e.evidence for e in warnings[-2:] if e.evidence), *([decisive] if decisive else [])]
    ns = _ns(c.namespace)
    title = f"{c.name} does not start ({reason})" + (f": {clip(said, 120)}" if said else "")
    explanation = (f"{c.name} ({c.layer.value} layer) pod {c.pod}" + (f", container {container}," if container else "")
                   + f" never runs ({c.status or reason}). ")
    explanation += (f"Decisive: \"{clip(said, 240)}\"" + (f" ({decisive.cite()})." if decisive else ".")) if said else (
        f"The artifacts hold no event or message saying why: `kubectl describe pod {c.pod}{ns}` shows it.")
    behind = graph.blocked_behind(c)
    if behind:
        explanation += f" {len(behind)} operand(s) wait on it: {', '.join(b.name for b in behind)}."
    return Hit(
        title=title,
        explanation=explanation,
        severity=Severity.ERROR,
        role=Role.ROOT_CAUSE,
        evidence=tuple(dict.fromkeys(e for e in evidence if e)),
        fixes=(Fix(FixKind.IMMEDIATE, "Read the pod's events and container states; fix what they say, then recreate the pod.",
                   (f"kubectl describe pod {c.pod}{ns}", f"kubectl get events{ns} --field-selector involvedObject.name={c.pod}",
                    f"kubectl delete pod {c.pod}{ns}")),),
        node=c.node,
        component=c.name,
        confidence=0.5,
        layer=c.layer,
        facts={"pod": c.pod, "namespace": c.namespace, "container": container, "reason": reason,
               "decisive_line": decisive.to_dict() if decisive else None, "blocked": [b.name for b in behind]},
    )


# ------------------------------------------------------------------------------------------------ OP102


@dataclass(frozen=True)
class PullError:
    kind: str
    pattern: re.Pattern
    meaning: str
    fix: str


@cache
def _pull_errors() -> tuple[PullError, ...]:
    return tuple(PullError(r["kind"], re.compile(r["match"]), r["meaning"], r["fix"]) for r in table("failure_classes")["pull_error"])


@cache
def _driver_images() -> tuple[str, tuple[str, ...], re.Pattern, tuple[str, ...]]:
    t = table("failure_classes")["driver_images"]
    return t["repository"], tuple(t["published_os"]), re.compile(t["tag"]), tuple(t["references"])


@cache
def _os_since() -> dict[str, str]:
    """OS version -> the first GPU Operator release with driver images for it."""
    return dict(table("failure_classes")["driver_images"].get("since", {}))


@dataclass
class _Pull:
    image: str
    pods: dict  # pod name -> (namespace, node)
    texts: list  # (text, Evidence)


def _image_of(text: str) -> str | None:
    m = _IMAGE_IN_TEXT.search(text)
    return m.group("image") if m else None


@check("OP102", "image-cannot-be-pulled")
def image_cannot_be_pulled(cluster: Cluster | None = None, logs: Logs | None = None, configuration: Configuration | None = None) -> Iterable[Hit]:
    """An image cannot be pulled; the registry's answer says why (no such tag, OS without driver images, auth, network).

    What it does: Collects pull failures per image from pod container states (ErrImagePull, ImagePullBackOff
    with their message), kubelet events (`Failed to pull image "…": …`) and containerd's log (`PullImage "…"
    failed`), classifies the error text (knowledge/failure_classes.toml [[pull_error]]: not found,
    unauthorized, rate limit, network), and for `nvcr.io/nvidia/driver:<version>-<os>` explains that the
    operator appended the node's OS and whether NVIDIA publishes driver images for that OS at all.
    Why it matters: a pod whose image cannot be pulled never starts and writes no log; for the driver
    DaemonSet every GPU operand on the node waits behind it. `manifest unknown` on the driver image is the
    classic sign of a node OS the driver images do not cover (Debian, Amazon Linux, a new Ubuntu before
    its images were published).
    How to fix: not found: set a version that exists for the OS (driver.version), or pre-install the driver
    on the host and set driver.enabled=false for unsupported OSes; auth: add the pull secret; network:
    mirror the images or fix the proxy.
    References: https://github.com/NVIDIA/gpu-operator/issues/722; https://github.com/NVIDIA/gpu-operator/issues/1212; https://github.com/NVIDIA/gpu-operator/issues/2225; https://github.com/NVIDIA/gpu-operator/issues/170; https://github.com/NVIDIA/gpu-operator/issues/690
    """
    pulls: dict[str, _Pull] = {}

    def add(image: str | None, text: str, ev: Evidence | None, pod: str | None, ns: str | None, node: str | None):
        if not image:
            return
        p = pulls.setdefault(image, _Pull(image, {}, []))
        if pod:
            p.pods.setdefault(pod, (ns, node))
        if ev is not None and all(e != ev for _, e in p.texts):
            p.texts.append((text, ev))

    if cluster is not None:
        for pod in cluster.pods:
            for c in pod.containers:
                if c.reason in _PULL_REASONS:
                    add(_image_of(c.message or "") or c.image, c.message or c.reason, c.evidence or pod.evidence, pod.name, pod.namespace, pod.node)
        for e in cluster.events:
            failed = (e.type or "").lower() == "warning" or e.reason in ("Failed", "BackOff")
            if not failed or ("pull" not in e.message.lower() and "ErrImagePull" not in e.message):
                continue
            image = _image_of(e.message)
            name = e.object.rsplit("/", 1)[-1] if e.object else None
            pod = cluster.pod(name) if name else None
            if image is None and pod is not None:  # `Error: ErrImagePull` names no image: take the pod's failing one
                image = next((c.image for c in pod.containers if c.reason in _PULL_REASONS and c.image), None)
            add(image, e.message, e.evidence, name, e.namespace or (pod.namespace if pod else None), e.node or (pod.node if pod else None))
    if logs is not None:
        for sid in ("containerd.pull-failed", "k8s.image-pull-failed"):
            for m in logs.matches(sid):
                add(_image_of(m.line.message), m.line.message, m.line.evidence(), m.line.pod or m.log.pod, m.log.namespace, m.log.node)
    for p in pulls.values():
        if p.texts:
            yield _pull_hit(p, configuration)


def helm_set(configuration: Configuration | None, setting: str) -> tuple[str, ...]:
    """`helm upgrade ... --set X` for the GPU Operator release when the artifacts name it; () when they do not."""
    rel = configuration.release if configuration else None
    if rel is None or not rel.name:
        return ()
    return (f"helm upgrade {rel.name} nvidia/gpu-operator{_ns(rel.namespace)} --reuse-values --set {setting}",)


_NO_RELEASE = " (The artifacts do not name the Helm release: run `helm list -A` to find it.)"


def _pull_hit(p: _Pull, configuration: Configuration | None) -> Hit:
    text = " ".join(t for t, _ in p.texts)
    err = next((e for e in _pull_errors() if e.pattern.search(text)), None)
    repo, published, tag_rx, refs = _driver_images()
    name, _, tag = p.image.rpartition(":")
    is_driver = name.endswith(repo) or name.endswith("/driver")
    pods = sorted(p.pods)
    operand = next((s for s in (spec_for(Pod(n, p.pods[n][0])) for n in pods) if s is not None), None)
    nodes = sorted({nd for _, nd in p.pods.values() if nd})
    why = err.meaning if err else "the error text does not say why"
    extra = ""
    fixes: list[Fix] = []
    m = tag_rx.match(tag) if is_driver and tag else None
    if m and err is not None and err.kind == "not-found":
        os_ = m.group("os")
        if any(os_.startswith(o) for o in published):
            extra = (f" The GPU Operator appended the node's OS ({os_}) to driver.version {m.group('version')}: NVIDIA publishes "
                     f"driver images for {os_.rstrip('0123456789.')}, but not this version for {os_}. Pick a driver version "
                     f"published for {os_} (NGC's nvcr.io/nvidia/driver tag list).")
            since = _os_since().get(os_)
            rel = configuration.release if configuration else None
            older = since and not (rel and rel.chart_version and versions.vtuple(rel.chart_version) >= versions.vtuple(since))
            if older:
                extra += (f" GPU Operator supports {os_} only from {since} on: "
                          + (f"release {rel.chart_version} predates it, so none of its driver versions has an {os_} image."
                             if rel and rel.chart_version else
                             f"with an older release (the artifacts do not show which one runs) no driver version it offers has an {os_} image."))
                cmds = helm_set(configuration, "driver.enabled=false")
                fixes.append(Fix(FixKind.PERMANENT, f"Upgrade the GPU Operator to {since} or later (its default driver has an {os_} image), "
                                 "or run a supported OS on the GPU nodes."))
                fixes.append(Fix(FixKind.WORKAROUND, f"Or pre-install the NVIDIA driver on the {os_} nodes and stop deploying the driver "
                                 "container (driver.enabled=false)."
                                 + ("" if cmds else _NO_RELEASE), cmds, snippet="driver:\n  enabled: false\n", snippet_language="yaml"))
            fixes.append(Fix(FixKind.PERMANENT, f"Set a driver version that NVIDIA publishes for {os_}.",
                             snippet="driver:\n  version: \"<a version listed for " + os_ + ">\"\n", snippet_language="yaml"))
        else:
            extra = (f" The GPU Operator appended the node's OS ({os_}) to the tag, and NVIDIA publishes no driver images for "
                     f"that OS: the driver container cannot run there. Install the driver on the host and deploy the operator "
                     f"with driver.enabled=false, or build your own driver image for {os_}.")
            cmds = helm_set(configuration, "driver.enabled=false")
            fixes.append(Fix(FixKind.WORKAROUND, f"Pre-install the NVIDIA driver on the {os_} nodes and stop deploying the driver container."
                             + ("" if cmds else _NO_RELEASE), cmds, snippet="driver:\n  enabled: false\n", snippet_language="yaml"))
    if err is not None:
        fixes.append(Fix(FixKind.PERMANENT, err.fix))
    first_pod = pods[0] if pods else None
    ns = _ns(p.pods[first_pod][0]) if first_pod else ""
    if first_pod:
        fixes.insert(0, Fix(FixKind.IMMEDIATE, "See the full pull error in the pod's events.", (f"kubectl describe pod {first_pod}{ns}",)))
    who = operand.name if operand is not None else (", ".join(pods[:3]) or "a pod")
    evidence = tuple(dict.fromkeys(e for _, e in p.texts))[:6]
    return Hit(
        title=f"Image {p.image} cannot be pulled ({err.kind if err else 'unknown reason'})",
        explanation=(f"{who} cannot start: pulling {p.image} fails because {why}." + extra
                     + (f" Affected pods: {', '.join(pods[:5])}." if pods else "")),
        severity=Severity.CRITICAL if is_driver else Severity.ERROR,
        role=Role.ROOT_CAUSE,
        evidence=evidence,
        fixes=tuple(fixes),
        node=nodes[0] if len(nodes) == 1 else None,
        component=operand.name if operand is not None else p.image,
        confidence=0.85 if err else 0.6,
        layer=None if (operand is not None or is_driver) else Layer.WORKLOAD,
        facts={"image": p.image, "reason": err.kind if err else None, "pods": pods, "nodes": nodes,
               "driver_os": m.group("os") if m else None},
    )


# ------------------------------------------------------------------------------------------------ OP103


@cache
def _states() -> dict[str, str]:
    return dict(table("failure_classes")["operator_states"])


_NOT_READY_COND = re.compile(r"states not ready: \[(?P<states>[^\]]*)\]")


@check("OP103", "clusterpolicy-not-ready")
def clusterpolicy_not_ready(configuration: Configuration | None = None, logs: Logs | None = None, graph: OperandGraph | None = None) -> Iterable[Hit]:
    """The ClusterPolicy is not ready, and which of its states (operands) hold it back.

    What it does: Reads the ClusterPolicy's status.state (notReady) and its Ready condition, and the
    operator's `ClusterPolicy is not ready, states not ready: [state-driver ...]` log line; maps each state to
    the operand it deploys (knowledge/failure_classes.toml [operator_states]) and says what the artifacts
    show of that operand (failed, blocked, running).
    Why it matters: notReady is the operator's summary, not a cause: the states it lists point at the
    operands to look at; when one of them failed, that failure is the root cause and this finding is its
    symptom.
    How to fix: fix the first listed operand that failed (its own finding says how); the ClusterPolicy turns
    ready by itself once every state is ready.
    References: https://github.com/NVIDIA/gpu-operator/issues/667; https://github.com/NVIDIA/gpu-operator/issues/1310; https://github.com/NVIDIA/gpu-operator/issues/368
    """
    states: dict[str, Evidence] = {}
    evidence: list[Evidence] = []
    cp = configuration.cluster_policy if configuration else None
    if cp is not None and str(cp.get("status.state", "")).lower() == "notready":
        evidence.append(cp.evidence("status.state"))
        for i, cond in enumerate(cp.get("status.conditions") or []):
            if isinstance(cond, dict) and (m := _NOT_READY_COND.search(str(cond.get("message", "")))):
                ev = Evidence(cp.artifact, cp.key_lines.get(f"status.conditions.{i}.message", cp.line), str(cond.get("message"))[:400])
                evidence.append(ev)
                for s in m.group("states").split():
                    states.setdefault(s, ev)
    if logs is not None:
        matches = logs.matches("operator.clusterpolicy-not-ready")
        if matches:
            last = matches[-1]
            evidence.append(last.line.evidence())
            for s in (m.group("states") if (m := _NOT_READY_COND.search(last.line.message)) else "").split():
                states.setdefault(s, last.line.evidence())
    if not evidence:
        return
    parts, failed = [], []
    for s in states:
        comp = _states().get(s)
        seen = [c for c in graph.components if c.name == comp] if graph is not None and comp else []
        bad = [c for c in seen if c.state in (ComponentState.FAILED, ComponentState.BLOCKED, ComponentState.DEGRADED)]
        if bad:
            parts.append(f"{s} ({comp}: {', '.join(sorted({c.state.value for c in bad}))})")
            failed += [c for c in bad if c.state == ComponentState.FAILED]
        else:
            parts.append(f"{s} ({comp or 'unknown operand'}{': no pod in the artifacts' if comp and not seen else ''})")
    if not states and graph is not None:  # the status names no state: the operands that failed say which
        failed = graph.by_state(ComponentState.FAILED)
    listed = "; ".join(parts) if parts else "the status does not list the states"
    roots = sorted({c.name for c in failed})
    yield Hit(
        title=f"ClusterPolicy {configuration.policy_name if configuration else 'cluster-policy'} is not ready"
              + (f": {', '.join(states)}" if states else ""),
        explanation=(f"The operator reports the ClusterPolicy notReady. Not ready: {listed}."
                     + (f" {', '.join(roots)} failed: that is where to look first." if roots else
                        " No operand shows a failure in the artifacts: collect the operand pods' status and logs.")),
        severity=Severity.WARNING,
        role=Role.SYMPTOM if roots else Role.ROOT_CAUSE,
        evidence=tuple(dict.fromkeys(evidence)),
        fixes=(Fix(FixKind.IMMEDIATE, "List the operand pods of the states that are not ready.",
                   ("kubectl get clusterpolicies.nvidia.com -o jsonpath='{.items[0].status}'",
                    f"kubectl get pods{_ns(configuration.release.namespace if configuration and configuration.release else None) or ' -A'} -o wide")),),
        component="gpu-operator",
        confidence=0.5,
        caused_by=("OP001",) if roots else (),
        facts={"states": list(states), "failed": roots},
    )


# ------------------------------------------------------------------------------------------------ OP105


@cache
def _misplaced() -> dict[str, str]:
    return dict(table("failure_classes")["helm_misplaced"])


def _env_lists(values: dict, prefix: str = "") -> Iterable[tuple[str, list]]:
    """Every `<path>.env` list in a values tree (driver.env, validator.plugin.env, ...)."""
    for k, v in values.items():
        path = f"{prefix}{k}"
        if k == "env" and isinstance(v, list):
            yield path, v
        elif isinstance(v, dict):
            yield from _env_lists(v, path + ".")


@check("OP105", "helm-values-ignored-or-rejected")
def helm_values_ignored_or_rejected(configuration: Configuration) -> Iterable[Hit]:
    """GPU Operator Helm values the chart ignores (unknown or misplaced keys) or rejects (non-string env values).

    What it does: For every GPU Operator values artifact (helm get values, values files, the release
    Secret): top-level keys the chart does not have (with the closest key it does have), keys written at
    the top level that the chart reads elsewhere (knowledge/failure_classes.toml [helm_misplaced], e.g.
    `migStrategy` for mig.strategy, `rdma` for driver.rdma), keys below the top level that neither the
    chart's values.yaml, its templates nor the ClusterPolicy CRD have (knowledge/schemas/gpu-operator-values.json
    and clusterpolicy-crd.json, with the key meant or the place it belongs: `devicePlugin.migStrategy` belongs
    under mig.strategy), and `<component>.env` values that YAML reads as booleans or numbers (toolkit.env is TK002's).
    Why it matters: Helm passes unknown keys through without a word, so a typo or a key at the wrong level
    silently leaves the default in force (the setting "does nothing"); an unquoted env value makes the
    rendered ClusterPolicy invalid and the install or upgrade fails.
    How to fix: move the key to where the chart reads it (helm show values nvidia/gpu-operator), quote env
    values, and `helm upgrade` again.
    References: https://github.com/NVIDIA/gpu-operator/issues/412; https://github.com/NVIDIA/k8s-device-plugin/issues/1433; https://github.com/provectus/kafka-ui-charts/issues/19
    """
    seen: set[tuple[str, str]] = set()
    for rel in configuration.values_docs:
        values = rel.user_values if rel.user_values is not None else rel.values
        if not isinstance(values, dict):
            continue
        chart_keys = load_schema("gpu-operator-values").schema.get("properties", {})
        for key in values:
            if key in OPERATOR_KEYS or key in chart_keys or (rel.artifact, key) in seen:
                continue
            seen.add((rel.artifact, key))
            target = _misplaced().get(key)
            close = difflib.get_close_matches(key, sorted(OPERATOR_KEYS), n=1, cutoff=0.75)
            if not target and not close:  # `toolkit-version` for toolkit.version, `driverVersion` for driver.version
                found = validate({key: values[key]}, load_schema("gpu-operator-values"))
                if found and found[0].kind == "misplaced-key" and found[0].belongs:
                    target = dotted(found[0].belongs)
            if target:
                why = f"the chart reads it as {target}"
            elif close:
                why = f"the chart has no `{key}`; did you mean `{close[0]}`?"
            else:
                why = f"the chart has no top-level `{key}`"
            yield Hit(
                title=f"Helm value `{key}` is ignored: {why}",
                explanation=(f"{rel.artifact} sets `{key}` at the top level of the GPU Operator's values; {why}. Helm keeps unknown keys "
                             f"without a warning, so this setting has no effect and the chart's default applies."),
                severity=Severity.WARNING,
                role=Role.ROOT_CAUSE,
                evidence=(rel.cite(key, f"{key}: {values[key]!r}"[:200]),),
                fixes=(Fix(FixKind.PERMANENT, f"Move the setting to {target or (close[0] if close else 'the key the chart documents')} "
                           "(helm show values nvidia/gpu-operator) and upgrade the release.",
                           snippet=_nested_yaml(target or (close[0] if close else None), values[key]),
                           snippet_language="yaml" if (target or close) else None),),
                component="gpu-operator",
                confidence=0.8 if (target or close) else 0.6,
                facts={"key": key, "expected": target or (close[0] if close else None)},
            )
        for p in _nested_value_problems(values, configuration):
            dots = ".".join(str(x) for x in p.path)
            if (rel.artifact, dots) in seen:
                continue
            seen.add((rel.artifact, dots))
            snippet = fix_snippet([p])
            yield Hit(
                title=f"Helm value `{dots}` is ignored: {p.message.split(': ', 1)[-1] if p.kind == 'misplaced-key' else p.message}",
                explanation=(f"{rel.artifact}: {p.message}{'' if p.message.endswith(('?', '.')) else '.'} Checked against the chart's values.yaml and the keys its templates and "
                             f"ClusterPolicy read ({load_schema('gpu-operator-values').cite}). Helm keeps unknown keys without a warning, "
                             "so this setting has no effect and the chart's default applies."),
                severity=Severity.WARNING,
                role=Role.ROOT_CAUSE,
                evidence=(rel.cite(dots, f"{p.key}: {p.value!r}"[:200]),),
                fixes=(Fix(FixKind.PERMANENT, f"Set it where the chart reads it{f' ({dotted(p.belongs)})' if p.belongs else ''} and upgrade the release.",
                           snippet=snippet, snippet_language="yaml" if snippet else None),),
                component="gpu-operator",
                confidence=0.75,
                facts={"key": dots, "expected": dotted(p.belongs) if p.belongs else p.closest, "kind": p.kind},
            )
        for path, items in _env_lists(values):
            if path == "toolkit.env":
                continue
            for i, item in enumerate(items):
                if isinstance(item, dict) and "value" in item and not isinstance(item["value"], str) and (rel.artifact, f"{path}.{i}") not in seen:
                    seen.add((rel.artifact, f"{path}.{i}"))
                    name, value = item.get("name"), item["value"]
                    shown = str(value).lower() if isinstance(value, bool) else value
                    yield Hit(
                        title=f"{path} {name} is {type(value).__name__} {value!r}, not a string",
                        explanation=(f"In {rel.artifact}, {path} {name} has the unquoted value {value!r}; YAML reads it as a "
                                     f"{type(value).__name__} and Kubernetes env values must be strings, so the rendered ClusterPolicy "
                                     "is rejected and the install or upgrade fails."),
                        severity=Severity.ERROR,
                        role=Role.ROOT_CAUSE,
                        evidence=(Evidence(rel.artifact, rel.key_lines.get(f"{path}.{i}.value"), f"{name}: {value}"),),
                        fixes=(Fix(FixKind.PERMANENT, "Quote the value (or use --set-string).",
                                   snippet=f"{path.replace('.env', '')}:\n  env:\n  - name: {name}\n    value: \"{shown}\"\n",
                                   snippet_language="yaml"),),
                        component="gpu-operator",
                        confidence=0.9,
                        facts={"path": path, "name": name, "value": value},
                    )


# ------------------------------------------------------------------------------------------------ OP106


@check("OP106", "driver-disabled-without-host-driver")
def driver_disabled_without_host_driver(logs: Logs, configuration: Configuration | None = None, cluster: Cluster | None = None) -> Iterable[Hit]:
    """driver.enabled=false, but the node has no NVIDIA driver of its own: the validators wait forever.

    What it does: When the ClusterPolicy/Helm values say driver.enabled=false (or no driver DaemonSet pod
    exists while the validators look for a pre-installed driver), looks for the driver validation failing
    on the node: `Attempting to validate a pre-installed driver on the host` followed by `failed to validate
    the driver, retrying`, `chroot: failed to run command 'nvidia-smi'`, or nvidia-smi's `couldn't
    communicate with the NVIDIA driver`.
    Why it matters: with the driver container disabled the operator relies on a host driver; without one
    the driver validation never succeeds, so the toolkit, device plugin and every other operand stay in
    Init and no GPU is ever advertised.
    How to fix: install the NVIDIA driver on the host (and reboot), or let the operator manage it
    (driver.enabled=true).
    References: https://github.com/cozystack/cozystack/pull/863; https://github.com/NVIDIA/gpu-operator/issues/2150; https://github.com/canonical/data-science-stack/issues/199
    """
    setting = configuration.setting("driver.enabled") if configuration else None
    disabled = setting is not None and truthy(setting.value) is False
    driver_pods = [p for p in (cluster.pods if cluster else []) if (s := spec_for(p)) is not None and s.name == "nvidia-driver-daemonset"]
    attempts = logs.matches("validator.driver.preinstalled-attempt")
    if not disabled and not (attempts and cluster is not None and cluster.pods and not driver_pods):
        return
    failures = [*logs.matches("validator.driver.host-driver-missing"), *logs.matches("validator.driver.chroot-missing"),
                *logs.matches("nvidia-smi.no-driver")]
    if not failures:
        return
    by_node: dict[str | None, list] = defaultdict(list)
    for m in [*attempts, *failures]:
        by_node[m.log.node or _node_of(cluster, m.line.pod or m.log.pod)].append(m)
    for node, ms in by_node.items():
        if not any(m.signature.id != "validator.driver.preinstalled-attempt" for m in ms):
            continue
        ms.sort(key=lambda m: (m.line.artifact, m.line.line))
        pod = next((m.line.pod or m.log.pod for m in ms if m.line.pod or m.log.pod), None)
        ns = next((m.log.namespace for m in ms if m.log.namespace), None)
        evidence = ([setting.evidence] if disabled and setting and setting.evidence else []) + [m.line.evidence() for m in ms[:2] + ms[-2:]]
        why = (f"driver.enabled is false ({setting.source})" if disabled and setting else "no driver DaemonSet pod exists")
        yield Hit(
            title=f"No NVIDIA driver on {node or 'the node'} while the driver container is disabled",
            explanation=(f"{why}, so the operator expects a driver installed on the host, but the driver validation keeps failing"
                         + (f" in {pod}" if pod else "") + f": \"{clip(ms[-1].line.message, 200)}\". Every GPU operand waits for it."),
            severity=Severity.CRITICAL,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(
                Fix(FixKind.IMMEDIATE, "Check for a driver on the host.",
                    (f"kubectl debug node/{node} -it --image=busybox -- chroot /host nvidia-smi",) if node else (),),
                Fix(FixKind.PERMANENT, "Either install the NVIDIA driver on the host and reboot, or let the operator deploy it."
                    + ("" if helm_set(configuration, "driver.enabled=true") else _NO_RELEASE),
                    helm_set(configuration, "driver.enabled=true"), snippet="driver:\n  enabled: true\n", snippet_language="yaml"),
            ),
            node=node,
            component="nvidia-operator-validator",
            confidence=0.85 if disabled else 0.6,
            layer=Layer.KERNEL_DRIVER,
            facts={"driver_enabled": False if disabled else None, "pod": pod, "namespace": ns},
        )


def _node_of(cluster: Cluster | None, pod: str | None) -> str | None:
    p = cluster.pod(pod) if cluster is not None and pod else None
    return p.node if p is not None else None


@check("OP080", "stated-operator-symptom")
def stated_operator_symptom(prose: Prose | None = None) -> Iterable[Hit]:
    """A ticket describes GPU Operator pods waiting in Init, or an operator upgrade or reboot before the failure.

    What it does: Reads the sentences of the artifacts that no parser claims (and the prose of Markdown issue
    bodies) against knowledge/phrases.toml [[symptom]] rows of this layer: operands "stuck in Init:0/1", a driver image that "does not exist" (ImagePullBackOff), or "it worked until we
    upgraded the GPU operator" / "after the node rebooted". Each match is a finding
    that cites the sentence, says what it implies, and lists the commands whose output would confirm it.
    Its confidence is low (0.35): a person's words, not a program's output, so any machine-read cause on the
    same scope explains it first.
    Why it matters: A ticket often holds only sentences; operands wait in Init for the component below them; the first one that failed (usually the driver or the toolkit) is the cause.
    How to fix: Read `kubectl get pods -n gpu-operator -o wide` and the failing operand's log with gpusleuth.
    References: knowledge/phrases.toml (each symptom row lists the public tickets it was learned from)
    """
    yield from stated_hits(prose, Layer.OPERATOR)


# ------------------------------------------------------------------------------------------------ OP105 (nested), OP160


def _from_the_api_server(body: dict) -> bool:
    """An object read back from the API server (`kubectl get -o yaml`), not a manifest: it has a
    resourceVersion or a status."""
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    return bool(meta.get("resourceVersion") or meta.get("uid") or body.get("status"))


def _nested_yaml(path: str | None, value) -> str | None:
    """`mig.strategy`, "mixed" -> "mig:\n  strategy: mixed\n": the value written where the chart reads it."""
    if not path:
        return None
    import yaml

    tree = value
    for part in reversed(path.split(".")):
        tree = {part: tree}
    return yaml.safe_dump(tree, sort_keys=False, default_flow_style=False)


def _operator_version(configuration: Configuration | None, cluster: Cluster | None = None) -> str | None:
    """The GPU Operator version in use: the release's chart version, else the operator image's tag."""
    rel = configuration.release if configuration else None
    if rel and rel.chart_version and vkey(rel.chart_version):
        return rel.chart_version
    images = [i for p in (cluster.pods if cluster else ()) for i in p.images]
    return image_version(images, "gpu-operator")


def _newer_than_schema(version: str | None, schema: str) -> bool:
    """A version newer than the schema may have keys the schema does not: judge nothing then."""
    v, s = vkey(version), vkey(schema)
    return bool(v and s and v[:2] > s[:2])


def _crd_spec_has(path: tuple) -> bool:
    """Whether the ClusterPolicy spec accepts path (the chart copies most component blocks into it)."""
    node = load_schema("clusterpolicy-crd").schema.get("properties", {}).get("spec", {})
    for part in path:
        if isinstance(part, int):
            node = node.get("items") or {}
            continue
        props = node.get("properties")
        if isinstance(props, dict) and part in props:
            node = props[part]
        elif isinstance(node.get("additionalProperties"), dict) or node.get("x-kubernetes-preserve-unknown-fields") or not props:
            return True
        else:
            return False
    return True


_SUBCHARTS = ("node-feature-discovery",)  # vendored under the chart's charts/, read into gpu-operator-values.json


def _nested_value_problems(values: dict, configuration: Configuration) -> list[Problem]:
    cs = load_schema("gpu-operator-values")
    version = _operator_version(configuration)
    if _newer_than_schema(version, cs.version):
        return []
    out = []
    for p in validate(values, cs, version=version, skip=lambda path: len(path) == 1 and path[0] not in OPERATOR_KEYS):
        if len(p.path) < 2 or p.kind not in ("unknown-key", "misplaced-key", "wrong-case", "not-yet"):
            continue
        if p.kind == "not-yet" and p.path[0] in _SUBCHARTS:
            continue  # a vendored subchart's version moves between patch releases; the stored refs are one per minor
        if p.kind != "not-yet" and _crd_spec_has(p.path):
            continue
        out.append(p)
    return out


@check("OP160", "clusterpolicy-field-not-in-crd")
def clusterpolicy_against_crd(configuration: Configuration, cluster: Cluster | None = None) -> Iterable[Hit]:
    """A ClusterPolicy sets fields its CRD does not have, values of the wrong type, or values outside the allowed set.

    What it does: checks the ClusterPolicy's spec against the CRD's OpenAPI schema as the operator ships it
    (knowledge/schemas/clusterpolicy-crd.json, from NVIDIA/gpu-operator deployments/gpu-operator/crds at each
    release): unknown fields (with the nearest field, and the place a field belongs when it exists elsewhere:
    `spec.driver.migStrategy` belongs under spec.mig.strategy), wrong types, values outside an enum
    (mig.strategy, driver.kernelModuleType ...), and fields the operator version in use does not have yet or no
    longer has. A version newer than the stored schema is not judged, nor are unknown fields of a ClusterPolicy
    read back from the API server (it prunes what its CRD lacks, so what is left is a newer CRD's).
    Why it matters: the API server prunes fields a structural CRD does not declare (kubectl apply without
    --validate=strict only warns), so the operator never sees them and the default stays in force; a wrong type or
    enum value is refused and the edit does not land at all.
    How to fix: write the field where the CRD has it (the corrected snippet is given) and re-apply with
    `kubectl apply --validate=strict`, or set it through the chart's values.
    References: https://github.com/NVIDIA/gpu-operator/blob/main/deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml; https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-pruning
    """
    cp = configuration.cluster_policy
    if cp is None or not isinstance(cp.body.get("spec"), dict):
        return
    cs = load_schema("clusterpolicy-crd")
    version = _operator_version(configuration, cluster)
    hit = _against_crd(cp, "ClusterPolicy", cs, version, operator="the operator", component="gpu-operator", unknown_version_judges=True)
    if hit is not None:
        yield hit


def _against_crd(obj, kind: str, cs, version: str | None, *, operator: str, component: str, unknown_version_judges: bool) -> Hit | None:
    """One custom resource's spec against its CRD's schema, as the API server and the operator read it: the
    finding of OP160 (ClusterPolicy) and OP162 (NicClusterPolicy). Without the version in use, a field the
    newest CRD lacks may still be an older one's: `unknown_version_judges` says whether removed and not-yet
    fields are judged then."""
    if _newer_than_schema(version, cs.version):
        return None
    problems = [p for p in validate(obj.body["spec"], cs, version=version, root=("spec",), at=("spec",)) if p.kind != "deprecated"]
    if version is None and not unknown_version_judges:
        problems = [p for p in problems if p.kind not in ("removed", "not-yet")]
    if _from_the_api_server(obj.body):
        # the API server prunes fields its CRD lacks: any field still here is one a newer CRD than ours has
        problems = [p for p in problems if p.kind not in ("unknown-key", "misplaced-key", "wrong-case")]
    if not problems:
        return None
    refused = [p for p in problems if p.kind in ("wrong-type", "bad-value")]
    snippet = fix_snippet(problems)
    return Hit(
        title=f"{kind} {obj.name}: {problems[0].message}",
        explanation=(f"Checked against the {kind} CRD ({cs.cite}" + (f"; {operator} in use is {version}" if version else "")
                     + f"): {summary(problems)} "
                     + ("The API server refuses a value of the wrong type or outside the allowed set, so the edit does not land. " if refused else "")
                     + (f"Fields the CRD does not declare are pruned by the API server, so {operator} never sees them." if any(p.ignored for p in problems) else "")).strip(),
        severity=Severity.ERROR if refused else Severity.WARNING,
        role=Role.ROOT_CAUSE,
        evidence=tuple(dict.fromkeys(obj.evidence(".".join(str(x) for x in p.path), f"{p.dotted}: {p.value!r}"[:200] if p.value is not None else None) for p in problems[:6])),
        fixes=(Fix(FixKind.PERMANENT, "Write the field where the CRD has it and re-apply with `kubectl apply --validate=strict`.",
                   snippet=snippet, snippet_language="yaml" if snippet else None),),
        component=component,
        confidence=0.8,
        facts={"schema": cs.version, "version": version,
               "problems": [{"kind": p.kind, "path": p.dotted, "belongs": dotted(p.belongs) if p.belongs else None} for p in problems]},
    )


# ------------------------------------------------------------------------------------------------ OP161

# the GPU stack's DaemonSets (operator operands and the standalone plugin/GFD); NFD's worker is FD102's
_GPU_DAEMONSETS = re.compile(r"(nvidia-(device-plugin|container-toolkit|driver|dcgm|operator-validator|mig-manager|mps-control|"
                             r"node-status-exporter|vgpu|sandbox|kata|cc-manager|fabricmanager)|gpu-feature-discovery)")


def _tolerated(tolerations, taint) -> bool:
    for t in tolerations:
        if not isinstance(t, dict):
            continue
        if t.get("effect") not in (None, "", taint.effect):
            continue
        if t.get("operator") == "Exists" and t.get("key") in (None, "", taint.key):
            return True
        if t.get("key") == taint.key and str(t.get("value") or "") == str(taint.value or ""):
            return True
    return False


@check("OP161", "gpu-daemonset-does-not-tolerate-gpu-node-taint")
def gpu_daemonset_taint_not_tolerated(cluster: Cluster) -> Iterable[Hit]:
    """A GPU DaemonSet's tolerations do not match the taint on the GPU nodes, so it never runs there.

    What it does: compares the NoSchedule / NoExecute taints of the nodes that have GPUs with the tolerations of
    each GPU stack DaemonSet the artifacts show (driver, toolkit, device plugin, GFD, DCGM, validator, MIG
    manager ...; NFD's worker is FD102's): the same fact stated twice, once on the nodes and once in each
    DaemonSet. An `Equal` toleration for another value (`nvidia.com/gpu=present` against a taint
    `nvidia.com/gpu=true`) does not match.
    Why it matters: a DaemonSet does not create pods on nodes whose taints it does not tolerate, and says nothing:
    DESIRED stays below the GPU node count, and whatever that operand provides (the driver, the runtime, the
    resource) never appears on those nodes.
    How to fix: add the node's taint to the DaemonSet's tolerations where it is configured (ClusterPolicy
    `daemonsets.tolerations`, the chart's `tolerations` value), or use `operator: Exists` for the taint key.
    References: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/; https://github.com/NVIDIA/k8s-device-plugin/issues/1934; https://github.com/NVIDIA/gpu-operator/issues/2717
    """
    gpu_nodes = [n for n in cluster.nodes.values()
                 if any(k.startswith("nvidia.com/") for k in (*n.capacity, *n.allocatable)) or "nvidia.com/gpu.present" in n.labels]
    taints: dict[tuple, list] = defaultdict(list)
    for n in gpu_nodes:
        for t in n.taints:
            if t.effect in ("NoSchedule", "NoExecute"):
                taints[(t.key, t.value, t.effect)].append((n, t))
    if not taints:
        return
    for ds in cluster.daemonsets:
        if not _GPU_DAEMONSETS.search(ds.name) or not (ds.tolerations or ds.tolerations_evidence):
            continue
        missing = [(k, nodes) for k, nodes in taints.items() if not _tolerated(ds.tolerations, nodes[0][1])]
        if not missing:
            continue
        (key, value, effect), nodes = missing[0]
        shown = f"{key}={value}:{effect}" if value else f"{key}:{effect}"
        yield Hit(
            title=f"DaemonSet {ds.name} does not tolerate the GPU nodes' taint {shown}",
            explanation=(f"{len(nodes)} GPU node(s) ({', '.join(n.name for n, _ in nodes[:4])}) carry the taint {shown}; DaemonSet "
                         f"{ds.namespace + '/' if ds.namespace else ''}{ds.name} tolerates "
                         f"{', '.join(str(t.get('key', '*')) + ('=' + str(t['value']) if t.get('value') else '') + ' (' + str(t.get('operator', 'Equal')) + ')' for t in ds.tolerations) or 'nothing'}, "
                         "so it creates no pod on them."),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(e for e in (nodes[0][1].evidence, ds.tolerations_evidence or ds.evidence) if e),
            fixes=(Fix(FixKind.PERMANENT, "Tolerate the taint where the DaemonSet's tolerations are configured.",
                       snippet=f"tolerations:\n- key: {key}\n  operator: Exists\n  effect: {effect}\n", snippet_language="yaml"),),
            node=nodes[0][0].name,
            component=ds.name,
            confidence=0.8,
            facts={"taint": shown, "daemonset": ds.name, "nodes": [n.name for n, _ in nodes]},
        )


# ------------------------------------------------------------------------------------------------ OP162


@check("OP162", "nicclusterpolicy-field-not-in-crd")
def nicclusterpolicy_against_crd(configuration: Configuration, cluster: Cluster | None = None) -> Iterable[Hit]:
    """A NicClusterPolicy sets fields the Network Operator's CRD does not have, values of the wrong type, or values outside the allowed set.

    What it does: checks the NicClusterPolicy's spec against the CRD's OpenAPI schema as the Network Operator
    ships it (knowledge/schemas/nicclusterpolicy-crd.json, from Mellanox/network-operator
    deployment/network-operator/crds at each release): unknown fields (with the nearest field, and where a field
    belongs when it exists elsewhere: `spec.ofedDriver.upgradePolicy.autoUpgrade` written one level up),
    wrong types, values outside an enum, and fields the Network Operator version in use (its image tag) does not
    have yet or no longer has. A version newer than the stored schema is not judged, nor are unknown fields of a
    NicClusterPolicy read back from the API server (it prunes what its CRD lacks).
    Why it matters: the API server prunes fields a structural CRD does not declare, so the Network Operator never
    sees them: the MOFED/DOCA driver, the RDMA shared device plugin or the SR-IOV plugin is deployed with its
    default instead (no `rdma/...` resource, GPUDirect RDMA unavailable to GPU pods); a wrong type or enum value
    is refused and the edit does not land at all.
    How to fix: write the field where the CRD has it (the corrected snippet is given) and re-apply with
    `kubectl apply --validate=strict`, or set it through the Network Operator chart's values.
    References: https://github.com/Mellanox/network-operator/blob/master/deployment/network-operator/crds/mellanox.com_nicclusterpolicies.yaml; https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-pruning
    """
    ncp = configuration.nic_cluster_policy
    if ncp is None or not isinstance(ncp.body.get("spec"), dict):
        return
    cs = load_schema("nicclusterpolicy-crd")
    images = [i for p in (cluster.pods if cluster else ()) for i in p.images]
    hit = _against_crd(ncp, "NicClusterPolicy", cs, image_version(images, "network-operator"), operator="the Network Operator",
                       component="network-operator", unknown_version_judges=False)
    if hit is not None:
        yield hit
