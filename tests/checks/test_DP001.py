"""DP001 device-plugin-not-advertising-gpus: nvidia-smi sees the GPUs, the node advertises none."""

from pathlib import Path

from gpusleuth.analysis.engine import run_checks
from gpusleuth.checks import get_check
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Role
from gpusleuth.model.k8s import Node, Pod

SMI = (Path(__file__).parent.parent / "fixtures" / "nvidia_smi" / "h100_r535_table.txt").read_text()
NODE = "gpu-node-3"
PLUGIN = "nvidia-device-plugin-daemonset-7kq2x"
PLUGIN_LOG = """\
I1121 09:12:01.100000       1 main.go:235] Starting FS watcher.
I1121 09:12:01.100100       1 main.go:242] Starting OS watcher.
I1121 09:12:01.100400       1 main.go:257] Starting Plugins.
I1121 09:12:01.100500       1 main.go:314] Loading configuration.
I1121 09:12:01.210000       1 main.go:332] Retrieving plugins.
E1121 09:12:01.210500       1 main.go:132] error starting plugins: error creating plugin manager: unable to create plugin manager: nvml init failed: ERROR_DRIVER_NOT_LOADED
"""


def _node(gpus: str | None, count_label: str | None = "8") -> Node:
    labels = {"feature.node.kubernetes.io/pci-10de.present": "true"}
    ev = {"label:feature.node.kubernetes.io/pci-10de.present": Evidence("node.txt", 9, "feature.node.kubernetes.io/pci-10de.present=true")}
    if count_label:
        labels["nvidia.com/gpu.count"] = count_label
        ev["label:nvidia.com/gpu.count"] = Evidence("node.txt", 14, f"nvidia.com/gpu.count={count_label}")
    capacity = {"cpu": "224", "memory": "2113567968Ki", "pods": "110"}
    allocatable = dict(capacity)
    if gpus is not None:
        capacity["nvidia.com/gpu"] = allocatable["nvidia.com/gpu"] = gpus
        ev["capacity:nvidia.com/gpu"] = Evidence("node.txt", 41, f"  nvidia.com/gpu:     {gpus}")
        ev["allocatable:nvidia.com/gpu"] = Evidence("node.txt", 49, f"  nvidia.com/gpu:     {gpus}")
    return Node(NODE, labels=labels, capacity=capacity, allocatable=allocatable, evidence=ev, artifact="node.txt")


def _plugin_pod(status="CrashLoopBackOff", ready="0/1", restarts=9):
    return Pod(PLUGIN, "gpu-operator", node=NODE, status=status, ready=ready, restarts=restarts,
               evidence=Evidence("pods.txt", 7, f"{PLUGIN}   {ready}   {status}   {restarts} (2m ago)   3d   10.2.3.4   {NODE}"))


def _run(facts_of, *objs, files=None):
    facts = facts_of(files or {"nvidia-smi.txt": SMI, "device-plugin.log": PLUGIN_LOG})
    for o in objs:
        facts.add(o)
    findings, _ = run_checks(facts, checks=[get_check("DP001")])
    return findings


def test_gpus_in_nvidia_smi_and_zero_allocatable_cite_both_and_the_plugin(facts_of):
    [f] = _run(facts_of, _node("0"), _plugin_pod())
    assert f.role == Role.ROOT_CAUSE and f.layer.value == "device-plugin" and f.node == NODE
    cites = [e.cite() for e in f.evidence]
    assert "node.txt:49" in cites  # allocatable nvidia.com/gpu: 0
    assert any(c.startswith("nvidia-smi.txt:") for c in cites)  # the GPUs nvidia-smi sees
    assert "pods.txt:7" in cites
    assert f.facts["gpus_seen"] == 8 and f.facts["advertised"] == 0
    assert "nvml init failed" in f.explanation
    assert f.fixes[0].commands[0] == f"kubectl delete pod {PLUGIN} -n gpu-operator"
    assert "allocatable" in f.fixes[0].commands[1]


def test_no_gpu_resource_at_all_is_the_same_failure(facts_of):
    [f] = _run(facts_of, _node(None), files={"nvidia-smi.txt": SMI})
    assert f.facts["advertised"] is None and "no nvidia.com/gpu at all" in f.title
    assert "No device plugin pod" in f.explanation
    assert "spec.nodeName=gpu-node-3" in f.fixes[0].commands[0]


def test_labels_alone_are_enough_presence(facts_of):
    [f] = _run(facts_of, _node("0"), files={"README.txt": "nothing"})
    assert f.facts["seen_by"] == "label nvidia.com/gpu.count"


def test_silent_when_the_node_advertises_its_gpus_or_shows_no_gpu(facts_of):
    assert _run(facts_of, _node("8"), _plugin_pod("Running", "1/1", 0)) == []
    bare = Node("cpu-node-1", capacity={"cpu": "64"}, allocatable={"cpu": "64"})
    assert _run(facts_of, bare, files={"README.txt": "nothing"}) == []
