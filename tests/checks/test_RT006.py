"""RT006: GPU pods rely on nvidia being the default runtime, which it is not, with CDI off."""

from __future__ import annotations

from runtime_samples import ETC_CONFIG, facts_from, fired

PS_ONE = "root@n:~# ps -ef | grep [c]ontainerd\nroot  1187  1  0 Sep26 ?  00:03:41 /usr/bin/containerd\n"
RUNC_DEFAULT_NO_CDI = ETC_CONFIG.replace('default_runtime_name = "nvidia"', 'default_runtime_name = "runc"').replace(
    '  sandbox_image = "registry.k8s.io/pause:3.8"\n', '  sandbox_image = "registry.k8s.io/pause:3.8"\n  enable_cdi = false\n')


POD = """\
root@n:~# kubectl get pod cuda-vectoradd -n default -o yaml
apiVersion: v1
kind: Pod
metadata:
  name: cuda-vectoradd
  namespace: default
spec:
  restartPolicy: OnFailure
  containers:
  - name: cuda-vectoradd
    image: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04
    resources:
      limits:
        nvidia.com/gpu: 1
"""
WITH_CLASS = POD.replace("  restartPolicy: OnFailure\n", "  restartPolicy: OnFailure\n  runtimeClassName: nvidia\n")


def test_fires_when_pod_has_no_runtimeclass_and_cdi_is_off(tmp_path):
    facts = facts_from({"ps.txt": PS_ONE, "etc.txt": RUNC_DEFAULT_NO_CDI, "pod.yaml": POD}, tmp_path)
    (f,) = fired(facts, "RT006")
    assert "Pod/cuda-vectoradd" in f.explanation and f.severity.value == "warning"
    assert [e.cite() for e in f.evidence] == ["pod.yaml:5", "etc.txt:15", "etc.txt:11"]


def test_silent_with_runtimeclass_or_cdi_or_nvidia_default(tmp_path):
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": RUNC_DEFAULT_NO_CDI, "pod.yaml": WITH_CLASS}, tmp_path / "a"), "RT006") == []
    cdi_on = RUNC_DEFAULT_NO_CDI.replace("enable_cdi = false", "enable_cdi = true")
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": cdi_on, "pod.yaml": POD}, tmp_path / "b"), "RT006") == []
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": ETC_CONFIG, "pod.yaml": POD}, tmp_path / "c"), "RT006") == []


DEPLOYMENT = """\
root@n:~# kubectl get deploy textgen -n ml -o yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: textgen
  namespace: ml
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: server
        image: ghcr.io/huggingface/text-generation-inference:2.4.0
        resources:
          limits:
            nvidia.com/gpu: 2
"""


def test_fires_for_a_workload_template(tmp_path):
    (f,) = fired(facts_from({"ps.txt": PS_ONE, "etc.txt": RUNC_DEFAULT_NO_CDI, "deploy.yaml": DEPLOYMENT}, tmp_path), "RT006")
    assert f.facts["pods"] == ["Deployment/textgen"] and f.evidence[0].cite() == "deploy.yaml:11"
