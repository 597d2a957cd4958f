"""DP001 device-plugin-not-advertising-gpus: nvidia-smi sees the GPUs, the node advertises none."""

import operand_seed as seed
from node_texts import DESCRIBE_NODE, NODE, SMI

from gpusleuth.analysis.engine import run_checks
from gpusleuth.checks import get_check
from gpusleuth.model.finding import Role

PLUGIN = "nvidia-device-plugin-daemonset-7kq2x"
PODS = f"""\
$ kubectl get pods -n gpu-operator -o wide
NAME                                       READY   STATUS             RESTARTS      AGE   IP            NODE         NOMINATED NODE   READINESS GATES
nvidia-driver-daemonset-9b7tw              1/1     Running            1 (41m ago)   3d    10.2.3.2      {NODE}   <none>           <none>
{PLUGIN}       0/1     CrashLoopBackOff   9 (2m ago)    3d    10.2.3.4      {NODE}   <none>           <none>
"""
PLUGIN_LOG = f"""\
$ kubectl logs {PLUGIN} -n gpu-operator
I1121 09:12:01.100000       1 main.go:235] Starting FS watcher.
I1121 09:12:01.100100       1 main.go:242] Starting OS watcher.
I1121 09:12:01.100400       1 main.go:257] Starting Plugins.
I1121 09:12:01.100500       1 main.go:314] Loading configuration.
I1121 09:12:01.210000       1 main.go:332] Retrieving plugins.
E1121 09:12:01.210500       1 main.go:132] error starting plugins: error creating plugin manager: unable to create plugin manager: nvml init failed: ERROR_DRIVER_NOT_LOADED
"""


def _run(files):
    findings, _ = run_checks(seed.facts_from(files), checks=[get_check("DP001")])
    return findings


def test_gpus_in_nvidia_smi_and_zero_allocatable_cite_both_and_the_plugin():
    [f] = _run({"nvidia-smi.txt": SMI, "node.txt": DESCRIBE_NODE, "pods.txt": PODS, "device-plugin.log": PLUGIN_LOG})
    assert f.role == Role.ROOT_CAUSE and f.layer.value == "device-plugin" and f.node == NODE
    cites = [e.cite() for e in f.evidence]
    assert {"node.txt:20", "node.txt:15"} <= set(cites)  # allocatable and capacity nvidia.com/gpu: 0
    assert any(c.startswith("nvidia-smi.txt:") for c in cites)  # the GPUs nvidia-smi sees
    assert "pods.txt:4" in cites and "device-plugin.log:7" in cites
    assert f.facts["gpus_seen"] == 8 and f.facts["advertised"] == 0 and f.confidence >= 0.85
    assert "nvml init failed" in f.explanation
    assert f.fixes[0].commands[0] == f"kubectl delete pod {PLUGIN} -n gpu-operator"
    assert "allocatable" in f.fixes[0].commands[1]


def test_no_gpu_resource_at_all_is_the_same_failure():
    no_gpu = "\n".join(ln for ln in DESCRIBE_NODE.splitlines() if "nvidia.com/gpu:" not in ln) + "\n"
    [f] = _run({"nvidia-smi.txt": SMI, "node.txt": no_gpu})
    assert f.facts["advertised"] is None and "no nvidia.com/gpu at all" in f.title
    assert any(e.cite() == "node.txt:17" and "no nvidia.com/gpu" in e.text for e in f.evidence)  # the Allocatable block
    assert "No device plugin pod" in f.explanation
    assert f"spec.nodeName={NODE}" in f.fixes[0].commands[0]


def test_labels_alone_are_enough_presence():
    [f] = _run({"node.txt": DESCRIBE_NODE})
    assert f.facts["seen_by"] == "label nvidia.com/gpu.count"


def test_silent_when_the_node_advertises_its_gpus_or_shows_no_gpu():
    assert _run({"nvidia-smi.txt": SMI, "node.txt": DESCRIBE_NODE.replace("nvidia.com/gpu:     0", "nvidia.com/gpu:     8")}) == []
    cpu_node = "\n".join(ln for ln in DESCRIBE_NODE.splitlines() if "nvidia" not in ln and "10de" not in ln) + "\n"
    assert _run({"node.txt": cpu_node}) == []


def test_nvidia_smi_naming_no_node_is_read_as_the_only_gpu_node_and_says_so():
    # a second node (the control plane) in the listing: the nvidia-smi paste names no node
    control_plane = PODS + (
        "coredns-7db6d8ff4d-x2x4z                   1/1     Running            0             9d    10.2.0.3      cp-1         <none>           <none>\n")
    [f] = _run({"nvidia-smi.txt": SMI, "node.txt": DESCRIBE_NODE, "pods.txt": control_plane})
    assert f.facts["seen_by"].startswith("nvidia-smi") and f.facts["gpus_seen"] == 8
    assert "names no node; gpu-node-3 is the only node labelled with GPUs" in f.explanation


LS_PLUGINS = f"""\
root@{NODE}:~# ls -la /var/lib/kubelet/device-plugins/
total 12
drwxr-xr-x  2 root root 4096 Jun 17 09:48 .
drwxr-x--- 10 root root 4096 Mar  3 14:06 ..
-rw-------  1 root root 4387 Jun 17 10:38 kubelet_internal_checkpoint
srwxr-xr-x  1 root root    0 Mar  3 14:06 kubelet.sock
"""


def test_a_device_plugin_directory_without_the_plugin_socket_is_cited():
    [f] = _run({"nvidia-smi.txt": SMI, "node.txt": DESCRIBE_NODE, "pods.txt": PODS, "ls.txt": LS_PLUGINS})
    assert "ls.txt:1" in [e.cite() for e in f.evidence]
    assert "no nvidia-*.sock (only kubelet_internal_checkpoint, kubelet.sock)" in f.explanation


def test_a_listed_plugin_socket_is_said_to_exist():
    listing = LS_PLUGINS + "srwxr-xr-x  1 root root    0 Jun 17 09:49 nvidia-gpu.sock\n"
    [f] = _run({"nvidia-smi.txt": SMI, "node.txt": DESCRIBE_NODE, "pods.txt": PODS, "ls.txt": listing})
    assert "holds nvidia-gpu.sock" in f.explanation
