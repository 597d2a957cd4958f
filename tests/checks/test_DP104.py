"""DP104 mig-strategy-resource-mismatch: nvidia.com/gpu asked on mixed-strategy MIG nodes, and the reverse."""

from failure_fixtures import cites, event, facts_from, node, pod, run


def _mixed():
    return node("a100-mig-1", labels={"nvidia.com/mig.strategy": "mixed"},
                capacity={"nvidia.com/gpu": "0", "nvidia.com/mig-1g.10gb": "6", "nvidia.com/mig-2g.20gb": "1"},
                allocatable={"nvidia.com/gpu": "0", "nvidia.com/mig-1g.10gb": "6", "nvidia.com/mig-2g.20gb": "1"})


def test_gpu_request_on_mixed_nodes():
    p = pod("bert-infer-0", ns="ml", node=None, status="Pending", ready="0/1", resource_requests={"nvidia.com/gpu": 1})
    e = event("pod/bert-infer-0", "FailedScheduling", "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector.", line=3, ns="ml")
    [f] = run("DP104", facts_from({}, _mixed(), p, e))
    assert f.facts["strategy"] == "mixed" and "use nvidia.com/mig-1g.10gb" in f.title
    assert cites(f)[:2] == ["pods.txt:2", "events.txt:3"] and "nodes.txt:4" in cites(f)


def test_mig_request_on_single_nodes():
    n = node("a100-mig-2", labels={"nvidia.com/mig.strategy": "single"}, capacity={"nvidia.com/gpu": "7"}, allocatable={"nvidia.com/gpu": "7"})
    p = pod("etl-0", ns="ml", node=None, status="Pending", ready="0/1", resource_requests={"nvidia.com/mig-1g.10gb": 1})
    [f] = run("DP104", facts_from({}, n, p))
    assert f.facts["strategy"] == "single" and "use nvidia.com/gpu" in f.title


def test_silent_when_the_name_exists():
    p = pod("etl-0", ns="ml", node=None, status="Pending", ready="0/1", resource_requests={"nvidia.com/mig-1g.10gb": 1})
    assert run("DP104", facts_from({}, _mixed(), p)) == []


def test_strategy_from_the_device_plugin_chart_values_is_cited():
    n = node("a100-mig-3", capacity={"nvidia.com/mig-1g.10gb": "7"}, allocatable={"nvidia.com/mig-1g.10gb": "7"})
    p = pod("bert-infer-0", ns="ml", node=None, status="Pending", ready="0/1", resource_requests={"nvidia.com/gpu": 1})
    [f] = run("DP104", facts_from({"values.yaml": "migStrategy: mixed\nfailOnInitError: true\n"}, n, p))
    assert "values.yaml:1" in cites(f) and "nvidia-device-plugin chart values migStrategy: single" in f.fixes[1].description


def test_silent_when_the_chart_values_set_another_strategy():
    n = node("a100-mig-3", capacity={"nvidia.com/mig-1g.10gb": "7"}, allocatable={"nvidia.com/mig-1g.10gb": "7"})
    p = pod("bert-infer-0", ns="ml", node=None, status="Pending", ready="0/1", resource_requests={"nvidia.com/gpu": 1})
    assert run("DP104", facts_from({"values.yaml": "migStrategy: single\nfailOnInitError: true\n"}, n, p)) == []
