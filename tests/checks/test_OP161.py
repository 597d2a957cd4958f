"""OP161 gpu-daemonset-does-not-tolerate-gpu-node-taint: node taints vs GPU DaemonSets' tolerations."""

from gpu_case import run

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-07
  labels:
    nvidia.com/gpu.present: "true"
spec:
  taints:
  - key: nvidia.com/gpu
    value: "true"
    effect: NoSchedule
status:
  capacity:
    cpu: "64"
  allocatable:
    cpu: "64"
"""

# https://github.com/NVIDIA/k8s-device-plugin/issues/1934: a toleration `nvidia.com/gpu=present` (Equal) in the
# chart's defaults against GPU nodes tainted `nvidia.com/gpu=true:NoSchedule`; DESIRED stayed 0
DS = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-gpu-feature-discovery
  namespace: nvidia-device-plugin
spec:
  template:
    spec:
      tolerations:
      - effect: NoSchedule
        key: nvidia.com/gpu
        operator: Equal
        value: present
      containers:
      - name: gfd
        image: nvcr.io/nvidia/k8s-device-plugin:v0.19.1
status:
  desiredNumberScheduled: 0
  currentNumberScheduled: 0
  numberReady: 0
"""


def test_equal_toleration_for_another_value():
    (f,) = run("OP161", {"node.yaml": NODE, "ds.yaml": DS})
    assert f.facts["taint"] == "nvidia.com/gpu=true:NoSchedule" and f.node == "gpu-node-07"
    assert "operator: Exists" in f.fixes[0].snippet


def test_exists_toleration_is_silent():
    ok = DS.replace("        operator: Equal\n        value: present\n", "        operator: Exists\n")
    assert run("OP161", {"node.yaml": NODE, "ds.yaml": ok}) == []
