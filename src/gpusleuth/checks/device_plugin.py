"""Device-plugin layer: what the kubelet is told about the GPUs (nvidia.com/gpu in the node's capacity)."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.classes import clip
from gpusleuth.facts import Cluster, GpuInventory, Logs
from gpusleuth.facts.cluster import GPU_RESOURCE
from gpusleuth.facts.gpus import COUNT_LABEL, PCI_PRESENT_LABEL, GpuCount, NodeGpus
from gpusleuth.facts.operands import OperandGraph
from gpusleuth.facts.plugin_config import PluginWiring
from gpusleuth.facts.runtime import RuntimeSetup
from gpusleuth.facts.sharing import SharingConfigs
from gpusleuth.facts.validation import dotted, fix_snippet, image_version, summary, validate
from gpusleuth.knowledge.config_schemas import load as load_schema, vkey
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
from gpusleuth.model.k8s import Node
from gpusleuth.model.logs import LogLine
from gpusleuth.parsers.k8s_common import to_int
from gpusleuth.checks.stated_common import stated_hits
from gpusleuth.facts.prose import Prose
from gpusleuth.model.layers import Layer

PLUGIN = "nvidia-device-plugin-daemonset"
# knowledge/signatures.toml rows this check reads
SIG_REGISTERED = "device-plugin.registered"
SIG_STARTING = "device-plugin.start"
SIG_FAILED = ("device-plugin.nvml-init-failed", "device-plugin.nvml-library-missing", "device-plugin.nvml-not-detected",
              "device-plugin.register-failed", "device-plugin.incompatible-strategy")


def _node_gpus(inventory: GpuInventory | None, name: str, gpu_nodes: list[str]) -> tuple[NodeGpus | None, str]:
    """The node's GPU inventory; nvidia-smi output that names no node is read as the only GPU node's, and said so."""
    if inventory is None:
        return None, ""
    ng = inventory.for_node(name)
    orphan = inventory.for_node(None)
    if (ng is None or ng.visible is None) and orphan is not None and orphan.visible is not None and gpu_nodes == [name]:
        merged = NodeGpus(name, gpus=orphan.gpus, counts=[*orphan.counts, *(ng.counts if ng else [])])
        return merged, f" ({orphan.visible.source} names no node; {name} is the only node labelled with GPUs)"
    return ng, ""


def _presence(ng: NodeGpus | None) -> list[GpuCount]:
    """Claims that GPUs exist on the node: nvidia-smi / NVML, GFD's gpu.count, NFD's pci-10de label."""
    if ng is None:
        return []
    claims: list[GpuCount] = []
    if ng.visible is not None and (ng.visible.value or 0) > 0:
        claims.append(ng.visible)
    claims += [c for c in ng.counts if c.source == f"label {COUNT_LABEL}" and (c.value or 0) > 0]
    claims += [c for c in ng.counts if c.source == f"label {PCI_PRESENT_LABEL}"]
    return claims


def _ev(node: Node, key: str) -> Evidence:
    return node.evidence.get(key) or Evidence(node.artifact or "", None, f"node {node.name} {key}")


def _advertised(node: Node) -> tuple[int | None, list[Evidence]]:
    """nvidia.com/gpu the node advertises (allocatable first), and the lines that show it, or its absence."""
    values = [(kind, to_int(vals.get(GPU_RESOURCE))) for kind, vals in (("allocatable", node.allocatable), ("capacity", node.capacity))
              if GPU_RESOURCE in vals]
    if values:
        evs = [_ev(node, f"{kind}:{GPU_RESOURCE}") for kind, _ in values]
        return values[0][1], evs
    shown = [kind for kind, vals in (("allocatable", node.allocatable), ("capacity", node.capacity)) if vals]
    evs = [_absent(node, kind) for kind in shown]
    return (None, evs) if shown else (-1, [])  # -1: the node's resources are not in the artifacts


def _absent(node: Node, kind: str) -> Evidence:
    """Cite the resource block that lacks nvidia.com/gpu: its first line, listing what it does hold."""
    lines = [e for k, e in node.evidence.items() if k.startswith(f"{kind}:") and e.line]
    keys = ", ".join(getattr(node, kind))
    text = f"{kind.capitalize()}: {keys} (no {GPU_RESOURCE})"
    first = min(lines, key=lambda e: e.line) if lines else None
    return Evidence(first.artifact if first else node.artifact or "", first.line if first else None, text)


def _mig_advertised(node: Node) -> bool:
    return any(k.startswith("nvidia.com/mig-") and (to_int(v) or 0) > 0 for k, v in {**node.capacity, **node.allocatable}.items())


def _plugin(graph: OperandGraph | None, node: str) -> Component | None:
    if graph is None:
        return None
    same = [c for c in graph.components if c.name == PLUGIN]
    return next((c for c in same if c.node == node), None) or (same[0] if len(same) == 1 and same[0].node is None else None)


def _plugin_log_story(logs: Logs | None, pod: str | None) -> tuple[list[LogLine], str]:
    """What the device plugin's own log says about registering with the kubelet since its last start."""
    if logs is None:
        return [], ""
    def mine(ms):
        return [m for m in ms if pod is None or (m.line.pod or m.log.pod) in (pod, None)]
    starts = mine(logs.matches(SIG_STARTING))
    regs = mine(logs.matches(SIG_REGISTERED))
    fails = sorted({(m.line.artifact, m.line.line): m for i in SIG_FAILED for m in mine(logs.matches(i))}.values(),
                   key=lambda m: (m.line.artifact, m.line.line))
    if not (starts or regs or fails):
        return [], ""
    # the running instance's start when its log is there, else the crashed instance's
    last_start = ([m for m in starts if not m.log.previous] or starts or [None])[-1]

    def after(m) -> bool:
        return last_start is None or (m.log is last_start.log and m.line.line > last_start.line.line)

    fails_after = [m for m in fails if after(m)]
    regs_after = [m for m in regs if after(m)]
    lines: list[LogLine] = []
    if last_start is not None:
        lines.append(last_start.line)
    if fails_after:
        lines += [m.line for m in fails_after[-2:]]
        text = f"its log shows the plugin failing after its last start: \"{clip(fails_after[-1].line.message, 160)}\""
    elif regs_after:
        lines.append(regs_after[-1].line)
        text = "its log shows it registered after its last start, so the kubelet has lost the registration since (a kubelet restart?)"
    elif regs:
        lines.append(regs[-1].line)
        text = "its log has no 'Registered device plugin' after its last start (the earlier registration is gone with the old instance)"
    else:
        text = "its log has no 'Registered device plugin' line at all"
    return lines, text


@check("DP001", "device-plugin-not-advertising-gpus")
def device_plugin_not_advertising(cluster: Cluster, inventory: GpuInventory | None = None, graph: OperandGraph | None = None,
                                  logs: Logs | None = None, setup: RuntimeSetup | None = None) -> Iterable[Hit]:
    """GPUs are present on a node, but the node advertises no nvidia.com/gpu: the device plugin is not registered.

    What it does: For every node whose GPUs are visible (nvidia-smi / NVML on the node, GFD's
    nvidia.com/gpu.count label, NFD's feature.node.kubernetes.io/pci-10de.present label) while its
    Capacity / Allocatable show nvidia.com/gpu: 0 or no nvidia.com/gpu at all, cites both sides and what the
    device plugin shows: its pod state (crash-looping, blocked, running) and its log (NVML initialisation
    failures, no `Registered device plugin ... with Kubelet` after its last start) and, when a listing of
    /var/lib/kubelet/device-plugins/ was given, whether the plugin's socket (nvidia-gpu.sock) is there.
    Why it matters: the scheduler only sees what the device plugin registers with the kubelet; with
    nvidia.com/gpu: 0 every GPU pod stays Pending on `Insufficient nvidia.com/gpu` although nvidia-smi shows
    healthy GPUs (typically the plugin crash-looped after a driver-container restart and never
    re-registered).
    How to fix: restart the device plugin pod on that node and check that allocatable shows the GPUs again;
    then find why it did not re-register (a crash while the driver was reloading, a kubelet restart it did not
    follow) so that it does not happen on the next driver upgrade.
    References: https://github.com/NVIDIA/k8s-device-plugin/issues/444; https://kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/device-plugins/
    """
    labelled = [n for n in sorted(cluster.nodes) if _presence(inventory.for_node(n) if inventory else None)]
    for name, node in sorted(cluster.nodes.items()):
        ng, attributed = _node_gpus(inventory, name, labelled)
        claims = _presence(ng)
        if not claims or _mig_advertised(node):
            continue
        advertised, adv_ev = _advertised(node)
        if advertised == -1 or (advertised or 0) > 0:
            continue
        gpu_lines = [g.ev("name") for g in (ng.gpus[:1] + ng.gpus[-1:] if len(ng.gpus) > 1 else ng.gpus)]
        socket = _socket_listing(setup, name, len(cluster.nodes))
        yield _not_advertising(name, claims, attributed, advertised, adv_ev, gpu_lines, _plugin(graph, name), graph, logs, socket)


PLUGIN_DIR = "/var/lib/kubelet/device-plugins"


def _socket_listing(setup: RuntimeSetup | None, node: str, nodes: int) -> tuple[Evidence, str] | None:
    """The kubelet's device-plugin directory as listed on this node: no nvidia*.sock means no registration."""
    if setup is None or (setup.node not in (None, node)) or (setup.node is None and nodes > 1):
        return None
    listed = setup.host_paths.get(PLUGIN_DIR)
    if listed is None or listed.entries is None or listed.evidence is None:
        return None
    socks = [n for n in listed.entries if n.startswith("nvidia") and n.endswith(".sock")]
    if socks:
        return listed.evidence, f"{PLUGIN_DIR}/ holds {', '.join(socks)}, so a plugin socket exists"
    return listed.evidence, f"{PLUGIN_DIR}/ has no nvidia-*.sock (only {', '.join(listed.entries) or 'nothing'}): no plugin is serving the kubelet"


_STATE = {ComponentState.FAILED: "failing", ComponentState.BLOCKED: "blocked", ComponentState.DEGRADED: "running with errors",
          ComponentState.OK: "running", ComponentState.UNKNOWN: "in an unknown state"}


def _not_advertising(name, claims, attributed, advertised, adv_ev, gpu_lines, plugin: Component | None, graph, logs, socket) -> Hit:
    smi = next((c for c in claims if c.source.startswith("nvidia-smi") or c.source == "nvml"), None)
    present = smi or claims[0]
    seen = f"{present.source} shows {present.value} GPU(s)" if present.value else f"{present.source} says NVIDIA GPUs are present"
    if present is smi:
        seen += attributed
    adv = f"{GPU_RESOURCE}: {advertised}" if advertised is not None else f"no {GPU_RESOURCE} at all"
    evidence = [*adv_ev, *(c.evidence for c in claims), *gpu_lines]
    pod = plugin.pod if plugin else None
    lines, story = _plugin_log_story(logs, pod)
    evidence += [ln.evidence() for ln in lines]
    role, confidence, caused_by = Role.ROOT_CAUSE, 0.75, ()
    if plugin is None:
        state = "No device plugin pod for this node is in the artifacts."
    else:
        evidence += list(plugin.evidence[:1])
        state = f"The device plugin pod {plugin.pod} is {_STATE[plugin.state]} ({plugin.status or 'status not shown'})"
        if plugin.state == ComponentState.BLOCKED:
            root = graph.root_of(plugin) if graph is not None else None
            state += f", waiting on {plugin.waiting_on} from {plugin.blocked_by}" + (f" (root: {root.name})" if root else "")
            role, confidence = Role.SYMPTOM, 0.8
            caused_by = ("OP001",) if root is not None and graph.crashlooping(root) else ()
        elif plugin.state == ComponentState.FAILED:
            confidence = 0.85
        state += "."
    if story:
        state += f" {story[0].upper()}{story[1:]}."
    if socket:
        evidence.append(socket[0])
        state += f" {socket[1]}."
        confidence = max(confidence, 0.85) if role == Role.ROOT_CAUSE else confidence
    ns = f" -n {plugin.namespace}" if plugin and plugin.namespace else ""
    verify = f"kubectl get node {name} -o jsonpath='{{.status.allocatable.nvidia\\.com/gpu}}'"
    if pod:
        commands = (f"kubectl delete pod {pod}{ns}", verify, f"kubectl logs {pod}{ns} --tail=50")
        which = ""
    else:
        commands = (f"kubectl get pods -A -o wide --field-selector spec.nodeName={name} | grep -i device-plugin", verify)
        which = " (the device plugin pod's name is not in the artifacts; the first command finds it, then delete it)"
    return Hit(
        title=f"GPUs are present but the node advertises {adv}: the device plugin is not registered",
        explanation=(
            f"On {name}, {seen} while the node's Capacity/Allocatable show {adv}, so the scheduler sees no GPU there. "
            f"The device plugin is what registers {GPU_RESOURCE} with the kubelet. {state}"
        ),
        severity=Severity.CRITICAL,
        role=role,
        evidence=tuple(dict.fromkeys(e for e in evidence if e)),
        fixes=(
            Fix(
                FixKind.IMMEDIATE,
                "Restart the device plugin on this node and check that allocatable shows the GPUs again and that its log says "
                f"\"Registered device plugin for '{GPU_RESOURCE}' with Kubelet\"{which}.",
                commands,
            ),
            Fix(
                FixKind.PERMANENT,
                "Find why it did not re-register: a plugin that crash-looped while the driver container was restarting must be "
                "restarted after the driver is ready again (with the GPU Operator the driver-ready / toolkit-ready markers gate "
                "it; a separately deployed plugin has no such gate), and a plugin must re-register after every kubelet restart "
                "(recent k8s-device-plugin releases watch the kubelet socket). Read its --previous log for the crash.",
                (f"kubectl logs --previous {pod}{ns}",) if pod else (),
            ),
        ),
        node=name,
        component=PLUGIN,
        confidence=confidence,
        caused_by=caused_by,
        facts={"gpus_seen": present.value, "seen_by": present.source, "advertised": advertised, "plugin_pod": pod,
               "plugin_state": plugin.state.value if plugin else None},
    )


MIG_PREFIX = "nvidia.com/mig-"
STRATEGY_LABEL = "nvidia.com/mig.strategy"
REPLICAS_LABEL = "nvidia.com/gpu.replicas"


def _node_ev(node: Node, key: str) -> Evidence:
    return node.evidence.get(key) or Evidence(node.artifact or "", None, f"node {node.name} {key}")


# ------------------------------------------------------------------------------------------------ DP101


@check("DP101", "allocatable-fewer-than-gpus")
def allocatable_fewer_than_gpus(cluster: Cluster, inventory: GpuInventory | None = None, logs: Logs | None = None) -> Iterable[Hit]:
    """A node offers fewer nvidia.com/gpu than it has GPUs (allocatable below capacity or below what nvidia-smi sees).

    What it does: For every node advertising at least one nvidia.com/gpu, compares allocatable with capacity
    (the gap is devices the plugin reported unhealthy), and with the GPUs nvidia-smi/NVML show on the node
    when neither MIG nor time-slicing changes the count; cites the device plugin's `device marked
    unhealthy` / `XidCriticalError` lines for the missing GPUs. (A node with none at all is DP001's.)
    Why it matters: pods that fit on paper do not fit in practice; a GPU once marked unhealthy stays out of
    allocation until the plugin restarts, even after a transient Xid, so capacity silently shrinks.
    How to fix: find the Xid or the lost GPU behind it (kernel log, nvidia-smi); repair or reset the GPU,
    then restart the device plugin pod so it re-offers the GPU.
    References: https://github.com/NVIDIA/k8s-device-plugin/issues/75; https://github.com/NVIDIA/k8s-device-plugin/issues/234; https://github.com/kubernetes/kubernetes/issues/92592
    """
    unhealthy = defaultdict(list)
    if logs is not None:
        for m in logs.matches("device-plugin.device-unhealthy"):
            unhealthy[m.log.node or _pod_node(cluster, m.line.pod or m.log.pod)].append(m.line.evidence())
    nameless = [f for f in cluster.fragments if isinstance(f, Node) and f.allocatable]  # a pasted describe cut above its name
    for name, node in [*sorted(cluster.nodes.items()), *((None, f) for f in nameless)]:
        alloc, cap = to_int(node.allocatable.get(GPU_RESOURCE)), to_int(node.capacity.get(GPU_RESOURCE))
        if not alloc:
            continue
        ng = inventory.for_node(name) if inventory else None
        visible = ng.visible if ng is not None else None
        shared = to_int(node.labels.get(REPLICAS_LABEL)) not in (None, 1) or any(k.startswith(MIG_PREFIX) for k in node.allocatable)
        mig = ng is not None and any(g.mig_current for g in ng.gpus)
        evidence = [_node_ev(node, f"allocatable:{GPU_RESOURCE}")]
        if cap is not None and alloc < cap:
            missing, against = cap - alloc, f"capacity {cap}"
            evidence.append(_node_ev(node, f"capacity:{GPU_RESOURCE}"))
        elif visible is not None and visible.value and alloc < visible.value and not shared and not mig:
            missing, against = visible.value - alloc, f"{visible.value} GPUs seen by {visible.source}"
            evidence.append(visible.evidence)
        else:
            continue
        lines = unhealthy.get(name) or unhealthy.get(None) or []
        evidence += lines[-3:]
        who = name or "A node (its name is not in the paste)"
        on_node = (f"kubectl debug node/{name} -it --image=busybox -- chroot /host sh -c 'nvidia-smi -L; dmesg -T | grep -i xid | tail'"
                   if name else "nvidia-smi -L; dmesg -T | grep -i xid | tail   # on the node")
        restart = (f"kubectl delete pod -A -l app=nvidia-device-plugin-daemonset --field-selector spec.nodeName={name}",) if name else ()
        yield Hit(
            title=f"{who} offers {alloc} nvidia.com/gpu against {against}: {missing} GPU(s) out of allocation",
            explanation=(f"{'Node ' + name if name else who} advertises allocatable {GPU_RESOURCE}: {alloc}, below its {against}."
                         + (" The device plugin marked GPUs unhealthy (cited), which removes them from allocatable until it restarts."
                            if lines else " The device plugin does not offer the missing GPU(s): marked unhealthy after an Xid, lost from the "
                                          "driver, or excluded by its config; its log says which.")),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(
                Fix(FixKind.IMMEDIATE, "Find the Xid or lost GPU behind it on the node.", (on_node,)),
                Fix(FixKind.WORKAROUND, "Once the GPU is healthy again, restart the device plugin on the node so it re-offers it"
                    + ("." if name else " (delete its device-plugin pod; the paste does not name the node)."), restart),
            ),
            node=name,
            component="nvidia-device-plugin-daemonset",
            confidence=0.8 if lines else 0.65,
            facts={"allocatable": alloc, "capacity": cap, "visible": visible.value if visible else None, "missing": missing},
        )


def _pod_node(cluster: Cluster, pod: str | None) -> str | None:
    p = cluster.pod(pod) if pod else None
    return p.node if p is not None else None


# ------------------------------------------------------------------------------------------------ DP104


@check("DP104", "mig-strategy-resource-mismatch")
def mig_strategy_resource_mismatch(cluster: Cluster, wiring: PluginWiring | None = None) -> Iterable[Hit]:
    """Pods ask for a GPU resource name the MIG strategy does not offer (nvidia.com/gpu on `mixed`, mig-* on `single`).

    What it does: For each Pending pod that requests nvidia.com/gpu or nvidia.com/mig-<profile>, looks at the
    GPU nodes: with the `mixed` strategy MIG GPUs are offered only as nvidia.com/mig-<profile>
    (nvidia.com/gpu counts only non-MIG GPUs); with `single` every MIG device is offered as nvidia.com/gpu
    and no mig-<profile> resource exists. Fires when the name the pod asks for has no free count on any
    node while the other naming does, citing the node's allocatable lines, its nvidia.com/mig.strategy
    label and the pod's FailedScheduling event.
    Why it matters: the scheduler only says `Insufficient nvidia.com/gpu`; the GPUs are there under another
    name, so adding nodes or restarting plugins does not help.
    How to fix: request the resource name the strategy offers (nvidia.com/mig-1g.10gb on mixed,
    nvidia.com/gpu on single), or change the strategy (mig.strategy in the operator's values) to match the
    workloads; migStrategy in the nvidia-device-plugin chart's values).
    References: https://github.com/NVIDIA/gpu-operator/issues/637; https://github.com/NVIDIA/gpu-operator/issues/518; https://github.com/NVIDIA/gpu-operator/issues/1602; https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html
    """
    # migStrategy the standalone chart's values set (the label says it only once GFD runs)
    set_in_values = [r for r in (wiring.releases if wiring else ()) if isinstance(r.get("migStrategy"), str)]
    gpu_nodes = [n for n in cluster.nodes.values() if any(k == GPU_RESOURCE or k.startswith(MIG_PREFIX) for k in (*n.allocatable, *n.capacity))
                 or STRATEGY_LABEL in n.labels]
    if not gpu_nodes:
        return
    offered: dict[str, list[tuple[Node, int]]] = defaultdict(list)
    for n in gpu_nodes:
        for k, v in n.allocatable.items():
            if (k == GPU_RESOURCE or k.startswith(MIG_PREFIX)) and (to_int(v) or 0) > 0:
                offered[k].append((n, to_int(v)))
    for pod in cluster.pods:
        if (pod.status or pod.phase) != "Pending":
            continue
        asks = {k: v for k, v in pod.resource_requests.items() if k == GPU_RESOURCE or k.startswith(MIG_PREFIX)}
        if not asks and pod.gpu_request:
            asks = {GPU_RESOURCE: pod.gpu_request}
        for res in asks:
            if offered.get(res):
                continue
            if res == GPU_RESOURCE:
                others = sorted(k for k in offered if k.startswith(MIG_PREFIX))
                if not others:
                    continue
                strategy = "mixed"
                said = f"the GPU nodes offer only MIG resources ({', '.join(others)}): the `mixed` strategy names MIG devices by profile"
                ask_instead = others[0]
            else:
                if not offered.get(GPU_RESOURCE) or any(k.startswith(MIG_PREFIX) for k in offered):
                    continue
                strategy = "single"
                said = (f"no node offers {res}, while nvidia.com/gpu is offered: with the `single` strategy every MIG device is "
                        "advertised as nvidia.com/gpu")
                ask_instead = GPU_RESOURCE
            nodes = [n for n, _ in offered.get(ask_instead, [])] or gpu_nodes
            labels = [n.evidence.get(f"label:{STRATEGY_LABEL}") for n in nodes if STRATEGY_LABEL in n.labels]
            shown = {n.labels[STRATEGY_LABEL] for n in nodes if STRATEGY_LABEL in n.labels}
            if shown and strategy not in shown:
                continue
            if set_in_values and strategy not in {r.get("migStrategy") for r in set_in_values}:
                continue
            events = [e for e in cluster.events_for(pod.name) if e.reason == "FailedScheduling"]
            evidence = [pod.evidence, *(e.evidence for e in events[-1:]), *(_node_ev(n, f"allocatable:{ask_instead}") for n in nodes[:2]), *labels[:2],
                        *(r.cite("migStrategy") for r in set_in_values[:1])]
            ns = f" -n {pod.namespace}" if pod.namespace else ""
            yield Hit(
                title=f"{pod.name} asks for {res}, which the `{strategy}` MIG strategy does not offer (use {ask_instead})",
                explanation=f"Pod {pod.name} requests {res} and stays Pending: {said}.",
                severity=Severity.ERROR,
                role=Role.ROOT_CAUSE,
                evidence=tuple(dict.fromkeys(e for e in evidence if e)),
                fixes=(
                    Fix(FixKind.IMMEDIATE, f"Request {ask_instead} instead of {res} in the pod's resources.",
                        (f"kubectl get pod {pod.name}{ns} -o yaml",),
                        snippet=f"resources:\n  limits:\n    {ask_instead}: 1\n", snippet_language="yaml"),
                    Fix(FixKind.PERMANENT, f"Or change the MIG strategy ({'nvidia-device-plugin chart values migStrategy' if set_in_values else 'operator values mig.strategy'}: "
                        f"{'single' if strategy == 'mixed' else 'mixed'}) "
                        "to the naming your workloads use, and keep the two consistent across the cluster."),
                ),
                node=nodes[0].name if len(nodes) == 1 else None,
                component=pod.name,
                confidence=0.8,
                facts={"pod": pod.name, "requested": res, "strategy": strategy, "offered": sorted(offered)},
            )


@check("DP080", "stated-plugin-symptom")
def stated_plugin_symptom(prose: Prose | None = None) -> Iterable[Hit]:
    """A ticket describes the node advertising no GPUs (nvidia.com/gpu: 0) or the device plugin failing.

    What it does: Reads the sentences of the artifacts that no parser claims (and the prose of Markdown issue
    bodies) against knowledge/phrases.toml [[symptom]] rows of this layer: "nvidia.com/gpu shows 0", "the node gets no GPUs", or the device plugin crash-looping. Each match is a finding
    that cites the sentence, says what it implies, and lists the commands whose output would confirm it.
    Its confidence is low (0.35): a person's words, not a program's output, so any machine-read cause on the
    same scope explains it first.
    Why it matters: A ticket often holds only sentences; the kubelet only offers GPUs the device plugin registered; zero means the plugin is not running there, cannot reach NVML, or registered with another kubelet.
    How to fix: Read `kubectl describe node` and the device plugin's log with gpusleuth.
    References: knowledge/phrases.toml (each symptom row lists the public tickets it was learned from)
    """
    yield from stated_hits(prose, Layer.DEVICE_PLUGIN)


# ------------------------------------------------------------------------------------------------ DP160, DP161


def _in_use(cluster: Cluster | None, wiring: PluginWiring | None, image: str, chart: str) -> str | None:
    """The device plugin version the cluster runs: a pod's image tag, else the standalone chart's version,
    else ClusterPolicy devicePlugin.version."""
    images = [i for p in (cluster.pods if cluster else ()) for i in p.images]
    found = image_version(images, image)
    if found:
        return found
    for rel in (wiring.releases if wiring else ()):
        if rel.chart == chart and rel.chart_version:
            return rel.chart_version
    cfg = wiring.configuration if wiring else None
    s = cfg.setting("devicePlugin.version") if cfg else None
    return str(s.value) if s and s.value and vkey(str(s.value)) else None


def _dp150_reports(p) -> bool:
    """DP150 already judges the top level's keys and the sharing block's keys and values (not versions)."""
    if p.kind in ("not-yet", "removed", "deprecated"):
        return False
    return (len(p.path) == 1 and p.path[0] not in ("flags", "resources", "imex")) or p.path[:1] == ("sharing",)


@check("DP160", "device-plugin-config-key-not-read")
def plugin_config_against_schema(sharing: SharingConfigs, cluster: Cluster | None = None, wiring: PluginWiring | None = None) -> Iterable[Hit]:
    """The device plugin / GFD config file has keys the plugin does not read, values it does not accept, or fields its version lacks.

    What it does: checks every device plugin config (a file, or YAML in a ConfigMap) against the plugin's own
    config types (knowledge/schemas/device-plugin-config.json, read from NVIDIA/k8s-device-plugin api/config/v1
    at each release): keys under `flags`, `flags.plugin`, `flags.gfd`, `resources` and `imex` that do not exist
    there (with the key meant and, when the key exists elsewhere, the place it belongs: `renameByDefault` under
    `flags` belongs under `sharing.timeSlicing`), wrong value types, values outside the allowed set (migStrategy,
    deviceListStrategy, deviceIDStrategy), and fields newer or older than the plugin version the cluster runs.
    The top level and the `sharing` block are DP150's.
    Why it matters: the plugin reads the file with sigs.k8s.io/yaml, which drops unknown keys without a word, so
    a misplaced or misspelt flag leaves the default in force; a value outside the allowed set stops the plugin.
    How to fix: write the key where the plugin reads it (the corrected snippet is given), update the ConfigMap
    and restart the plugin pods.
    References: https://github.com/NVIDIA/k8s-device-plugin/blob/main/api/config/v1/flags.go; https://github.com/NVIDIA/k8s-device-plugin/issues/1433
    """
    cs = load_schema("device-plugin-config")
    version = _in_use(cluster, wiring, "k8s-device-plugin", "nvidia-device-plugin")
    for cfg in sharing.of_kind("device-plugin"):
        problems = [p for p in validate(cfg.body, cs, version=version) if not _dp150_reports(p)]
        if not problems:
            continue
        stops = [p for p in problems if p.kind in ("wrong-type", "bad-value")]
        snippet = fix_snippet(problems)
        yield Hit(
            title=f"Device plugin config {cfg.name}: {problems[0].message}",
            explanation=(f"Checked against the plugin's config schema ({cs.cite}"
                         + (f"; the cluster runs {version}" if version else "") + f"): {summary(problems)} "
                         + ("The plugin cannot load a value of the wrong type or outside the allowed set and stops. " if stops else "")
                         + ("The plugin drops keys it does not know without a warning, so what they say is not in effect." if any(p.ignored for p in problems) else "")),
            severity=Severity.ERROR if stops else Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(cfg.evidence(p.path) for p in problems[:6])),
            fixes=(Fix(FixKind.PERMANENT, "Write the setting where the plugin reads it, update the ConfigMap and restart the device plugin.",
                       snippet=snippet, snippet_language="yaml" if snippet else None),),
            component="nvidia-device-plugin",
            confidence=0.8,
            facts={"schema": cs.version, "version": version, "problems": [{"kind": p.kind, "path": p.dotted, "belongs": dotted(p.belongs) if p.belongs else None} for p in problems]},
        )


@check("DP161", "device-plugin-helm-value-not-read")
def plugin_values_against_chart(wiring: PluginWiring, cluster: Cluster | None = None) -> Iterable[Hit]:
    """Helm values of the standalone nvidia-device-plugin chart that the chart does not have.

    What it does: checks the values of every nvidia-device-plugin release (helm get values, values files, the
    release Secret) against the chart's values.yaml at each release (knowledge/schemas/device-plugin-values.json):
    keys the chart has nowhere (with the nearest key), keys written at one level that the chart reads at another
    (`devicePlugin.migStrategy` for `migStrategy`), and keys the chart version in use does not have yet or no longer has.
    Why it matters: Helm keeps values the templates never read without a warning, so the setting does nothing and
    the chart's default applies: the plugin runs without the config or strategy the user meant.
    How to fix: move the value to the key the chart reads (`helm show values nvidia/nvidia-device-plugin --version X`)
    and `helm upgrade` the release.
    References: https://github.com/NVIDIA/k8s-device-plugin/blob/main/deployments/helm/nvidia-device-plugin/values.yaml
    """
    cs = load_schema("device-plugin-values")
    for rel in wiring.releases:
        values = rel.user_values if rel.user_values is not None else rel.values
        if not isinstance(values, dict):
            continue
        version = rel.chart_version
        problems = [p for p in validate(values, cs, version=version) if p.kind != "deprecated"]
        if not problems:
            continue
        snippet = fix_snippet(problems)
        yield Hit(
            title=f"nvidia-device-plugin Helm values{f' of {rel.name}' if rel.name else ''}: {problems[0].message}",
            explanation=(f"Checked against the chart's values ({cs.cite}" + (f"; the release uses chart {version}" if version else "")
                         + f"): {summary(problems)} Helm passes values no template reads without a warning, so these settings have no effect."),
            severity=Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(rel.cite(_helm_path(p.path)) for p in problems[:6])),
            fixes=(Fix(FixKind.PERMANENT, "Set the value where the chart reads it and upgrade the release.",
                       snippet=snippet, snippet_language="yaml" if snippet else None),),
            component="nvidia-device-plugin",
            confidence=0.75,
            facts={"schema": cs.version, "chart": version, "problems": [{"kind": p.kind, "path": p.dotted, "belongs": dotted(p.belongs) if p.belongs else None} for p in problems]},
        )


def _helm_path(path: tuple) -> str:
    return ".".join(str(p) for p in path)


# ------------------------------------------------------------------------------------------------ DP162


def _advertised_names(cfg) -> tuple[set[str], list[Evidence]]:
    """The GPU resource names a device plugin config makes the plugin advertise (time-slicing / MPS renames),
    with the lines that decide them; empty when the config shares nothing."""
    body = cfg.body
    sharing = body.get("sharing") if isinstance(body.get("sharing"), dict) else {}
    names: set[str] = set()
    why: list[Evidence] = []
    for mode in ("timeSlicing", "mps"):
        block = sharing.get(mode) if isinstance(sharing.get(mode), dict) else {}
        for i, r in enumerate(block.get("resources") or ()):
            if not isinstance(r, dict) or not r.get("name"):
                continue
            base = str(r["name"])
            # a per-resource `rename` is dropped on load (api/config/v1 disableResoureRenaming): only renameByDefault renames
            if block.get("renameByDefault") is True:
                names.add(base + ".shared")
                why.append(cfg.evidence(("sharing", mode, "renameByDefault")))
            else:
                names.add(base)
                why.append(cfg.evidence(("sharing", mode, "resources", i, "name")))
    return names, why


@check("DP162", "requested-gpu-resource-not-advertised-by-config")
def requested_resource_not_advertised(sharing: SharingConfigs, cluster: Cluster) -> Iterable[Hit]:
    """Pods request a shared GPU resource name that the device plugin's sharing config does not advertise.

    What it does: derives the resource names each device plugin sharing config makes the plugin advertise
    (a time-sliced or MPS resource keeps its name, or becomes `<name>.shared` with renameByDefault; a per-resource
    `rename` is dropped by the plugin on load) and compares them with the `nvidia.com/gpu*` names GPU pods request: a pod asking for
    `nvidia.com/gpu.shared` while every config advertises `nvidia.com/gpu` (renameByDefault not set, or set where the
    plugin does not read it), or the other way round. A name some node already advertises is not reported;
    MIG names are DP104's.
    Why it matters: the scheduler only places a pod on a node that advertises the exact name it requests; with
    the names out of step the pods stay Pending with `Insufficient nvidia.com/gpu.shared` although the GPUs are shared.
    How to fix: make the two agree: set renameByDefault under sharing.timeSlicing (or sharing.mps) to advertise
    `.shared`, or request the name the plugin advertises.
    References: https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus; https://github.com/NVIDIA/k8s-device-plugin/issues/1433
    """
    configs = [(cfg, *_advertised_names(cfg)) for cfg in sharing.of_kind("device-plugin")]
    configs = [c for c in configs if c[1]]
    if not configs:
        return
    advertised = set().union(*(names for _, names, _ in configs))
    on_nodes = {k for n in cluster.nodes.values() for k in (*n.capacity, *n.allocatable)}
    wanted: dict[str, list] = defaultdict(list)
    for p in cluster.gpu_pods():
        for name in p.resource_requests:
            if name.startswith("nvidia.com/gpu") and name not in advertised and name not in on_nodes:
                wanted[name].append(p)
    for name, pods in sorted(wanted.items()):
        cfg, names, why = configs[0]
        shown = ", ".join(sorted(advertised))
        yield Hit(
            title=f"{len(pods)} pod(s) request {name}, which the sharing config does not advertise ({shown})",
            explanation=(f"{', '.join(p.name or '?' for p in pods[:5])} request {name}; the device plugin sharing config "
                         f"{cfg.name} makes the plugin advertise {shown}"
                         + (", and no node in the artifacts advertises it" if cluster.nodes else "")
                         + ". The scheduler matches resource names exactly, so these pods stay Pending."),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(e for e in (*(p.evidence for p in pods[:3]), *why[:2]) if e),
            fixes=(Fix(FixKind.PERMANENT, "Advertise the name the pods request (renameByDefault under the sharing mode), or request the advertised name.",
                       snippet=("version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
                                if name.endswith(".shared") else f"resources:\n  limits:\n    {sorted(advertised)[0]}: 1\n"),
                       snippet_language="yaml"),),
            component="nvidia-device-plugin",
            confidence=0.75,
            facts={"requested": name, "advertised": sorted(advertised), "pods": [p.name for p in pods]},
        )
