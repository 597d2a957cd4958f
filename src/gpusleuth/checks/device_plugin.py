"""Device-plugin layer: what the kubelet is told about the GPUs (nvidia.com/gpu in the node's capacity)."""

from __future__ import annotations

from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.facts import Cluster, GpuInventory, Logs
from gpusleuth.facts.cluster import GPU_RESOURCE
from gpusleuth.facts.gpus import COUNT_LABEL, PCI_PRESENT_LABEL, GpuCount, NodeGpus
from gpusleuth.facts.operands import OperandGraph
from gpusleuth.facts.runtime import RuntimeSetup
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Component, ComponentState, Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.k8s import Node
from gpusleuth.model.logs import LogLine

PLUGIN = "nvidia-device-plugin-daemonset"
# knowledge/signatures.toml rows this check reads
SIG_REGISTERED = "device-plugin.registered"
SIG_STARTING = "device-plugin.start"
SIG_FAILED = ("device-plugin.nvml-init-failed", "device-plugin.nvml-library-missing", "device-plugin.nvml-not-detected",
              "device-plugin.register-failed", "device-plugin.incompatible-strategy")


def _as_int(value) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


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
    values = [(kind, _as_int(vals.get(GPU_RESOURCE))) for kind, vals in (("allocatable", node.allocatable), ("capacity", node.capacity))
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
    return any(k.startswith("nvidia.com/mig-") and (_as_int(v) or 0) > 0 for k, v in {**node.capacity, **node.allocatable}.items())


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
        text = f"its log shows the plugin failing after its last start: \"{fails_after[-1].line.message.strip()[:160]}\""
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
    healthy GPUs (seed 004: the plugin had crash-looped after a driver-container restart and never
    re-registered).
    How to fix: restart the device plugin pod on that node and check that allocatable shows the GPUs again;
    then find why it did not re-register (a crash while the driver was reloading, a kubelet restart it did not
    follow) so that it does not happen on the next driver upgrade.
    References: seed 004; https://github.com/NVIDIA/k8s-device-plugin/issues/444
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
