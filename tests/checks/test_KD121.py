"""KD121 precompiled-driver-unavailable-for-node: usePrecompiled on an OS/kernel NVIDIA builds no image for."""

import pytest
from failure_fixtures import cites, facts_from, run

CLUSTER_POLICY = """\
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  driver:
    enabled: true
    usePrecompiled: true
    version: "535"
"""
UBUNTU = 'PRETTY_NAME="Ubuntu 22.04.5 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\n'


def _host(kernel: str, os_release: str = UBUNTU) -> str:
    return f"root@gpu-node-3:~# uname -r\n{kernel}\nroot@gpu-node-3:~# cat /etc/os-release\n{os_release}"


def test_hwe_kernel_on_ubuntu_22_04_has_no_precompiled_image():
    [f] = run("KD121", facts_from({"clusterpolicy.yaml": CLUSTER_POLICY, "host.txt": _host("6.8.0-45-generic")}))
    assert cites(f) == ["clusterpolicy.yaml:8", "host.txt:7", "host.txt:2"]  # the setting, os-release ID, uname -r
    assert f.title == "No precompiled NVIDIA driver image exists for the node: ubuntu22.04 with kernel 6.8.0-45-generic"
    assert "5.15 kernel series only" in f.explanation
    assert "driver.usePrecompiled is true (ClusterPolicy cluster-policy)" in f.explanation
    assert f.fixes[0].snippet == "driver:\n  usePrecompiled: false\n" and "Helm release is not in the artifacts" in f.fixes[0].description


@pytest.mark.parametrize("kernel,os_release,words", [
    ("5.15.0-1049-gke", UBUNTU, "gke kernel flavor"),
    ("5.14.0-427.13.1.el9_4.x86_64", 'NAME="Red Hat Enterprise Linux"\nID="rhel"\nVERSION_ID="9.4"\nPRETTY_NAME="Red Hat Enterprise Linux 9.4 (Plow)"\n', "rhel9.4"),
])
def test_other_flavors_and_distributions(kernel, os_release, words):
    [f] = run("KD121", facts_from({"clusterpolicy.yaml": CLUSTER_POLICY, "host.txt": _host(kernel, os_release)}))
    assert words in f.explanation


def test_silent_on_a_supported_kernel_or_without_precompiled():
    assert run("KD121", facts_from({"clusterpolicy.yaml": CLUSTER_POLICY, "host.txt": _host("5.15.0-91-generic")})) == []
    assert run("KD121", facts_from({"clusterpolicy.yaml": CLUSTER_POLICY, "host.txt": _host("6.8.0-1015-aws", UBUNTU.replace("22.04", "24.04"))})) == []
    off = CLUSTER_POLICY.replace("usePrecompiled: true", "usePrecompiled: false")
    assert run("KD121", facts_from({"clusterpolicy.yaml": off, "host.txt": _host("6.8.0-45-generic")})) == []
