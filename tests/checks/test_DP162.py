"""DP162 requested-gpu-resource-not-advertised-by-config: pods' resource names vs the sharing config's."""

from gpu_case import run

CM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: kube-system
data:
  any: |-
    version: v1
    flags:
      migStrategy: none
      renameByDefault: true
    sharing:
      timeSlicing:
        resources:
          - name: nvidia.com/gpu
            replicas: 16384
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
spec:
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.08-py3
    resources:
      limits:
        nvidia.com/gpu.shared: 1
"""


def test_pod_asks_for_shared_name_the_config_does_not_advertise():
    # the config of https://github.com/NVIDIA/k8s-device-plugin/issues/1433: renameByDefault under flags,
    # so the plugin keeps advertising nvidia.com/gpu
    (f,) = run("DP162", {"cm.yaml": CM, "pod.yaml": POD})
    assert f.facts["requested"] == "nvidia.com/gpu.shared" and f.facts["advertised"] == ["nvidia.com/gpu"]
    assert "renameByDefault: true" in f.fixes[0].snippet


def test_config_that_renames_matches_the_pod():
    fixed = CM.replace("      renameByDefault: true\n", "").replace("      timeSlicing:\n", "      timeSlicing:\n        renameByDefault: true\n")
    assert run("DP162", {"cm.yaml": fixed, "pod.yaml": POD}) == []


def test_a_per_resource_rename_does_not_advertise_the_shared_name():
    # the config of https://github.com/NVIDIA/k8s-device-plugin/issues/353: `rename` under the resource, which the
    # plugin drops, so the node keeps advertising nvidia.com/gpu
    cm = ("version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n"
          "      rename: nvidia.com/gpu.shared\n      replicas: 2\n")
    (f,) = run("DP162", {"plugin-config.yaml": cm, "pod.yaml": POD})
    assert f.facts["requested"] == "nvidia.com/gpu.shared" and f.facts["advertised"] == ["nvidia.com/gpu"]
