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


def test_a_start_failure_in_the_pods_events_counts_too():
    """`command: ["nvidia-smi"]` under runc: the container never starts, kubelet's event says why."""
    describe = """\
$ kubectl describe pod cuda-smi -n default
Name:             cuda-smi
Namespace:        default
Node:             gpu-worker-1/10.0.12.42
Status:           Running
Containers:
  cuda-smi:
    Image:      nvcr.io/nvidia/cuda:11.8.0-base-ubuntu22.04
    Limits:
      nvidia.com/gpu:  1
    Requests:
      nvidia.com/gpu:  1
Events:
  Type     Reason   Age                From     Message
  ----     ------   ----               ----     -------
  Warning  Failed   10s (x4 over 62s)  kubelet  Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "nvidia-smi": executable file not found in $PATH: unknown
"""
    [f] = run("WL102", facts_from({"describe.txt": describe, "other.log": "$ kubectl logs x\nhello\n"}))
    assert f.component == "cuda-smi" and "describe.txt:16" in cites(f)
    assert "executable file not found" in f.explanation and len(f.title) <= 160
