"""RT006: GPU pods rely on nvidia being the default runtime, which it is not, with CDI off."""

from __future__ import annotations

from runtime_samples import ETC_CONFIG, facts_from, fired

from gpusleuth.model.k8s import K8sObject

PS_ONE = "root@n:~# ps -ef | grep [c]ontainerd\nroot  1187  1  0 Sep26 ?  00:03:41 /usr/bin/containerd\n"
RUNC_DEFAULT_NO_CDI = ETC_CONFIG.replace('default_runtime_name = "nvidia"', 'default_runtime_name = "runc"').replace(
    '  sandbox_image = "registry.k8s.io/pause:3.8"\n', '  sandbox_image = "registry.k8s.io/pause:3.8"\n  enable_cdi = false\n')


def _pod(runtime_class: str | None) -> K8sObject:
    spec = {"containers": [{"name": "cuda", "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
                            "resources": {"limits": {"nvidia.com/gpu": 1}}}]}
    if runtime_class:
        spec["runtimeClassName"] = runtime_class
    return K8sObject("Pod", "cuda-vectoradd", "default", {"kind": "Pod", "spec": spec}, "pod.yaml", 1, "v1",
                     {"spec": 6, "spec.containers": 7})


def test_fires_when_pod_has_no_runtimeclass_and_cdi_is_off(tmp_path):
    facts = facts_from({"ps.txt": PS_ONE, "etc.txt": RUNC_DEFAULT_NO_CDI}, tmp_path, [_pod(None)])
    (f,) = fired(facts, "RT006")
    assert "Pod/cuda-vectoradd" in f.explanation and f.severity.value == "warning"
    assert [e.cite() for e in f.evidence] == ["pod.yaml:7", "etc.txt:15", "etc.txt:11"]


def test_silent_with_runtimeclass_or_cdi_or_nvidia_default(tmp_path):
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": RUNC_DEFAULT_NO_CDI}, tmp_path / "a", [_pod("nvidia")]), "RT006") == []
    cdi_on = RUNC_DEFAULT_NO_CDI.replace("enable_cdi = false", "enable_cdi = true")
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": cdi_on}, tmp_path / "b", [_pod(None)]), "RT006") == []
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": ETC_CONFIG}, tmp_path / "c", [_pod(None)]), "RT006") == []
