"""`kubectl describe` of pods, nodes and daemonsets: whole, concatenated, 1.x tab-aligned, and fragments."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from conftest import FIXTURES, doc_from_text, docs_from_text

from gpusleuth.analysis.engine import sniff
from gpusleuth.model.k8s import DaemonSet, Event, Node, Pod
from gpusleuth.parsers import kubectl_describe
from gpusleuth.parsers.base import NO

K = FIXTURES / "kubectl"
DRIVER_DESCR = "must-gather/gpu_operand_pod_nvidia-driver-daemonset-418.94.202510230424-0-564xm.descr"


def read(name: str) -> str:
    return (K / name).read_text(encoding="utf-8")


def parsed(text: str, artifact: str = "describe.txt") -> list:
    out = []
    for doc in docs_from_text(text, artifact):
        score, p = sniff(doc)
        assert p is kubectl_describe.describe, f"{artifact}:{doc.first_line} went to {p}"
        out.extend(p.parse(doc))
    return out


def of(objs, cls) -> list:
    return [o for o in objs if isinstance(o, cls)]


def line_of(text: str, needle: str, after: int = 0) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if i > after and needle in ln)


def test_driver_pod_from_must_gather():
    text = read(DRIVER_DESCR)
    objs = parsed(text, DRIVER_DESCR)
    (pod,) = of(objs, Pod)
    assert pod.name == "nvidia-driver-daemonset-418.94.202510230424-0-564xm"
    assert (pod.namespace, pod.node, pod.phase) == ("nvidia-gpu-operator", "gh200-worker-1", "Running")
    # STATUS / READY / RESTARTS computed the way `kubectl get pods` prints them: seed 001's row says the same
    assert (pod.status, pod.ready, pod.restarts) == ("CrashLoopBackOff", "1/4", 64)
    assert pod.owner == "DaemonSet/nvidia-driver-daemonset-418.94.202510230424-0"
    assert pod.labels["openshift.driver-toolkit"] == "true"
    assert pod.node_selector == {
        "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION": "418.94.202510230424-0",
        "nvidia.com/gpu.deploy.driver": "true",
    }
    assert {"key": "nvidia.com/gpu", "effect": "NoSchedule", "operator": "Exists"} in pod.tolerations
    assert pod.env["GPU_DIRECT_RDMA_ENABLED"] == "true" and pod.env["DRAIN_POD_SELECTOR_LABEL"] == ""
    assert pod.env["OPERATOR_NAMESPACE"] == "nvidia-gpu-operator (v1:metadata.namespace)"
    assert pod.gpu_request == 0 and pod.evidence.line == 1
    names = [(c.name, c.init) for c in pod.containers]
    assert names == [("k8s-driver-manager", True), ("nvidia-driver-ctr", False), ("nvidia-peermem-ctr", False),
                     ("openshift-driver-toolkit-ctr", False), ("nvidia-fs-ctr", False)]
    mgr, ctr = pod.container("k8s-driver-manager"), pod.container("nvidia-driver-ctr")
    assert (mgr.state, mgr.reason, mgr.exit_code, mgr.ready) == ("terminated", "Completed", 0, True)
    assert mgr.finished_at.isoformat() == "2025-11-21T11:53:40-05:00"
    assert (ctr.state, ctr.reason, ctr.restarts, ctr.ready) == ("waiting", "CrashLoopBackOff", 64, False)
    assert (ctr.last_reason, ctr.last_exit_code) == ("Error", 1)
    assert ctr.last_finished_at.isoformat() == "2025-11-21T15:15:12-05:00"
    assert ctr.evidence.line == line_of(text, "State:          Waiting") and ctr.evidence.text == "State:          Waiting"
    assert ctr.image.startswith("nvcr.io/nvidia/driver@sha256:")
    (event,) = of(objs, Event)
    assert (event.type, event.reason, event.count, event.first_seen, event.last_seen) == ("Warning", "BackOff", 832, "3h22m", "4m7s")
    assert event.object == "pod/nvidia-driver-daemonset-418.94.202510230424-0-564xm"
    assert event.node == "gh200-worker-1"  # kubelet's event, on the pod's node
    assert event.evidence.line == line_of(text, "Warning  BackOff")


def test_several_pods_concatenated_with_multiline_messages():
    text = read("describe_pods_default.txt")
    objs = parsed(text, "describe_pods_default.txt")
    pods = {p.name: p for p in of(objs, Pod)}
    assert set(pods) == {"gpu-textgen", "cuda-vectoradd", "llama-finetune-0"}
    textgen = pods["gpu-textgen"]
    assert (textgen.runtime_class, textgen.gpu_request, textgen.status, textgen.node) == ("nvidia", 1, "ContainerCreating", "192-18-132-31")
    assert textgen.evidence.line == 2  # line 1 is the shell prompt
    vec = pods["cuda-vectoradd"].container("cuda-vectoradd")
    assert (vec.state, vec.reason, vec.last_reason, vec.last_exit_code, vec.restarts) == ("waiting", "RunContainerError", "StartError", 128, 4)
    assert vec.last_message.endswith("'legacy'\nnvidia-container-cli: initialization error: nvml error: driver not loaded: unknown")
    llama = pods["llama-finetune-0"]
    assert (llama.node, llama.status, llama.ready, llama.restarts, llama.owner) == (None, "Pending", "0/1", 0, "StatefulSet/llama-finetune")
    assert llama.resource_requests == {"nvidia.com/gpu": 8, "rdma/rdma_shared_device_a": 1} and llama.gpu_request == 8
    assert llama.node_selector == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute", "operator": "Exists", "tolerationSeconds": 300} in llama.tolerations
    events = of(objs, Event)
    failed = next(e for e in events if e.reason == "Failed")
    assert failed.message.endswith("stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: nvml error: driver not loaded: unknown")
    backoff = next(e for e in events if e.object == "pod/cuda-vectoradd" and e.reason == "BackOff")  # after the broken alignment
    assert (backoff.count, backoff.source, backoff.node) == (11, "kubelet", "gpu-node-01")
    sandbox = next(e for e in events if e.reason == "FailedCreatePodSandBox")
    assert sandbox.count == 93 and sandbox.message.endswith('no runtime for "nvidia" is configured')
    assert sandbox.object == "pod/gpu-textgen" and sandbox.namespace == "default"
    sched = next(e for e in events if e.reason == "FailedScheduling")
    assert "2 Insufficient nvidia.com/gpu" in sched.message and sched.object == "pod/llama-finetune-0"


def test_node_describe():
    text = read("describe_node_gpu-node-01.txt")
    objs = parsed(text, "node.txt")
    (node,) = of(objs, Node)
    assert node.name == "gpu-node-01" and node.artifact == "node.txt"
    assert (node.capacity["nvidia.com/gpu"], node.allocatable["nvidia.com/gpu"], node.allocated["nvidia.com/gpu"]) == ("8", "0", "0")
    assert node.allocated["cpu"] == "250m"
    assert [(t.key, t.value, t.effect) for t in node.taints] == [
        ("nvidia.com/gpu", "present", "NoSchedule"), ("node.kubernetes.io/unschedulable", None, "NoSchedule")]
    assert node.unschedulable is True
    ready = next(c for c in node.conditions if c.type == "Ready")
    assert (ready.status, ready.reason, ready.message) == ("True", "KubeletReady", "kubelet is posting ready status")
    assert len(node.conditions) == 5
    assert (node.kernel_version, node.os_image, node.container_runtime, node.kubelet_version) == (
        "5.15.0-124-generic", "Ubuntu 22.04.4 LTS", "containerd://1.7.21", "v1.30.4")
    assert node.labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3" and len(node.labels) == 13
    ev = node.evidence
    assert ev["capacity:nvidia.com/gpu"].line == line_of(text, "nvidia.com/gpu:     8")
    assert ev["allocatable:nvidia.com/gpu"].line == line_of(text, "nvidia.com/gpu:     0")
    assert ev["label:nvidia.com/gpu.count"].line == line_of(text, "nvidia.com/gpu.count=8")
    assert ev["taint:nvidia.com/gpu"].line == line_of(text, "Taints:")
    assert ev["condition:Ready"].text.startswith("Ready                True")
    assert ev["container_runtime"].line == line_of(text, "Container Runtime Version")
    on_node = {p.name: p for p in of(objs, Pod)}  # the Non-terminated Pods table
    assert on_node["nvidia-driver-daemonset-w8zkd"].node == "gpu-node-01"
    assert on_node["nvidia-driver-daemonset-w8zkd"].namespace == "gpu-operator"
    assert len(on_node) == 6
    events = of(objs, Event)
    assert {e.object for e in events} == {"node/gpu-node-01"} and all(e.node == "gpu-node-01" for e in events)
    assert next(e for e in events if e.reason == "NodeHasSufficientMemory").count == 8


def test_kubernetes_1_8_describe_with_tabs_and_the_old_events_table():
    objs = parsed(read("describe_pod_k8s_1.8_tabs.txt"))
    (pod,) = of(objs, Pod)
    assert (pod.name, pod.node, pod.status) == ("cuda-vector-add", "gpu-node-01", "ContainerCreating")
    assert pod.resource_requests == {"alpha.kubernetes.io/nvidia-gpu": 1}
    events = of(objs, Event)
    assert [e.reason for e in events] == ["Scheduled", "SuccessfulMountVolume", "FailedCreatePodSandBox", "SandboxChanged"]
    sandbox = events[2]
    assert (sandbox.count, sandbox.first_seen, sandbox.last_seen, sandbox.source, sandbox.node) == (7, "1m", "5s", "kubelet, gpu-node-01", "gpu-node-01")
    assert events[0].source == "default-scheduler" and events[0].node is None


def test_daemonset_describe_from_must_gather():
    (ds,) = parsed(read("must-gather/gpu_operand_ds_nvidia-driver-daemonset-418.94.202510230424-0.descr"))
    assert isinstance(ds, DaemonSet)
    assert (ds.name, ds.desired, ds.current, ds.up_to_date, ds.available) == ("nvidia-driver-daemonset-418.94.202510230424-0", 1, 1, 1, 0)
    assert ds.node_selector.endswith("nvidia.com/gpu.deploy.driver=true") and ds.namespace is None


# -- fragments --------------------------------------------------------------------------------------------------


def test_fragment_starting_at_capacity_is_an_unnamed_node():
    text = read("describe_fragment_node_capacity.txt")
    objs = parsed(text, "frag.txt")
    (node,) = of(objs, Node)
    assert node.name is None  # never invented; the Cluster view attributes it when the evidence allows
    assert (node.capacity["nvidia.com/gpu"], node.allocatable["nvidia.com/gpu"]) == ("4", "0")
    assert node.kernel_version == "6.8.0-48-generic" and node.container_runtime == "containerd://1.7.22"
    assert node.evidence["capacity:nvidia.com/gpu"].line == 7
    assert not of(objs, Pod)  # the pods on an unnamed node cannot be placed


def test_fragment_starting_at_events_takes_its_name_from_the_command():
    (event,) = parsed(read("describe_fragment_events.txt"), "frag.txt")
    assert event.object == "pod/cuda-vectoradd" and event.reason == "FailedScheduling"
    assert event.count == 4 and event.evidence.line == 5
    # the same fragment without the prompt: the event stays anonymous
    (anon,) = parsed("\n".join(read("describe_fragment_events.txt").splitlines()[1:]))
    assert anon.object is None and anon.reason == "FailedScheduling"


def test_fragment_starting_inside_containers():
    text = read("describe_fragment_containers.txt")
    objs = parsed(text, "frag.txt")
    (pod,) = of(objs, Pod)
    assert pod.name is None and pod.status is None and pod.ready is None  # partial: nothing computed from it
    first, second = pod.containers
    assert (first.name, first.state, first.reason, first.restarts, first.last_exit_code) == (None, "waiting", "CrashLoopBackOff", 23, 1)
    assert first.evidence.line == 1
    assert (second.name, second.reason, second.image) == ("nvidia-peermem-ctr", "PodInitializing", "nvcr.io/nvidia/driver:550.90.07-ubuntu22.04")
    (event,) = of(objs, Event)
    assert event.count == 95 and event.object is None


def test_describe_cut_short_keeps_what_is_there():
    text = read(DRIVER_DESCR)
    cut = "\n".join(text.splitlines()[:75])  # stops inside nvidia-driver-ctr's Last State
    (pod,) = of(parsed(cut), Pod)
    ctr = pod.container("nvidia-driver-ctr")
    assert (ctr.state, ctr.reason, ctr.last_reason) == ("waiting", "CrashLoopBackOff", "Error")


def test_table_then_describe_in_one_paste_without_prompts():
    text = read("seed001_gpu_operator_pods.txt") + "\n" + read(DRIVER_DESCR)
    objs = parsed(text)
    pods = of(objs, Pod)
    assert len([p for p in pods if p.name == "nvidia-driver-daemonset-418.94.202510230424-0-564xm"]) == 2
    assert len(pods) == 10


def test_garbage_inside_a_describe_does_not_break_it():
    text = read(DRIVER_DESCR).replace("    Ready:          False\n    Restart Count:  64", "    Ready:          False\n\x00\ufffd\ufffd garbage: :: ::\n    Restart Count:  64")
    (pod,) = of(parsed(text), Pod)
    assert pod.container("nvidia-driver-ctr").restarts == 64


def test_sniffing():
    assert kubectl_describe.describe.sniff(doc_from_text(read(DRIVER_DESCR))) == 90
    assert kubectl_describe.describe.sniff(doc_from_text(read("describe_fragment_node_capacity.txt"))) >= 60
    assert kubectl_describe.describe.sniff(doc_from_text(read("describe_fragment_containers.txt"))) >= 60
    yaml_doc = doc_from_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  namespace: default\nspec:\n  containers: []\n")
    assert kubectl_describe.describe.sniff(yaml_doc) == NO


def test_the_pods_start_time_keeps_the_clients_offset_and_its_line():
    """describe prints `Start Time:` in the kubectl client's zone; the offset is a clue to the site's clock."""
    text = (Path(__file__).parent.parent / "cases" / "incidents" / "xid79-one-of-eight" / "full" / "describe-pod.txt").read_text(encoding="utf-8")
    (pod,) = of(parsed(text, "describe-pod.txt"), Pod)
    assert pod.start_time == datetime(2026, 9, 17, 9, 10, 58, tzinfo=timezone(timedelta(hours=9)))
    assert pod.start_time.utcoffset() == timedelta(hours=9)
    assert pod.start_evidence.line == 7 and pod.start_evidence.text.startswith("Start Time:")


def test_an_unset_start_time_is_none_with_no_evidence():
    (pod,) = of(parsed("Name:         p\nNamespace:    default\nStart Time:   <unset>\nStatus:       Pending\n"), Pod)
    assert pod.start_time is None and pod.start_evidence is None
