"""FD102 nfd-worker-not-on-gpu-node: the worker does not tolerate the GPU node's taint."""

from failure_fixtures import cites, facts_from, node, pod, run, taint

WORKER_TOLERATIONS = ({"key": "node-role.kubernetes.io/master", "operator": "Equal", "effect": "NoSchedule"},
                      {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"})


def _cluster(tolerations=WORKER_TOLERATIONS):
    gpu = node("gpu-node-9", taints=(taint("nvidia.com/gpu", "true"),), capacity={"nvidia.com/gpu": "4"}, allocatable={"nvidia.com/gpu": "4"})
    cpu = node("cpu-node-1")
    worker = pod("gpu-operator-node-feature-discovery-worker-bw7gq", node="cpu-node-1", tolerations=tolerations)
    return gpu, cpu, worker


def test_value_mismatch_in_the_toleration():
    [f] = run("FD102", facts_from({}, *_cluster()))
    assert f.facts["taint"] == "nvidia.com/gpu=true:NoSchedule" and f.node == "gpu-node-9"
    assert cites(f)[0] == "nodes.txt:9" and "nvidia.com/gpu=present" in f.explanation


def test_silent_when_the_worker_tolerates_the_taint():
    ok = ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)
    assert run("FD102", facts_from({}, *_cluster(ok))) == []
