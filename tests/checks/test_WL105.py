"""WL105 nvidia-visible-devices-set-by-hand."""

from failure_fixtures import facts_from, run

# The pod of https://github.com/GoogleCloudPlatform/container-engine-accelerators/issues/239: GPUs through the
# environment variable, no nvidia.com/gpu request.
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: test
  namespace: default
spec:
  nodeName: gpu-node-1
  containers:
  - args:
    - -c
    - top -b
    command:
    - /bin/sh
    env:
    - name: NVIDIA_VISIBLE_DEVICES
      value: all
    image: cuda:10.2-cudnn7-devel-ubuntu18.04
    name: test
    resources:
      limits:
        cpu: 150m
        memory: 200Mi
"""


def test_gpus_taken_without_a_request():
    [f] = run("WL105", facts_from({"pod.yaml": POD}))
    assert f.facts == {"value": "all", "requests_gpu": False}
    assert "without requesting nvidia.com/gpu" in f.title and f.evidence[0].artifact == "pod.yaml"
    assert f.fixes[0].commands[0] == "kubectl exec test -n default -- nvidia-smi -L"


def test_void_with_a_request_gets_no_gpu():
    void = POD.replace("value: all", "value: void").replace("cpu: 150m", "nvidia.com/gpu: 1")
    [f] = run("WL105", facts_from({"pod.yaml": void}))
    assert "gets no GPU" in f.title and f.severity.value == "error"


def test_silent_for_a_plain_gpu_request_and_for_cpu_pods_that_opt_out():
    plain = POD.replace("    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n      value: all\n", "").replace("cpu: 150m", "nvidia.com/gpu: 1")
    assert run("WL105", facts_from({"pod.yaml": plain})) == []
    assert run("WL105", facts_from({"pod.yaml": POD.replace("value: all", "value: none")})) == []
