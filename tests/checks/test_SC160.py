"""SC160 gpu-pod-spec-field-not-read: GPU pod specs against k8s.io/api core/v1."""

from gpu_case import run

# https://github.com/canonical/microk8s/issues/4408: runtimeClassName written inside the container, where the
# Pod API has no such field (the thread's fix moves it to the pod spec)
ISSUE_4408 = """\
apiVersion: v1
kind: Pod
metadata:
  name: cuda-vector-add
  namespace: default
spec:
  restartPolicy: OnFailure
  containers:
    - name: cuda-vector-add
      image: "k8s.gcr.io/cuda-vector-add:v0.1"
      runtimeClassName: nvidia
      resources:
        limits:
          nvidia.com/gpu: 1
"""

# https://github.com/NVIDIA/gpu-operator/issues/346: the pod spec a maintainer gave as correct
ISSUE_346 = """\
apiVersion: v1
kind: Pod
metadata:
  name: cuda-vectoradd
spec:
  restartPolicy: OnFailure
  runtimeClassName: nvidia
  containers:
  - name: cuda-vectoradd
    image: "nvidia/samples:vectoradd-cuda11.6.0"
    resources:
      limits:
         nvidia.com/gpu: 1
"""


def test_runtime_class_inside_the_container():
    (f,) = run("SC160", {"pod.yaml": ISSUE_4408})
    (p,) = f.facts["problems"]
    assert p == {"kind": "misplaced-key", "path": "spec.containers[0].runtimeClassName", "belongs": "spec.runtimeClassName"}
    assert [e.line for e in f.evidence] == [11]
    assert f.fixes[0].snippet == "spec:\n  runtimeClassName: nvidia\n"


def test_gpu_straight_under_resources_and_lowercase_operator_in_a_deployment():
    deploy = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      tolerations:
      - key: nvidia.com/gpu
        operator: exists
      containers:
      - name: llm
        image: vllm/vllm-openai
        resources:
          nvidia.com/gpu: 1
"""
    (f,) = run("SC160", {"d.yaml": deploy})
    got = {p["path"]: p for p in f.facts["problems"]}
    assert got["spec.template.spec.tolerations[0].operator"]["kind"] == "bad-value" and "did you mean 'Exists'" in f.explanation
    assert got["spec.template.spec.containers[0].resources.nvidia.com/gpu"]["belongs"].endswith("resources.limits.nvidia.com/gpu")
    assert sorted(e.line for e in f.evidence) == [10, 15]


def test_request_without_limit_and_fractions():
    pod = ISSUE_346.replace("limits:\n         nvidia.com/gpu: 1", 'requests:\n         nvidia.com/gpu: "0.5"')
    (f,) = run("SC160", {"pod.yaml": pod})
    assert f.severity.value == "error" and "must be set in limits" in f.explanation and "whole units" in f.explanation


def test_valid_gpu_pod_and_non_gpu_pod_are_silent():
    assert run("SC160", {"pod.yaml": ISSUE_346}) == []
    no_gpu = ISSUE_4408.replace("          nvidia.com/gpu: 1", "          cpu: 1")
    assert run("SC160", {"pod.yaml": no_gpu}) == []


# https://github.com/kubernetes/kubernetes/issues/96506: two pods created side by side with `kubectl create -f -`; the
# second asks for alpha.kubernetes.io/nvidia-gpu, the resource of the in-tree GPU support Kubernetes removed in 1.11,
# and ends as OutOfalpha.kubernetes.io/nvidia-gpu while the first, asking for nvidia.com/gpu, runs
ISSUE_96506_OLD = """\
apiVersion: v1
kind: Pod
metadata:
  generateName: cuda-vector-add-
spec:
  restartPolicy: OnFailure
  nodeName: edge1
  containers:
    - name: cuda-vector-add
      # https://github.com/kubernetes/kubernetes/blob/v1.7.11/test/images/nvidia-cuda/Dockerfile
      image: "k8s.gcr.io/cuda-vector-add:v0.1"
      resources:
        limits:
          alpha.kubernetes.io/nvidia-gpu: 1 # requesting 1 GPU
"""


def test_in_tree_gpu_resource_of_an_older_kubernetes():
    (f,) = run("SC160", {"create.yaml": ISSUE_96506_OLD})
    (p,) = f.facts["problems"]
    assert p == {"kind": "removed", "path": "spec.containers[0].resources.limits.alpha.kubernetes.io/nvidia-gpu",
                 "belongs": "spec.containers[].resources.limits.nvidia.com/gpu"}
    assert f.facts["object"] == "Pod cuda-vector-add-" and [e.line for e in f.evidence] == [14]
    assert "removed in 1.11" in f.title and "OutOfalpha.kubernetes.io/nvidia-gpu" in f.explanation
    assert f.fixes[0].snippet == "spec:\n  containers:\n  - resources:\n      limits:\n        nvidia.com/gpu: 1\n"
    # the thread's first pod, the same manifest asking for nvidia.com/gpu, is silent
    assert run("SC160", {"create.yaml": ISSUE_96506_OLD.replace("alpha.kubernetes.io/nvidia-gpu", "nvidia.com/gpu")}) == []
