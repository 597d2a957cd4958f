"""Feature-discovery layer: Node Feature Discovery and GPU Feature Discovery labels — missing on GPU
nodes, missing because NFD never ran there, or stale after a driver change."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.facts import Cluster, Configuration, GpuInventory, Logs
from gpusleuth.facts.cluster import GPU_RESOURCE
from gpusleuth.facts.configuration import truthy
from gpusleuth.facts.gpus import COUNT_LABEL, PCI_PRESENT_LABEL
from gpusleuth.facts.operands import spec_for
from gpusleuth.facts.plugin_config import PluginWiring
from gpusleuth.facts.validation import NfdWorkerConfigs
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.k8s import Node, Pod
from gpusleuth.parsers.k8s_common import to_int
from gpusleuth.checks.stated_common import stated_hits
from gpusleuth.facts.prose import Prose
from gpusleuth.model.layers import Layer

GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
NFD_WORKER = "nfd-worker"
_DRIVER_LABELS = (("nvidia.com/cuda.driver-version.full",),
                  ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"),
                  ("nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver-version.minor", "nvidia.com/cuda.driver-version.revision"))
# Pods only the GPU Operator runs: a standalone device plugin chart also brings NFD, GFD and the plugin.
_OPERATOR_ONLY = ("gpu-operator", "nvidia-driver-daemonset", "nvidia-container-toolkit-daemonset", "nvidia-operator-validator")
_NVIDIA_OPERANDS = frozenset({"nvidia-driver-daemonset", "nvidia-container-toolkit-daemonset", "nvidia-device-plugin-daemonset",
                              "gpu-feature-discovery", "nvidia-operator-validator", "nvidia-dcgm-exporter"})


def _ev(node: Node, key: str) -> Evidence:
    return node.evidence.get(key) or Evidence(node.artifact or "", None, f"node {node.name} {key}")


def _gpu_nodes(cluster: Cluster, inventory: GpuInventory | None) -> dict[str, tuple[str, Evidence | None]]:
    """Nodes the artifacts show to have NVIDIA GPUs, with what shows it (not the NFD label itself)."""
    out: dict[str, tuple[str, Evidence | None]] = {}
    for ng in inventory.nodes if inventory else []:
        if ng.node and ng.node in cluster.nodes and ng.visible and ng.visible.value:
            out[ng.node] = (f"nvidia-smi shows {ng.visible.value} GPU(s)", ng.visible.evidence)
    for name, node in cluster.nodes.items():
        if name in out:
            continue
        if to_int(node.capacity.get(GPU_RESOURCE)):
            out[name] = (f"capacity {GPU_RESOURCE}: {node.capacity[GPU_RESOURCE]}", _ev(node, f"capacity:{GPU_RESOURCE}"))
        elif COUNT_LABEL in node.labels:
            out[name] = (f"label {COUNT_LABEL}={node.labels[COUNT_LABEL]}", _ev(node, f"label:{COUNT_LABEL}"))
        elif gpu_taint := next((t for t in node.taints if t.key == GPU_RESOURCE), None):
            # Nothing on the node says GPU yet (no plugin, no labels): the taint its owners put on GPU nodes does.
            out[name] = (f"tainted {_shown(gpu_taint)}, the taint GPU nodes are given", gpu_taint.evidence or _ev(node, f"taint:{GPU_RESOURCE}"))
    return out


def _shown(t) -> str:
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"


def _pods_of(cluster: Cluster, component: str) -> list[Pod]:
    return [p for p in cluster.pods if (s := spec_for(p)) is not None and s.name == component]


# ------------------------------------------------------------------------------------------------ FD101


@check("FD101", "nfd-labels-missing")
def nfd_labels_missing(cluster: Cluster, inventory: GpuInventory | None = None, logs: Logs | None = None,
                       configuration: Configuration | None = None) -> Iterable[Hit]:
    """A GPU node lacks Node Feature Discovery's NVIDIA PCI label, so the GPU Operator deploys nothing there.

    What it does: Where the GPU Operator is in the artifacts (its Helm values or ClusterPolicy, its own pod or
    operator-only operands, its NFD complaint), for nodes with GPUs (nvidia-smi output, nvidia.com/gpu
    capacity or GFD's gpu.count label) whose labels are in the artifacts, looks for `feature.node.kubernetes.io/pci-10de.present=true` and
    `nvidia.com/gpu.present`; when neither is there, says whether NFD runs at all (nfd-master/worker pods,
    Helm nfd.enabled) and cites the operator's `Couldn't get kernelVersion, did you run the node feature
    discovery?` line when present.
    Why it matters: the operator selects GPU nodes by NFD's PCI vendor label (10de = NVIDIA) and builds the
    driver image tag from NFD's kernel/OS labels; without them no operand is scheduled on the node and it
    never advertises GPUs, with no error on the node itself.
    How to fix: Run NFD (the chart's nfd.enabled=true, or an existing NFD deployment whose workers run on the
    GPU nodes), then check the node's labels; the operator reconciles by itself.
    References: https://github.com/NVIDIA/gpu-operator/issues/423; https://github.com/NVIDIA/gpu-operator/issues/728; https://github.com/NVIDIA/gpu-feature-discovery/issues/75
    """
    gpu_nodes = _gpu_nodes(cluster, inventory)
    op_lines = [m.line.evidence() for m in logs.matches("operator.nfd-labels-missing")] if logs else []
    if configuration is None and not op_lines and not any(_pods_of(cluster, c) for c in _OPERATOR_ONLY):
        return  # no GPU Operator in sight (a standalone device plugin chart): nothing selects nodes by these labels
    workers = _pods_of(cluster, NFD_WORKER)
    masters = _pods_of(cluster, "nfd-master")
    nfd_setting = configuration.setting("nfd.enabled") if configuration else None
    nfd_off = nfd_setting is not None and truthy(nfd_setting.value) is False
    for name, (why_gpu, gpu_ev) in sorted(gpu_nodes.items()):
        node = cluster.nodes[name]
        if not node.labels:
            continue  # labels not in the artifacts: cannot tell
        if str(node.labels.get(PCI_PRESENT_LABEL, "")).lower() == "true" or GPU_PRESENT_LABEL in node.labels:
            continue
        on_node = [w for w in workers if w.node == name]
        if nfd_off:
            state = f"NFD is disabled ({nfd_setting.source}: nfd.enabled={nfd_setting.value})"
        elif not workers and not masters and cluster.pods:
            state = "no NFD pod (nfd-master / nfd-worker) is in the artifacts"
        elif workers and not on_node:
            state = "NFD workers run, but none on this node (see FD102)"
        else:
            state = "NFD has not labelled this node"
        evidence = [gpu_ev, *(e for e in [nfd_setting.evidence if nfd_off and nfd_setting else None]), *op_lines[-1:]]
        yield Hit(
            title=f"{name} has GPUs but no NFD NVIDIA label ({PCI_PRESENT_LABEL}): the operator skips it",
            explanation=(f"Node {name} has GPUs ({why_gpu}) but its labels have neither {PCI_PRESENT_LABEL}=true nor "
                         f"{GPU_PRESENT_LABEL}; {state}. The GPU Operator selects GPU nodes by these labels, so it deploys no "
                         "driver, toolkit or device plugin there."),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(
                Fix(FixKind.IMMEDIATE, "Show the node's NFD labels and the NFD pods.",
                    (f"kubectl get node {name} --show-labels", "kubectl get pods -A -o wide | grep -i node-feature-discovery")),
                Fix(FixKind.PERMANENT, "Run Node Feature Discovery with workers on every GPU node (GPU Operator chart: nfd.enabled=true, "
                    "or your own NFD deployment with tolerations for the GPU nodes' taints)."),
            ),
            node=name,
            component="nfd-worker",
            confidence=0.85,
            facts={"nfd_workers": len(workers), "nfd_disabled": nfd_off},
        )


# ------------------------------------------------------------------------------------------------ FD102


def _tolerates(tolerations: tuple[dict, ...], taint) -> bool:
    for t in tolerations:
        op = t.get("operator", "Equal")
        if t.get("effect") not in (None, "", taint.effect):
            continue
        if op == "Exists" and t.get("key") in (None, "", taint.key):
            return True
        if t.get("key") == taint.key and str(t.get("value") or "") == str(taint.value or ""):
            return True
    return False


def _worker_tolerations(cluster: Cluster, workers: list[Pod], wiring: PluginWiring | None) -> tuple[tuple, Evidence | None]:
    """The NFD worker's tolerations and where they are shown: a worker pod's, the worker DaemonSet's (`-o yaml`
    or a `| yq .spec.template.spec.tolerations` paste), or nfd.worker.tolerations in the device plugin chart's values."""
    for w in workers:
        if w.tolerations:
            return w.tolerations, w.evidence
    for d in cluster.daemonsets:
        if d.tolerations and (d.name.endswith("node-feature-discovery-worker") or d.name.endswith("nfd-worker")):
            return d.tolerations, d.tolerations_evidence or d.evidence
    for rel in wiring.releases if wiring else ():
        tol = rel.get("nfd.worker.tolerations")
        if isinstance(tol, list) and tol:
            return tuple(t for t in tol if isinstance(t, dict)), rel.cite("nfd.worker.tolerations", "nfd.worker.tolerations: "
                                                                            + ", ".join(_tol(t) for t in tol if isinstance(t, dict)))
    return (), None


@check("FD102", "nfd-worker-not-on-gpu-node")
def nfd_worker_not_on_gpu_node(cluster: Cluster, inventory: GpuInventory | None = None,
                               wiring: PluginWiring | None = None) -> Iterable[Hit]:
    """Node Feature Discovery's worker does not run on a GPU node, because of a taint it does not tolerate.

    What it does: Where nfd-worker pods run on some nodes but not on a GPU node (GPUs seen, or the node
    tainted nvidia.com/gpu) that has NoSchedule or NoExecute taints, names the taint and the device plugin /
    GFD DaemonSets left with DESIRED 0; when the workers' tolerations are in the artifacts (a worker pod, the
    worker DaemonSet, even as a `| yq '.spec.template.spec.tolerations'` paste, or the device plugin chart's
    nfd.worker.tolerations), it checks them against the taint (a toleration for `nvidia.com/gpu=present` does not match a taint
    `nvidia.com/gpu=true`).
    Why it matters: GPU nodes are often tainted (nvidia.com/gpu:NoSchedule) to keep other workloads off; a
    DaemonSet without the matching toleration never lands there, NFD never labels the node, and the
    operator never deploys the GPU stack on it.
    How to fix: add a toleration for the GPU nodes' taints to the NFD worker (GPU Operator chart:
    node-feature-discovery.worker.tolerations; nvidia-device-plugin chart: nfd.worker.tolerations; e.g.
    `operator: Exists` for the taint key).
    References: https://github.com/NVIDIA/k8s-device-plugin/issues/734; https://github.com/NVIDIA/gpu-feature-discovery/issues/70; https://github.com/Mellanox/network-operator/issues/435
    """
    workers = _pods_of(cluster, NFD_WORKER)
    if not workers:
        return
    with_worker = {w.node for w in workers if w.node}
    gpu_nodes = _gpu_nodes(cluster, inventory)
    for name, (why_gpu, gpu_ev) in sorted(gpu_nodes.items()):
        node = cluster.nodes[name]
        if name in with_worker:
            continue
        taints = [t for t in node.taints if t.effect in ("NoSchedule", "NoExecute")]
        if not taints:
            continue
        tol, tol_ev = _worker_tolerations(cluster, workers, wiring)
        blocking = [t for t in taints if not tol or not _tolerates(tol, t)]
        if not blocking:
            continue
        t = blocking[0]
        shown = _shown(t)
        idle = _idle_daemonsets(cluster)
        chart = _nfd_chart(workers[0])
        toleration = {"key": t.key, "operator": "Exists", "effect": t.effect}
        fixes = [Fix(FixKind.PERMANENT, f"Let the NFD worker tolerate the GPU nodes' taint ({chart.values_key} in the {chart.name} chart's values), "
                     "then check that a worker pod starts on the node"
                     + (" (add --version with the chart version `helm list` shows, so the upgrade does not also move the chart)." if chart.release else "."),
                     tuple(c for c in (chart.command(toleration),) if c),
                     snippet=chart.snippet(toleration), snippet_language="yaml")]
        yield Hit(
            title=f"NFD worker does not run on GPU node {name}: taint {shown} is not tolerated",
            explanation=(f"nfd-worker pods run on {len(with_worker)} node(s) but not on {name}, "
                         + (f"a GPU node by its taint {shown}. " if gpu_ev is t.evidence and gpu_ev is not None
                            else f"which has GPUs ({why_gpu}) and the taint {shown}. ")
                         + (f"The worker's tolerations ({', '.join(_tol(x) for x in tol)}) do not match it. " if tol else "")
                         + "Without the worker the node gets no NFD labels (feature.node.kubernetes.io/pci-10de.present), and what "
                         "selects GPU nodes by them (the GPU Operator, the device plugin chart's node affinity) skips it."
                         + (f" DaemonSet {' and '.join(d.name for d in idle)} {'has' if len(idle) == 1 else 'have'} DESIRED 0: scheduled on "
                            "no node, so nvidia.com/gpu is never registered and GPU pods stay Pending." if idle else "")),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in (t.evidence, gpu_ev, tol_ev or workers[0].evidence,
                                                     *(d.evidence for d in idle)) if e)),
            fixes=tuple(fixes),
            node=name,
            component="nfd-worker",
            confidence=0.8 if tol else 0.65,
            facts={"taint": shown, "worker_nodes": sorted(with_worker)},
        )


def _idle_daemonsets(cluster: Cluster) -> list:
    """The device plugin / GFD DaemonSets scheduled on no node at all (DESIRED 0)."""
    return [d for d in cluster.daemonsets if d.desired == 0 and ("device-plugin" in d.name or "feature-discovery" in d.name)
            and "node-feature-discovery" not in d.name]


@dataclass(frozen=True)
class _NfdChart:
    name: str
    values_key: str  # where the worker's tolerations go in that chart's values
    release: str | None
    namespace: str | None

    def snippet(self, toleration: dict) -> str:
        outer, inner = self.values_key.split(".", 1)
        return (f"{outer}:\n  {inner.split('.')[0]}:\n    tolerations:\n    - key: {toleration['key']}\n"
                f"      operator: {toleration['operator']}\n      effect: {toleration['effect']}\n")

    def command(self, toleration: dict) -> str | None:
        if not self.release:
            return None
        repo = "nvdp/nvidia-device-plugin" if self.name == "nvidia-device-plugin" else "nvidia/gpu-operator"
        ns = f" -n {self.namespace}" if self.namespace else ""
        return f"helm upgrade {self.release} {repo}{ns} --reuse-values --set-json '{self.values_key}=[{json.dumps(toleration, separators=(',', ':'))}]'"


_NFD_POD = re.compile(r"^(?P<release>.+?)-node-feature-discovery-worker-")


def _nfd_chart(worker: Pod) -> _NfdChart:
    """Which chart deployed NFD, from its pod's name (<release>-node-feature-discovery-worker-...): the device
    plugin chart keeps NFD's values under `nfd`, the GPU Operator under `node-feature-discovery`."""
    m = _NFD_POD.match(worker.name or "")
    release = m.group("release") if m else None
    if release and "device-plugin" in release:
        return _NfdChart("nvidia-device-plugin", "nfd.worker.tolerations", release, worker.namespace)
    return _NfdChart("gpu-operator", "node-feature-discovery.worker.tolerations",
                     release if release and release.startswith("gpu-operator") else None, worker.namespace)


def _tol(t: dict) -> str:
    return f"{t.get('key', '*')}{'=' + str(t['value']) if t.get('value') else ''}:{t.get('effect') or '*'} ({t.get('operator', 'Equal')})"


# ------------------------------------------------------------------------------------------------ FD103


@check("FD103", "gpu-labels-stale")
def gpu_labels_stale(cluster: Cluster, inventory: GpuInventory) -> Iterable[Hit]:
    """GPU Feature Discovery's labels describe another driver (or GPU count) than the node runs now.

    What it does: On nodes with both nvidia-smi output and GFD labels, compares the driver version labels
    (nvidia.com/cuda.driver-version.full, or the older cuda.driver.major/minor/rev) with the driver
    nvidia-smi reports, and nvidia.com/gpu.count with the GPUs nvidia-smi lists.
    Why it matters: GFD refreshes labels only while it runs; after a driver upgrade or a lost GPU a stopped
    or crash-looping GFD leaves the old values, and schedulers, node selectors and CUDA-compatibility
    checks that read them make decisions on a driver that is gone.
    How to fix: restart GFD on the node (and fix why it stopped); labels are rewritten on its next run.
    References: https://github.com/NVIDIA/gpu-operator/issues/391; https://github.com/NVIDIA/k8s-device-plugin/pull/620; https://github.com/NVIDIA/gpu-feature-discovery/issues/71
    """
    gfd_on: dict | None = None
    for ng in inventory.nodes:
        node = cluster.nodes.get(ng.node or "")
        if node is None or not node.labels:
            continue
        smi = next((r for r in ng.reports if r.driver_version), None)
        mismatches: list[tuple[str, Evidence | None]] = []
        evidence: list[Evidence | None] = []
        for keys in _DRIVER_LABELS:
            if all(k in node.labels for k in keys):
                label = ".".join(str(node.labels[k]) for k in keys)
                if smi is not None and not _same_version(label, smi.driver_version):
                    mismatches.append((f"driver label {label} (running {smi.driver_version})", _ev(node, f"label:{keys[0]}")))
                    evidence.append(smi.evidence)
                break
        count = to_int(node.labels.get(COUNT_LABEL))
        visible = ng.visible
        if count is not None and visible is not None and visible.value is not None and count != visible.value:
            mismatches.append((f"{COUNT_LABEL}={count} ({visible.value} seen by {visible.source})", _ev(node, f"label:{COUNT_LABEL}")))
            evidence.append(visible.evidence)
        if not mismatches:
            continue
        if gfd_on is None:  # GFD's pods by node, found once (a scan of every pod per stale node was quadratic)
            gfd_on = {}
            for p in _pods_of(cluster, "gpu-feature-discovery"):
                gfd_on.setdefault(p.node if isinstance(p.node, str) else None, []).append(p)
        gfd = gfd_on.get(ng.node, []) if isinstance(ng.node, str) else [
            p for p in _pods_of(cluster, "gpu-feature-discovery") if p.node == ng.node]
        state = f"; GFD pod {gfd[0].name} is {gfd[0].status}" if gfd and gfd[0].status else ("; no GFD pod on the node in the artifacts" if cluster.pods else "")
        yield Hit(
            title=f"GFD labels on {ng.node} are stale: " + "; ".join(m for m, _ in mismatches),
            explanation=(f"Node {ng.node}'s labels say " + " and ".join(m for m, _ in mismatches) + state
                         + ". GFD rewrites them only while it runs; until then anything that selects nodes by these labels sees the old state."),
            severity=Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in [*(e for _, e in mismatches), *evidence] if e)),
            fixes=(Fix(FixKind.IMMEDIATE, "Restart GPU Feature Discovery on the node so it relabels it.",
                       (f"kubectl delete pod -A -l app=gpu-feature-discovery --field-selector spec.nodeName={ng.node}",)),),
            node=ng.node,
            component="gpu-feature-discovery",
            confidence=0.75,
            facts={"mismatches": [m for m, _ in mismatches]},
        )


def _same_version(label: str, running: str) -> bool:
    """GFD writes 550.54.15 as 550.54.15 or major/minor/rev 550/54/15; a missing rev matches any."""
    a, b = label.split("."), running.split(".")
    return all(x.lstrip("0") == y.lstrip("0") for x, y in zip(a, b))


@check("FD080", "stated-labels-symptom")
def stated_labels_symptom(prose: Prose | None = None) -> Iterable[Hit]:
    """A ticket describes GPU nodes without nvidia.com labels.

    What it does: Reads the sentences of the artifacts that no parser claims (and the prose of Markdown issue
    bodies) against knowledge/phrases.toml [[symptom]] rows of this layer: "no GPU labels on the node", nvidia.com/gpu.present missing. Each match is a finding
    that cites the sentence, says what it implies, and lists the commands whose output would confirm it.
    Its confidence is low (0.35): a person's words, not a program's output, so any machine-read cause on the
    same scope explains it first.
    Why it matters: A ticket often holds only sentences; the GPU Operator schedules its operands by NFD/GFD labels; an unlabelled GPU node gets none of them.
    How to fix: Read `kubectl get node --show-labels` and the GFD/NFD logs with gpusleuth.
    References: knowledge/phrases.toml (each symptom row lists the public tickets it was learned from)
    """
    yield from stated_hits(prose, Layer.FEATURE_DISCOVERY)


# ------------------------------------------------------------------------------------------------ FD160


@check("FD160", "nfd-worker-config-key-not-read")
def nfd_worker_config_key_not_read(configs: NfdWorkerConfigs, cluster: Cluster | None = None) -> Iterable[Hit]:
    """An NFD worker config (nfd-worker.conf) has keys nfd-worker does not read, values of the wrong type, or settings its version no longer has.

    What it does: checks each NFD worker config in the artifacts (a ConfigMap key `nfd-worker.conf`, the GPU or
    Network Operator's Helm value `node-feature-discovery.worker.config`, OpenShift's NodeFeatureDiscovery
    `spec.workerConfig.configData`) against NFD's own config types
    (knowledge/schemas/nfd-worker-config.json, from kubernetes-sigs/node-feature-discovery pkg/nfd-worker
    NFDConfig and each configurable source's Config: core, sources.pci, sources.usb, sources.cpu,
    sources.kernel, sources.local, sources.custom rules): unknown keys (with the key meant, and where a key
    belongs when it exists elsewhere: `deviceClassWhitelist` directly under `sources` belongs under
    sources.pci), wrong types, sources no source has, and settings the NFD version in use (its image tag) does
    not have yet or no longer has. Key case is not judged: nfd-worker matches names without regard to case.
    Why it matters: nfd-worker reads the file with sigs.k8s.io/yaml and drops what its types do not have
    without a word, so a PCI whitelist one level too high leaves the default in force: GPU nodes keep or lose
    the `feature.node.kubernetes.io/pci-10de.present` label the GPU Operator selects its operands by, and
    the operands land on the wrong nodes or on none.
    How to fix: write the key where nfd-worker reads it (the corrected snippet is given), through the chart's
    `worker.config` (`node-feature-discovery.worker.config` in the GPU Operator's values), and check the
    worker's log for the configuration it loaded.
    References: https://kubernetes-sigs.github.io/node-feature-discovery/stable/reference/worker-configuration-reference.html; https://github.com/kubernetes-sigs/node-feature-discovery/blob/master/pkg/nfd-worker/nfd-worker.go
    """
    import yaml

    from gpusleuth.facts.validation import dotted, fix_snippet, image_version, summary, validate
    from gpusleuth.knowledge.config_schemas import load as load_schema, vkey

    cs = load_schema("nfd-worker-config")
    images = [i for p in (cluster.pods if cluster else ()) for i in p.images]
    version = image_version(images, "node-feature-discovery")
    v, s = vkey(version), vkey(cs.version)
    if v and s and v[:2] > s[:2]:
        return  # a newer NFD may have settings the stored schema does not
    for cfg in configs.configs:
        problems = [p for p in validate(cfg.body, cs, version=version) if p.kind not in ("deprecated", "wrong-case")]
        if not problems:
            continue
        matters = [p for p in problems if p.kind != "removed" or version]
        snippet = fix_snippet(problems)
        if snippet and cfg.prefix:  # a Helm values mapping: the corrected keys where the values hold the config
            tree = yaml.safe_load(snippet)
            for part in reversed(cfg.prefix.split(".")):
                tree = {part: tree}
            snippet = yaml.safe_dump(tree, sort_keys=False, default_flow_style=False)
        yield Hit(
            title=f"{cfg.origin}: {problems[0].message}",
            explanation=(f"Checked against NFD's worker config types ({cs.cite}" + (f"; the NFD in use is {version}" if version else "")
                         + f"): {summary(problems)} nfd-worker drops settings its config types do not have without a warning, "
                         "so the defaults stay in force for these."),
            severity=Severity.WARNING if matters else Severity.INFO,
            role=Role.ROOT_CAUSE if matters else Role.SYMPTOM,
            evidence=tuple(dict.fromkeys(cfg.evidence(p.path) for p in problems[:6])),
            fixes=(Fix(FixKind.PERMANENT, "Write the setting where nfd-worker reads it (the chart's worker.config), let the ConfigMap roll out and "
                       "check the configuration the worker logs at start.",
                       ("kubectl logs -l app.kubernetes.io/name=node-feature-discovery,role=worker --tail=200 -A | grep -i config",),
                       snippet=snippet, snippet_language="yaml" if snippet else None),),
            component="nfd-worker",
            confidence=0.7 if matters else 0.4,
            facts={"config": cfg.origin, "version": version, "schema": cs.version,
                   "problems": [{"kind": p.kind, "path": p.dotted, "closest": p.closest,
                                 "belongs": dotted(p.belongs) if p.belongs else None} for p in problems]},
        )
