"""SC106 gpus-asked-by-several-containers: a pod whose containers each ask for a GPU needs their sum on one node."""

from failure_fixtures import cites, facts_from, run

# https://github.com/NVIDIA/k8s-device-plugin/issues/71 (two containers x 1 GPU, nodes with one GPU each)
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: gpu-pod
  namespace: kube-system
spec:
  containers:
  - name: cuda-container
    image: nvidia/cuda:9.0-devel
    resources:
      limits:
        nvidia.com/gpu: 1 # requesting 1 GPUs
  - name: digits-container
    image: nvidia/digits:6.0
    resources:
      limits:
        nvidia.com/gpu: 1 # requesting 1 GPUs
"""


def test_two_containers_with_one_gpu_each_need_two_on_one_node():
    [f] = run("SC106", facts_from({"pod.yaml": POD}))
    assert cites(f) == ["pod.yaml:12", "pod.yaml:17"] and f.facts["gpus"] == 2 and f.layer.value == "scheduler"
    assert "needs 2 nvidia.com/gpu on one node" in f.title and "cuda-container 1, digits-container 1" in f.explanation


def test_the_same_yaml_quoted_in_a_ticket_is_read_though_its_lines_carry_comments():
    ticket = "The pod stays Pending with `0/3 nodes are available: 3 Insufficient nvidia.com/gpu.` on nodes with one GPU each.\n\n" + POD
    [f] = run("SC106", facts_from({"issue.md": ticket}))
    assert f.facts["containers"] == ["cuda-container", "digits-container"]


def test_silent_when_one_container_asks():
    one = POD.replace("        nvidia.com/gpu: 1 # requesting 1 GPUs\n", "        cpu: 1\n", 1)
    assert run("SC106", facts_from({"pod.yaml": one})) == []
