"""OP102 image-cannot-be-pulled: pull failures classified, the driver image's OS suffix explained."""

from failure_fixtures import cites, event, facts_from, pod, run, waiting

DEBIAN = ('Failed to pull image "nvcr.io/nvidia/driver:580.105.08-debian13": rpc error: code = NotFound desc = failed to pull and '
          'unpack image "nvcr.io/nvidia/driver:580.105.08-debian13": failed to resolve image: nvcr.io/nvidia/driver:580.105.08-debian13: not found')
UBUNTU = ('Failed to pull image "nvcr.io/nvidia/driver:535.129.03-ubuntu24.04": rpc error: code = NotFound desc = failed to pull and unpack '
          'image "nvcr.io/nvidia/driver:535.129.03-ubuntu24.04": failed to resolve reference "nvcr.io/nvidia/driver:535.129.03-ubuntu24.04": '
          'nvcr.io/nvidia/driver:535.129.03-ubuntu24.04: not found')
CONTAINERD = """\
$ journalctl -u containerd | grep PullImage
Mar 29 06:12:10 gpu-node-1 containerd[911]: time="2024-03-29T06:12:10.475961270Z" level=error msg="PullImage \\"nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.9.0\\" failed" error="failed to pull and unpack image \\"nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.9.0\\": failed to resolve reference \\"nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.9.0\\": failed to do request: Head \\"https://nvcr.io/v2/nvidia/cloud-native/gpu-operator-validator/manifests/v24.9.0\\": dial tcp: lookup nvcr.io on 10.0.0.2:53: no such host"
"""


def test_driver_image_for_an_os_without_driver_images():
    p = pod("nvidia-driver-daemonset-x8k2p", status="ImagePullBackOff", ready="0/1",
            containers=(waiting("nvidia-driver-ctr", "ImagePullBackOff", 'Back-off pulling image "nvcr.io/nvidia/driver:580.105.08-debian13"',
                                image="nvcr.io/nvidia/driver:580.105.08-debian13"),))
    e = event("pod/nvidia-driver-daemonset-x8k2p", "Failed", DEBIAN, line=4)
    [f] = run("OP102", facts_from({}, p, e))
    assert f.facts["reason"] == "not-found" and f.facts["driver_os"] == "debian13" and f.severity.value == "critical"
    assert "publishes no driver images for that OS" in f.explanation and "events.txt:4" in cites(f)
    assert f.fixes[0].commands == ("kubectl describe pod nvidia-driver-daemonset-x8k2p -n gpu-operator",)
    assert any(x.snippet == "driver:\n  enabled: false\n" for x in f.fixes)


def test_supported_os_but_unpublished_version():
    e = event("pod/nvidia-driver-daemonset-4hq7n", "Failed", UBUNTU, line=2)
    [f] = run("OP102", facts_from({}, e))
    assert "not this version for ubuntu24.04" in f.explanation


def test_network_failure_from_the_containerd_journal():
    [f] = run("OP102", facts_from({"containerd.log": CONTAINERD}))
    assert f.facts["reason"] == "network" and cites(f) == ["containerd.log:2"]
    assert "cannot reach the registry" in f.explanation


def test_silent_when_images_pull():
    e = event("pod/nvidia-driver-daemonset-4hq7n", "Pulled", 'Successfully pulled image "nvcr.io/nvidia/driver:550.127.05-ubuntu22.04" in 41.2s',
              line=2, type_="Normal")
    assert run("OP102", facts_from({}, e)) == []


def test_kubectl_paste_end_to_end_makes_the_pull_the_root_cause():
    from pathlib import Path

    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.sources.loose import open_source

    paste = Path(__file__).parent.parent / "fixtures" / "breadth"
    report = diagnose(open_source(str(paste / "driver-image-debian13.txt")))
    root = report.root_causes[0]
    assert root.code == "OP102" and root.node == "debian-gpu-01" and root.facts["driver_os"] == "debian13"
    assert "driver-image-debian13.txt:36" in cites(root)
    fallback = [f for f in report.findings if f.code == "OP107"]
    assert fallback and fallback[0].role.value == "symptom"  # the generic start failure yields to the specific one


def test_new_os_before_the_operator_release_that_supports_it():
    """gpu-operator#722: 24.3.0 on Ubuntu 24.04; images for ubuntu24.04 come with GPU Operator 25.3.0."""
    e = event("pod/nvidia-driver-daemonset-5xgrq", "Failed", UBUNTU.replace("535.129.03", "550.54.15"), line=2)
    values = "$ helm list -n gpu-operator\nNAME                      NAMESPACE     REVISION  UPDATED                                  STATUS    CHART                APP VERSION\ngpu-operator-1715775233   gpu-operator  1         2024-05-15 12:14:02.31 +0000 UTC         deployed  gpu-operator-v24.3.0 v24.3.0\n"
    [f] = run("OP102", facts_from({"helm.txt": values}, e))
    assert "supports ubuntu24.04 only from v25.3.0 on: release v24.3.0 predates it" in f.explanation
    kinds = [(x.kind.value, x.description.split(" ")[0]) for x in f.fixes]
    assert ("permanent", "Upgrade") in kinds and any(x.snippet == "driver:\n  enabled: false\n" for x in f.fixes)
    assert any(c == "helm upgrade gpu-operator-1715775233 nvidia/gpu-operator -n gpu-operator --reuse-values --set driver.enabled=false"
               for x in f.fixes for c in x.commands)


def test_a_release_that_supports_the_os_only_gets_the_version_advice():
    e = event("pod/nvidia-driver-daemonset-5xgrq", "Failed", UBUNTU, line=2)
    values = "$ helm list -n gpu-operator\nNAME                      NAMESPACE     REVISION  UPDATED                                  STATUS    CHART                APP VERSION\ngpu-operator              gpu-operator  3         2025-06-02 08:00:00.1 +0000 UTC          deployed  gpu-operator-v25.3.1 v25.3.1\n"
    [f] = run("OP102", facts_from({"helm.txt": values}, e))
    assert "only from" not in f.explanation and "not this version for ubuntu24.04" in f.explanation
