"""WL109 gpu-request-name-not-offered-shared: nvidia.com/gpu asked where time-slicing renamed it to .shared."""

from failure_fixtures import cites, event, facts_from, node, pod, run


def _renamed():
    return node("t4-shared-1", labels={"nvidia.com/gpu.replicas": "4"}, capacity={"nvidia.com/gpu.shared": "4"},
                allocatable={"nvidia.com/gpu.shared": "4"})


def test_gpu_request_where_only_shared_is_offered():
    p = pod("whisper-0", ns="ml", node=None, status="Pending", ready="0/1", resource_requests={"nvidia.com/gpu": 1})
    e = event("pod/whisper-0", "FailedScheduling", "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }.", line=3, ns="ml")
    [f] = run("WL109", facts_from({}, _renamed(), p, e))
    assert "advertised as nvidia.com/gpu.shared" in f.title
    assert cites(f)[:2] == ["pods.txt:2", "events.txt:3"]
    assert "nvidia.com/gpu.shared: 1" in f.fixes[0].snippet


def test_shared_request_where_nothing_is_renamed():
    n = node("t4-1", capacity={"nvidia.com/gpu": "4"}, allocatable={"nvidia.com/gpu": "4"})
    p = pod("whisper-0", ns="ml", node=None, status="Pending", ready="0/1", resource_requests={"nvidia.com/gpu.shared": 1})
    [f] = run("WL109", facts_from({}, n, p))
    assert f.facts["requested"] == "nvidia.com/gpu.shared"


def test_silent_when_the_name_is_offered():
    p = pod("whisper-0", ns="ml", node=None, status="Pending", ready="0/1", resource_requests={"nvidia.com/gpu.shared": 1})
    assert run("WL109", facts_from({}, _renamed(), p)) == []
