"""SC101 gpu-node-taint-not-tolerated."""

from failure_fixtures import cites, event, facts_from, node, pod, run, taint

MSG = ("0/3 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 2 node(s) didn't match Pod's node "
       "affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")


def _facts(tolerations=()):
    gpu = node("gpu-node-2", taints=(taint("nvidia.com/gpu", "present"),), capacity={"nvidia.com/gpu": "8"}, allocatable={"nvidia.com/gpu": "8"})
    p = pod("sd-webui-0", ns="apps", node=None, status="Pending", ready="0/1", resource_requests={"nvidia.com/gpu": 1}, tolerations=tolerations)
    return facts_from({}, gpu, p, event("pod/sd-webui-0", "FailedScheduling", MSG, line=6, ns="apps"))


def test_pod_without_the_toleration():
    [f] = run("SC101", _facts())
    assert f.node == "gpu-node-2" and cites(f) == ["events.txt:6", "pods.txt:2", "nodes.txt:9"]
    assert "key: nvidia.com/gpu" in f.fixes[0].snippet and 'value: "present"' in f.fixes[0].snippet


def test_silent_for_pods_that_do_not_want_gpus():
    gpu = node("gpu-node-2", taints=(taint("nvidia.com/gpu", "present"),), capacity={"nvidia.com/gpu": "8"})
    p = pod("nginx-0", ns="apps", node=None, status="Pending", ready="0/1", resource_requests={"cpu": 1})
    assert run("SC101", facts_from({}, gpu, p, event("pod/nginx-0", "FailedScheduling", MSG, line=6, ns="apps"))) == []


def test_kubectl_describe_pod_and_node_end_to_end():
    from pathlib import Path

    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.sources.loose import open_source

    paste = Path(__file__).parent.parent / "fixtures" / "breadth" / "gpu-taint-not-tolerated.txt"
    report = diagnose(open_source(str(paste)))
    assert [f.code for f in report.root_causes] == ["SC101"]
    [f] = report.root_causes
    assert cites(f) == ["gpu-taint-not-tolerated.txt:29", "gpu-taint-not-tolerated.txt:2", "gpu-taint-not-tolerated.txt:37"]
    assert "node.kubernetes.io/not-ready:NoExecute op=Exists" in f.explanation
    assert not [x for x in report.findings if x.code == "SC102"]  # the other 2 nodes are not GPU nodes
