"""SC102 gpu-pod-selector-matches-no-gpu-node."""

from failure_fixtures import cites, event, facts_from, node, pod, run

MSG = "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector."


def _facts(selector):
    gpu = node("a100-1", labels={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.present": "true"},
               capacity={"nvidia.com/gpu": "8"})
    p = pod("train-llama-0", ns="ml", node=None, status="Pending", ready="0/1", resource_requests={"nvidia.com/gpu": 8}, node_selector=selector)
    return facts_from({}, gpu, p, event("pod/train-llama-0", "FailedScheduling", MSG, line=2, ns="ml"))


def test_selector_for_another_gpu_model():
    [f] = run("SC102", _facts({"nvidia.com/gpu.product": "Tesla-V100-SXM2-32GB"}))
    assert "the GPU nodes have nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB" in f.title
    assert cites(f) == ["events.txt:2", "pods.txt:2", "nodes.txt:4"]


def test_silent_when_a_gpu_node_matches():
    assert run("SC102", _facts({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"})) == []
