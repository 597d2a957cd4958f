"""Scheduler layer: GPU pods that cannot be placed, and the lower layer that explains why."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.classes import clip
from gpusleuth.facts import Cluster, GpuInventory
from gpusleuth.facts.cluster import GPU_RESOURCE
from gpusleuth.facts.logs import Logs, signature_pattern
from gpusleuth.parsers.k8s_common import to_int
from gpusleuth.facts.operands import OperandGraph
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import ComponentState, Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.k8s import Event, Node, Pod, Taint
from gpusleuth.checks.stated_common import stated_hits
from gpusleuth.facts.prose import Prose
from gpusleuth.model.layers import Layer
from gpusleuth.facts.validation import PodSpecAt, PodSpecs, Problem, dotted, fix_snippet, summary, validate
from gpusleuth.knowledge.config_schemas import load as load_schema

# `0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint {...}.`
_INSUFFICIENT = re.compile(r"(\d+) Insufficient (nvidia\.com/[\w.\-]+)")
_AVAILABLE = re.compile(r"(\d+)/(\d+) nodes are available")
_TAINT = re.compile(r"(\d+) node\(s\) had (?:untolerated )?taints? \{([^}]*)\}")


def _pod_name(e: Event) -> str | None:
    return e.object.rsplit("/", 1)[-1] if e.object else None


def _lower_layers(cluster: Cluster, graph: OperandGraph | None, inventory: GpuInventory | None) -> list[tuple[str, Evidence | None]]:
    """What below the scheduler explains missing GPUs: nodes advertising none while GPUs are present, and
    GPU operands that failed or are blocked."""
    out: list[tuple[str, Evidence | None]] = []
    for name, node in sorted(cluster.nodes.items()):
        alloc = node.allocatable.get(GPU_RESOURCE, node.capacity.get(GPU_RESOURCE))
        ng = inventory.for_node(name) if inventory else None
        seen = ng.visible.value if ng is not None and ng.visible is not None else None
        if (node.allocatable or node.capacity) and str(alloc or "0").strip() == "0" and seen:
            ev = node.evidence.get(f"allocatable:{GPU_RESOURCE}") or node.evidence.get(f"capacity:{GPU_RESOURCE}")
            out.append((f"{name} advertises {GPU_RESOURCE}: {alloc or 'none'} although {seen} GPU(s) are visible", ev))
    if graph is not None:
        for root in graph.roots():
            behind = graph.blocked_behind(root)
            where = f" on {root.node}" if root.node else ""
            out.append((f"{root.name}{where} failed ({root.status or root.reason}) and {len(behind)} operand(s) wait on it",
                        root.evidence[0] if root.evidence else None))
        plugins = [c for c in graph.components if c.name == "nvidia-device-plugin-daemonset" and c.state != ComponentState.OK]
        for p in plugins:
            if not any(p.name in text for text, _ in out):
                out.append((f"the device plugin {p.pod or ''} is {p.state.value} ({p.status or p.reason})".replace("  ", " "),
                            p.evidence[0] if p.evidence else None))
    return out


@check("SC001", "pods-pending-insufficient-gpu")
def pods_pending_insufficient_gpu(cluster: Cluster, graph: OperandGraph | None = None, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """GPU pods stay Pending because no node has a free nvidia.com/gpu.

    What it does: Finds FailedScheduling events saying `Insufficient nvidia.com/gpu` (or a MIG resource),
    groups them per pod, quotes the scheduler's count (`0/3 nodes are available: 1 Insufficient
    nvidia.com/gpu, 2 node(s) had untolerated taint ...`) and names the lower layer that explains it when
    the artifacts show one: a node advertising nvidia.com/gpu: 0 while its GPUs are visible, a failed or
    blocked device plugin, a failed GPU operand.
    Why it matters: Pending is where the problem is noticed, rarely where it is (debug from the
    bottom up). The pods start by themselves once the layer below advertises GPUs again.
    How to fix: fix the lower-layer cause listed with it. When nothing below is broken, the GPUs are all
    requested: compare the pods' requests with the nodes' allocatable, free GPUs or add nodes, and check
    that GPU nodes' taints are tolerated.
    References: https://kubernetes.io/docs/tasks/debug/debug-application/debug-pods/; https://kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/device-plugins/
    """
    events = [e for e in cluster.events if e.reason == "FailedScheduling" and _INSUFFICIENT.search(e.message or "")]
    by_pod: dict[tuple[str | None, str | None], list[Event]] = defaultdict(list)
    for e in events:
        by_pod[(e.namespace, _pod_name(e))].append(e)
    if not by_pod:
        return
    lower = _lower_layers(cluster, graph, inventory)
    for (ns, name), evs in by_pod.items():
        yield _pending_hit(cluster, ns, name, evs, lower)


def _pending_hit(cluster: Cluster, ns: str | None, name: str | None, evs: list[Event], lower) -> Hit:
    last = evs[-1]
    msg = last.message.strip()
    insufficient = _INSUFFICIENT.search(msg)
    resource = insufficient.group(2)
    avail = _AVAILABLE.search(msg)
    taints = _TAINT.findall(msg)
    pod = cluster.pod(name) if name else None
    evidence = [e.evidence for e in evs[-2:] if e.evidence]
    if pod is not None and pod.evidence:
        evidence.insert(0, pod.evidence)
    said = f"The scheduler says: \"{msg[:300]}\"" + (f" ({last.age})" if last.age else "") + "."
    if taints:
        said += " " + "; ".join(f"{n} node(s) are excluded by the taint {{{t.strip()}}} the pod does not tolerate" for n, t in taints) + "."
    if lower:
        why = " Below the scheduler: " + "; ".join(text for text, _ in lower) + "."
        evidence += [ev for _, ev in lower if ev]
    else:
        why = (" Nothing below the scheduler is visibly broken in the artifacts, so either every advertised GPU is requested "
               "already or the GPU nodes are excluded (taints, node selectors); add the nodes' descriptions and the device "
               "plugin's state to tell.")
    req = f" requesting {pod.gpu_request} {resource}" if pod is not None and pod.gpu_request else ""
    ns_flag = f" -n {ns}" if ns else ""
    return Hit(
        title=f"Pod {name or '(unnamed)'} is Pending: Insufficient {resource}"
        + (f" ({avail.group(1)}/{avail.group(2)} nodes available)" if avail else ""),
        explanation=f"{name}{req} cannot be scheduled. {said}{why}",
        severity=Severity.ERROR,
        # With a visible lower cause it is a symptom (the ranker links it to the lowest root cause); without one,
        # a low-confidence root cause that yields to any specific cause found elsewhere.
        role=Role.SYMPTOM if lower else Role.ROOT_CAUSE,
        evidence=tuple(dict.fromkeys(evidence)),
        fixes=(
            Fix(
                FixKind.IMMEDIATE,
                "Fix the lower-layer cause listed above; the pod is scheduled by itself once a node advertises a free "
                f"{resource}. To see what each node advertises and what is requested:",
                (f"kubectl describe pod {name}{ns_flag}" if name else "kubectl get events -A --field-selector reason=FailedScheduling",
                 f"kubectl get nodes -o custom-columns='NAME:.metadata.name,GPU:.status.allocatable.{resource.replace('.', chr(92) + '.')}'",
                 "kubectl describe nodes | grep -E '^Name:|nvidia.com/gpu'"),
            ),
        ),
        node=None,
        component=name,
        confidence=0.5,
        facts={"pod": name, "namespace": ns, "resource": resource, "events": len(evs),
               "nodes_available": int(avail.group(1)) if avail else None, "nodes_total": int(avail.group(2)) if avail else None,
               "explained_by": [text for text, _ in lower]},
    )


_TAINT_ITEM = re.compile(r"\{(?P<key>[^:}]+):\s*(?P<value>[^}]*)\}")


def _wants_gpu(p: Pod) -> bool:
    return (p.gpu_request or 0) > 0 or any(k.startswith("nvidia.com/") for k in p.resource_requests)


def _gpu_node(n: Node) -> bool:
    return any(k.startswith("nvidia.com/") for k in (*n.capacity, *n.allocatable)) or "nvidia.com/gpu.present" in n.labels \
        or str(n.labels.get("feature.node.kubernetes.io/pci-10de.present", "")).lower() == "true"


def _failed_scheduling(cluster: Cluster, sig_id: str) -> Iterable[tuple[Pod, Event]]:
    rx = signature_pattern(sig_id)
    seen: set[str] = set()
    for e in reversed(cluster.events):
        if e.reason != "FailedScheduling" and "nodes are available" not in e.message:
            continue
        if not rx.search(e.message):
            continue
        name = e.object.rsplit("/", 1)[-1] if e.object else None
        pod = cluster.pod(name) if name else None
        if pod is None or pod.name in seen:
            continue
        seen.add(pod.name)
        yield pod, e


def _shown(t: dict) -> str:
    """A toleration as `kubectl describe` prints it: key=value:Effect op=Exists."""
    value = f"={t['value']}" if t.get("value") else ""
    effect = f":{t['effect']}" if t.get("effect") else ""
    op = " op=Exists" if t.get("operator") == "Exists" else ""
    return f"{t.get('key') or '*'}{value}{effect}{op}"


def _toleration_for(t: Taint) -> str:
    value = f"\n  value: \"{t.value}\"" if t.value else ""
    op = "Equal" if t.value else "Exists"
    return f"tolerations:\n- key: {t.key}\n  operator: {op}{value}\n  effect: {t.effect}\n"


@check("SC101", "gpu-node-taint-not-tolerated")
def gpu_node_taint_not_tolerated(cluster: Cluster) -> Iterable[Hit]:
    """A GPU pod is Pending because the GPU nodes carry a taint the pod does not tolerate.

    What it does: For GPU-requesting pods whose FailedScheduling event says `node(s) had untolerated taint
    {key: value}` (or the older `had taint {…}, that the pod didn't tolerate`), finds the GPU nodes with
    that taint and compares the pod's tolerations when they are in the artifacts (a toleration for
    `nvidia.com/gpu=present` does not match the taint `nvidia.com/gpu=true`).
    Why it matters: GPU nodes are usually tainted so that only GPU pods land there; a pod without the
    matching toleration never fits, and the scheduler's summary hides it among other reasons.
    How to fix: add the toleration to the pod template (or let an admission webhook such as the
    ExtendedResourceToleration plugin add it for pods requesting nvidia.com/gpu).
    References: https://github.com/NVIDIA/gpu-operator/issues/801; https://github.com/NVIDIA/gpu-operator/issues/270; https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
    """
    for pod, event in _failed_scheduling(cluster, "k8s.untolerated-taint"):
        if not _wants_gpu(pod):
            continue
        named = {m.group("key").strip(): m.group("value").strip() for m in _TAINT_ITEM.finditer(event.message)}
        tainted = [(n, t) for n in cluster.nodes.values() if _gpu_node(n) for t in n.taints
                   if t.key in named and t.effect in ("NoSchedule", "NoExecute")]
        gpu_keys = [k for k in named if "gpu" in k.lower() or "nvidia" in k.lower()]
        if not tainted and not gpu_keys:
            continue
        if tainted:
            node, taint = tainted[0]
        else:
            node, taint = None, Taint(gpu_keys[0], named[gpu_keys[0]] or None, "NoSchedule")
        shown = f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"
        tol = ", ".join(_shown(t) for t in pod.tolerations) if pod.tolerations else None
        ns = f" -n {pod.namespace}" if pod.namespace else ""
        evidence = [event.evidence, pod.evidence, *(t.evidence for _, t in tainted[:2])]
        yield Hit(
            title=f"{pod.name} does not tolerate the GPU nodes' taint {shown}",
            explanation=(f"Pod {pod.name} asks for GPUs and stays Pending: the scheduler says \"{clip(event.message, 200)}\". "
                         + (f"GPU node{'s' if len(tainted) > 1 else ''} {', '.join(sorted({n.name for n, _ in tainted}))} carr"
                            f"{'y' if len(tainted) > 1 else 'ies'} {shown}" if tainted else f"The taint {shown} is on the GPU nodes")
                         + (f"; the pod tolerates only {tol}." if tol else "; the pod has no toleration for it.")),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(Fix(FixKind.IMMEDIATE, f"Add a toleration for {shown} to the pod's template.",
                       (f"kubectl get pod {pod.name}{ns} -o jsonpath='{{.spec.tolerations}}'",),
                       snippet=_toleration_for(taint), snippet_language="yaml"),),
            node=node.name if node else None,
            component=pod.name,
            confidence=0.85 if tainted else 0.65,
            facts={"pod": pod.name, "taint": shown, "tolerations": pod.tolerations and list(pod.tolerations)},
        )


@check("SC102", "gpu-pod-selector-matches-no-gpu-node")
def gpu_pod_selector_matches_no_gpu_node(cluster: Cluster) -> Iterable[Hit]:
    """A GPU pod's nodeSelector (or affinity) matches none of the GPU nodes.

    What it does: For GPU-requesting pods whose FailedScheduling event says `node(s) didn't match Pod's node
    affinity/selector`, compares each nodeSelector entry with the labels of the nodes that have GPUs and
    names the entry no GPU node carries (with the value the GPU nodes do carry for that key, e.g.
    nvidia.com/gpu.product=Tesla-V100 asked, NVIDIA-A100-SXM4-80GB present).
    Why it matters: a selector written for another cluster, another GPU model or a label GFD no longer sets
    keeps the pod Pending forever, and the scheduler's message does not say which key failed.
    How to fix: change the selector to a label the GPU nodes have (kubectl get nodes --show-labels), or
    label the intended nodes.
    References: https://github.com/NVIDIA/gpu-operator/issues/693; https://github.com/kai-scheduler/KAI-Scheduler/issues/1876; https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
    """
    gpu_nodes = [n for n in cluster.nodes.values() if _gpu_node(n) and n.labels]
    for pod, event in _failed_scheduling(cluster, "k8s.selector-mismatch"):
        if not _wants_gpu(pod):
            continue
        missing = [(k, v) for k, v in pod.node_selector.items() if not any(str(n.labels.get(k)) == str(v) for n in gpu_nodes)]
        if pod.node_selector and not missing:
            continue
        ns = f" -n {pod.namespace}" if pod.namespace else ""
        if missing:
            k, v = missing[0]
            have = sorted({str(n.labels[k]) for n in gpu_nodes if k in n.labels})
            said = f"no GPU node has {k}={v}" + (f" (the GPU nodes have {k}={', '.join(have)})" if have else f" (no GPU node has the label {k} at all)")
            evidence = [event.evidence, pod.evidence, *(n.evidence.get(f"label:{k}") for n in gpu_nodes if k in n.labels)][:5]
            confidence = 0.85 if gpu_nodes else 0.6
        else:
            if "taint" in event.message or "Insufficient" in event.message:
                continue  # the GPU nodes fail for another reason; the mismatched nodes are others
            said = "the pod's node affinity (not in the artifacts) excludes every GPU node"
            evidence = [event.evidence, pod.evidence]
            confidence = 0.5
        yield Hit(
            title=f"{pod.name}'s node selector matches no GPU node: {said}",
            explanation=(f"Pod {pod.name} asks for GPUs and stays Pending: \"{clip(event.message, 200)}\"; {said}."),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(Fix(FixKind.IMMEDIATE, "Compare the pod's selector and affinity with the GPU nodes' labels and fix whichever is wrong.",
                       (f"kubectl get pod {pod.name}{ns} -o jsonpath='{{.spec.nodeSelector}} {{.spec.affinity}}'",
                        "kubectl get nodes -l feature.node.kubernetes.io/pci-10de.present=true --show-labels")),),
            component=pod.name,
            confidence=confidence,
            facts={"pod": pod.name, "missing": [f"{k}={v}" for k, v in missing]},
        )


@check("SC080", "stated-pending-symptom")
def stated_pending_symptom(prose: Prose | None = None) -> Iterable[Hit]:
    """A ticket describes GPU pods staying Pending.

    What it does: Reads the sentences of the artifacts that no parser claims (and the prose of Markdown issue
    bodies) against knowledge/phrases.toml [[symptom]] rows of this layer: GPU pods "stuck in Pending", `Insufficient nvidia.com/gpu` quoted in a sentence. Each match is a finding
    that cites the sentence, says what it implies, and lists the commands whose output would confirm it.
    Its confidence is low (0.35): a person's words, not a program's output, so any machine-read cause on the
    same scope explains it first.
    Why it matters: A ticket often holds only sentences; a Pending GPU pod means no node offers a free GPU it may use: none advertised, all in use, or taints and selectors in the way.
    How to fix: Read `kubectl describe pod` (its Events) and `kubectl describe node` with gpusleuth.
    References: knowledge/phrases.toml (each symptom row lists the public tickets it was learned from)
    """
    yield from stated_hits(prose, Layer.SCHEDULER)


# ------------------------------------------------------------------------------------------------ SC160

_GPU_PREFIXES = ("nvidia.com/", "amd.com/", "gpu.intel.com/")
_CONTAINERS = ("containers", "initContainers")
# Kubernetes' in-tree GPU resource (the Accelerators feature gate), removed in 1.11 for device plugins: no node offers it
_IN_TREE_GPU = "alpha.kubernetes.io/nvidia-gpu"


def _gpu_relevant(spec: dict) -> bool:
    """A pod spec that asks for a GPU: a GPU resource anywhere in its containers, a GPU toleration, or an nvidia runtime class."""
    for group in _CONTAINERS:
        for c in spec.get(group) or ():
            if isinstance(c, dict) and any(str(k).startswith(_GPU_PREFIXES) or k == _IN_TREE_GPU for k in _resource_names(c)):
                return True
    if "nvidia" in str(spec.get("runtimeClassName") or ""):
        return True
    return any(isinstance(t, dict) and str(t.get("key", "")).startswith(_GPU_PREFIXES) for t in spec.get("tolerations") or ())


def _resource_names(c: dict) -> list[str]:
    res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
    out = [k for k in res if "/" in str(k)]
    for part in ("limits", "requests"):
        if isinstance(res.get(part), dict):
            out += list(res[part])
    return out


def _gpu_parts(path: tuple) -> bool:
    """The parts of a pod spec that decide where a GPU pod runs and what it gets."""
    if len(path) <= 1:
        return True
    if path[0] in ("tolerations", "nodeSelector", "runtimeClassName", "resources"):
        return True
    return path[0] in _CONTAINERS and (len(path) <= 3 or path[2] == "resources")


def _pod_spec_problems(ps: PodSpecAt) -> list[Problem]:
    cs = load_schema("pod-spec")
    spec = ps.spec
    out = [p for p in validate(spec, cs, at=ps.at) if _gpu_parts(p.path[len(ps.at):]) and p.kind != "deprecated"]
    meta = ps.obj.body.get("metadata") if isinstance(ps.obj.body.get("metadata"), dict) else {}
    if meta.get("resourceVersion") or meta.get("uid") or ps.obj.body.get("status"):
        # read back from the API server, which drops unknown fields: what is left is a newer API's field
        out = [p for p in out if p.kind not in ("unknown-key", "misplaced-key", "wrong-case")]
    fixed = []
    for p in out:
        rel = p.path[len(ps.at):]
        # `resources: {nvidia.com/gpu: 1}`: a resource name straight under resources
        if p.kind in ("unknown-key", "misplaced-key") and len(rel) == 4 and rel[0] in _CONTAINERS and rel[2] == "resources" and "/" in str(rel[3]):
            p = Problem("misplaced-key", p.path, f"`{rel[3]}` straight under {dotted(p.path[:-1])} is not read: resource names go under "
                        f"{dotted(p.path[:-1])}.limits", belongs=ps.at + ("containers", "[]", "resources", "limits", rel[3]), value=p.value)
        fixed.append(p)
    # extended resources: a limit is required, and a request must equal it, in whole units
    for group in _CONTAINERS:
        for i, c in enumerate(spec.get(group) or ()):
            res = c.get("resources") if isinstance(c, dict) and isinstance(c.get("resources"), dict) else {}
            limits = res.get("limits") if isinstance(res.get("limits"), dict) else {}
            requests = res.get("requests") if isinstance(res.get("requests"), dict) else {}
            base = ps.at + (group, i, "resources")
            for part, given in (("limits", limits), ("requests", requests)):
                if _IN_TREE_GPU in given:
                    fixed.append(Problem("removed", base + (part, _IN_TREE_GPU), f"{dotted(base + (part,))} asks for {_IN_TREE_GPU}, the GPU resource "
                                         "of Kubernetes' in-tree GPU support, removed in 1.11: no node offers it; the device plugin's "
                                         f"resource is nvidia.com/gpu", closest="nvidia.com/gpu",
                                         belongs=ps.at + (group, "[]", "resources", "limits", "nvidia.com/gpu"), value=given[_IN_TREE_GPU]))
            for name in set(limits) | set(requests):
                if not str(name).startswith(_GPU_PREFIXES):
                    continue
                if name not in limits:
                    fixed.append(Problem("bad-value", base + ("requests", name), f"{dotted(base)}.requests sets {name} without a limit: "
                                         "an extended resource must be set in limits (the API server refuses the pod)",
                                         belongs=ps.at + (group, "[]", "resources", "limits", name), value=requests[name]))
                elif name in requests and str(requests[name]) != str(limits[name]):
                    fixed.append(Problem("bad-value", base + ("requests", name), f"{name}: request {requests[name]} differs from limit {limits[name]}; "
                                         "for an extended resource they must be equal", value=requests[name]))
                value = limits.get(name, requests.get(name))
                if not (isinstance(value, int) or (isinstance(value, str) and value.isdigit())):
                    fixed.append(Problem("wrong-type", base + ("limits" if name in limits else "requests", name),
                                         f"{name} is {value!r}: GPUs are counted in whole units (the API server refuses fractions)", value=value))
    return fixed


@check("SC160", "gpu-pod-spec-field-not-read")
def gpu_pod_spec_against_schema(specs: PodSpecs) -> Iterable[Hit]:
    """A GPU pod's spec puts resources, tolerations, nodeSelector or runtimeClassName where Kubernetes does not read them.

    What it does: checks the spec of every GPU pod and GPU workload template (Pod, Deployment, Job, DaemonSet ...)
    against the Pod API types (knowledge/schemas/pod-spec.json, from k8s.io/api core/v1 PodSpec): unknown or
    misplaced fields in the pod spec and its containers (`runtimeClassName` inside a container belongs to the pod
    spec; `nvidia.com/gpu` straight under `resources` belongs under `resources.limits`), toleration operators and
    effects outside the allowed set (`operator: exists`), GPU resources the API server refuses (a request
    without a limit, a request that differs from its limit, a fraction of a GPU), and the in-tree GPU resource
    `alpha.kubernetes.io/nvidia-gpu` that Kubernetes removed in 1.11 (the device plugin's is `nvidia.com/gpu`).
    Why it matters: a field Kubernetes does not have is dropped (kubectl's strict validation refuses the manifest;
    Helm and older clients only warn), so the pod runs without the GPU, toleration or runtime class it was meant to
    have and lands on a node without GPUs, or stays Pending, or starts without the NVIDIA runtime.
    How to fix: write the field where the Pod API has it (the corrected snippet is given) and apply with
    `kubectl apply --validate=strict`.
    References: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/; https://github.com/kubernetes/api/blob/master/core/v1/types.go
    """
    for ps in specs.specs:
        if not _gpu_relevant(ps.spec):
            continue
        problems = _pod_spec_problems(ps)
        if not problems:
            continue
        refused = [p for p in problems if p.kind in ("wrong-type", "bad-value")]
        snippet = fix_snippet(problems)
        yield Hit(
            title=f"{ps.name}: {problems[0].message}",
            explanation=(f"Checked against the Pod API ({load_schema('pod-spec').cite}): {summary(problems)} "
                         + ("The API server refuses these values, so the pod is not created as written. " if refused else "")
                         + ("Kubernetes drops fields it does not have (kubectl --validate=strict refuses them), so they are not in effect. "
                            if any(p.ignored and p.key != _IN_TREE_GPU for p in problems) else "")
                         + (f"A pod that asks for {_IN_TREE_GPU} stays Pending (Insufficient {_IN_TREE_GPU}), or fails with "
                            f"OutOf{_IN_TREE_GPU} when bound to a node." if any(p.key == _IN_TREE_GPU for p in problems) else "")).strip(),
            severity=Severity.ERROR if refused else Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(ps.evidence(p.path, f"{p.key}: {p.value}"[:200] if p.value is not None and not isinstance(p.value, (dict, list)) else None) for p in problems[:6])),
            fixes=(Fix(FixKind.PERMANENT, "Write the field where the Pod API reads it and re-apply with `kubectl apply --validate=strict`.",
                       snippet=snippet, snippet_language="yaml" if snippet else None),),
            component=ps.obj.name,
            confidence=0.75,
            facts={"object": ps.name, "problems": [{"kind": p.kind, "path": p.dotted, "belongs": dotted(p.belongs) if p.belongs else None} for p in problems]},
        )


# ------------------------------------------------------------------------------------------------ SC105

SIG_OUT_OF = "k8s.pod-out-of-resource"  # knowledge/signatures.toml: its pattern also reads a pod's status


@check("SC105", "pod-rejected-by-kubelet-out-of-resource")
def pod_out_of_resource(cluster: Cluster | None = None, logs: Logs | None = None) -> Iterable[Hit]:
    """The kubelet refused a pod already bound to its node: status `OutOf<resource>` (OutOfnvidia.com/gpu).

    What it does: Finds pods whose status (or a line pasted from a pod list or its events) reads
    `OutOf<resource>`, one finding per pod, and tells the two ways a pod gets there: the resource is one no node
    offers (the in-tree `alpha.kubernetes.io/nvidia-gpu` Kubernetes removed in 1.11), or the node had none of it
    free when the kubelet admitted the pod, because the pod was bound without the scheduler (`spec.nodeName`) or the
    node's allocatable shrank after scheduling (a device plugin re-registering, GPUs marked unhealthy).
    Why it matters: unlike a Pending pod, such a pod has failed for good on that node: it never runs, and the
    scheduler's "Insufficient" events that would explain it never appear.
    How to fix: ask for the resource the device plugin advertises (`nvidia.com/gpu` in resources.limits) and let
    the scheduler place the pod (a nodeSelector, not nodeName); delete the failed pod so that its owner makes another.
    References: https://github.com/kubernetes/kubernetes/issues/96506; https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
    """
    out_of = signature_pattern(SIG_OUT_OF)
    found: dict[str, tuple[str, Evidence, Pod | None]] = {}
    for p in (cluster.pods if cluster is not None else ()):
        m = out_of.search(p.status or "")
        if m and p.name and p.evidence is not None:
            found.setdefault(p.name, (m.group("resource"), p.evidence, p))
    for mt in (logs.matches(SIG_OUT_OF) if logs is not None else ()):
        m = out_of.search(mt.line.message)
        name = mt.line.pod or mt.log.pod or next((w for w in mt.line.message.split() if w in found), None)
        key = name or mt.line.artifact
        if m and key not in found:
            found[key] = (m.group("resource"), mt.line.evidence(), cluster.pod(name) if cluster is not None and name else None)
    for key, (resource, ev, pod) in found.items():
        legacy = resource == _IN_TREE_GPU
        name = pod.name if pod is not None else (key if key != ev.artifact else None)
        where = f"pod {name}" if name else f"a pod ({key})"
        why = (f"{resource} is Kubernetes' in-tree GPU resource, removed in 1.11: no node offers it any more (the NVIDIA device plugin "
               f"advertises {GPU_RESOURCE}), so a pod bound to a node with it always fails there"
               if legacy else
               f"the node had no {resource} free when the kubelet admitted the pod: it was bound without the scheduler (spec.nodeName), "
               "or the node's allocatable shrank after scheduling (a device plugin re-registering, GPUs marked unhealthy)")
        yield Hit(
            title=f"The kubelet refused {where}: OutOf{resource}" + (" (a GPU resource no node offers)" if legacy else ""),
            explanation=f"{ev.cite()}: the pod's status is OutOf{resource}: {why}. The pod has failed on that node for good; it does not wait.",
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=(ev,),
            fixes=((Fix(FixKind.PERMANENT, f"Ask for {GPU_RESOURCE} in resources.limits instead of {resource}, and place the pod with a "
                        "nodeSelector rather than nodeName.", ()),) if legacy else ())
                  + ((Fix(FixKind.IMMEDIATE, "Delete the failed pod (its owner makes another), after checking the node offers the resource.",
                          ((f"kubectl get node {pod.node} -o jsonpath='{{.status.allocatable}}'",) if pod is not None and pod.node else ())
                          + ((f"kubectl delete pod {name}" + (f" -n {pod.namespace}" if pod.namespace else ""),) if name else ())),)),
            node=pod.node if pod is not None else None,
            component=name or "workload",
            confidence=0.85 if legacy else 0.6,
            layer=Layer.WORKLOAD if legacy else None,  # a resource name nothing offers is the pod's own mistake
            facts={"pod": name, "resource": resource, "legacy": legacy},
        )


# ------------------------------------------------------------------------------------------------ SC106


def _gpu_count(c: dict) -> tuple[str, int] | None:
    """(resource, count) of the first GPU resource a container's limits (else requests) name."""
    res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
    for part in ("limits", "requests"):
        for k, v in (res.get(part) or {}).items() if isinstance(res.get(part), dict) else ():
            if str(k).startswith(_GPU_PREFIXES) and (n := to_int(v)):
                return str(k), n
    return None


@check("SC106", "gpus-asked-by-several-containers")
def gpus_in_several_containers(specs: PodSpecs) -> Iterable[Hit]:
    """Several containers of one pod each ask for a GPU: the pod needs their sum on a single node.

    What it does: for every GPU pod spec (a Pod, or a workload's pod template) in which two or more app containers
    request a GPU resource, adds up what they ask for, names each container and its count, and cites their lines.
    Why it matters: the device plugin gives GPUs to containers, not to pods, and never shares one between
    containers; two containers with `nvidia.com/gpu: 1` each need two GPUs on one node. On nodes with one GPU each,
    the pod stays Pending on `Insufficient nvidia.com/gpu` while every node shows a free GPU.
    How to fix: let only the container that runs on the GPU request it, split the work into pods of one GPU each,
    or place the pod on a node with enough GPUs; sharing one GPU between containers needs time-slicing, MPS or MIG.
    References: https://github.com/NVIDIA/k8s-device-plugin/issues/71; https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
    """
    for ps in specs.specs:
        asks = [(c.get("name", f"#{i}"), i, got) for i, c in enumerate(ps.spec.get("containers") or ())
                if isinstance(c, dict) and (got := _gpu_count(c))]
        if len(asks) < 2:
            continue
        total = sum(n for _, _, (_, n) in asks)
        resource = asks[0][2][0]
        each = ", ".join(f"{name} {n}" for name, _, (_, n) in asks)
        yield Hit(
            title=f"{ps.name} needs {total} {resource} on one node: {len(asks)} containers each ask for their own",
            explanation=(f"Its containers ask for {resource}: {each}. GPUs are given to containers, not to the pod, and one GPU is never "
                         f"shared between containers, so the pod fits only a node with {total} free; on nodes with fewer it stays Pending "
                         f"on Insufficient {resource}, whatever each node has free."),
            severity=Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(ps.evidence((*ps.at, "containers", i, "resources", "limits", res), f"{name}: {res}: {n}")
                                         for name, i, (res, n) in asks)),
            fixes=(Fix(FixKind.PERMANENT, f"Let only the container that uses the GPU request {resource} (or split the pod, one GPU each); to "
                       "share one GPU between containers, use time-slicing, MPS or MIG.", ()),),
            component=ps.obj.name,
            confidence=0.6,
            facts={"object": ps.name, "gpus": total, "containers": [name for name, _, _ in asks]},
        )
