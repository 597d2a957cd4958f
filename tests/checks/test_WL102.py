"""WL102 gpu-pod-started-without-nvidia-runtime: the pod's own log shows no driver inside."""

from failure_fixtures import cites, facts_from, pod, run

LOG = """\
$ kubectl logs gpu-check -n team-a
bash: nvidia-smi: command not found
"""


def test_gpu_pod_without_runtime_class():
    p = pod("gpu-check", ns="team-a", node="gpu-node-5", status="Completed", ready="0/1", resource_requests={"nvidia.com/gpu": 1})
    [f] = run("WL102", facts_from({"check.log": LOG}, p))
    assert cites(f) == ["check.log:2", "pods.txt:2"] and f.layer.value == "workload"
    assert f.fixes[0].snippet == "spec:\n  runtimeClassName: nvidia\n"


def test_silent_for_a_pod_with_the_runtime_class_or_an_operand():
    p = pod("gpu-check", ns="team-a", node="gpu-node-5", status="Completed", ready="0/1", resource_requests={"nvidia.com/gpu": 1},
            runtime_class="nvidia")
    assert run("WL102", facts_from({"check.log": LOG}, p)) == []
