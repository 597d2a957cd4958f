"""RT004: an nvidia runtime whose BinaryName is missing, misspelt, ambiguous or points nowhere."""

from __future__ import annotations

from runtime_samples import CONFIGS_TWO, ETC_CONFIG, PS_TWO, facts_from, fired

PS_ONE = "root@n:~# ps -ef | grep [c]ontainerd\nroot  1187  1  0 Sep26 ?  00:03:41 /usr/bin/containerd\n"
NO_BINARY = ETC_CONFIG.replace('      BinaryName = "/usr/bin/nvidia-container-runtime"\n', "")


def test_fires_without_binaryname(tmp_path):
    (f,) = fired(facts_from({"ps.txt": PS_ONE, "etc.txt": NO_BINARY}, tmp_path), "RT004")
    assert "has no BinaryName" in f.title and f.evidence[0].cite() == "etc.txt:22"
    assert f.fixes[0].snippet.startswith('[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]')


def test_fires_on_misspelt_key(tmp_path):
    text = ETC_CONFIG.replace("BinaryName =", "BinaryNmae =")
    (f,) = fired(facts_from({"ps.txt": PS_ONE, "etc.txt": text}, tmp_path), "RT004")
    assert "misspelt" in f.title and "did you mean BinaryName" in f.explanation
    assert [e.cite() for e in f.evidence] == ["etc.txt:22", "etc.txt:26"]


def test_fires_on_two_spellings_with_different_values(tmp_path):
    text = ETC_CONFIG.replace(
        '      BinaryName = "/usr/bin/nvidia-container-runtime"\n',
        '      BinaryName = "/usr/bin/nvidia-container-runtime"\n      binaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"\n')
    (f,) = fired(facts_from({"ps.txt": PS_ONE, "etc.txt": text}, tmp_path), "RT004")
    assert "twice" in f.title and f.evidence[-1].cite() == "etc.txt:27"


def test_fires_when_ls_shows_the_binary_missing(tmp_path):
    ls = ("root@n:~# ls -l /usr/bin/nvidia-container-runtime\n"
          "ls: cannot access '/usr/bin/nvidia-container-runtime': No such file or directory\n")
    (f,) = fired(facts_from({"ps.txt": PS_ONE, "etc.txt": ETC_CONFIG, "ls.txt": ls}, tmp_path), "RT004")
    assert "missing on the node" in f.title and [e.cite() for e in f.evidence] == ["etc.txt:26", "ls.txt:2"]


def test_silent_for_a_good_runtime_and_for_another_instances_config(tmp_path):
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": ETC_CONFIG}, tmp_path / "a"), "RT004") == []
    # kubelet uses the snap containerd: the standard instance's broken nvidia entry does not matter to Kubernetes
    broken_other = CONFIGS_TWO.replace('      BinaryName = "/usr/bin/nvidia-container-runtime"\n', "")
    assert fired(facts_from({"ps.txt": PS_TWO, "configs.txt": broken_other}, tmp_path / "b"), "RT004") == []


# https://github.com/NVIDIA/gpu-operator/issues/1374 (containerd 2.0.3, GPU Operator v25.3.0, a Kubespray cluster):
# the containerd config the reporter pasted, from the nvidia runtime's options table on (the file is a version 3
# file; its first line is added here). Kubespray wrote `binaryName` and `systemdCgroup`, the toolkit added
# `BinaryName`; containerd matches option keys without regard to case, so runc's path in `binaryName` took the
# place of the NVIDIA runtime's (kubernetes-sigs/kubespray#12167 renamed Kubespray's key to BinaryName).
ISSUE_1374 = """\
version = 3

          [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia.options]
            BinaryName = '/usr/local/nvidia/toolkit/nvidia-container-runtime'
            CriuImagePath = ''
            CriuWorkPath = ''
            IoGid = 0
            IoUid = 0
            NoNewKeyring = false
            Root = ''
            ShimCgroup = ''
            binaryName = '/usr/local/bin/runc'
            systemdCgroup = true

        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia-cdi]
          runtime_type = 'io.containerd.runc.v2'
          runtime_path = ''
          pod_annotations = []
          container_annotations = []
          privileged_without_host_devices = false
          privileged_without_host_devices_all_devices_allowed = false
          base_runtime_spec = '/etc/containerd/cri-base.json'
          cni_conf_dir = ''
          cni_max_conf_num = 0
          snapshotter = ''
          sandboxer = 'podsandbox'
          io_type = ''

          [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia-cdi.options]
            BinaryName = '/usr/local/nvidia/toolkit/nvidia-container-runtime.cdi'
            CriuImagePath = ''
            CriuWorkPath = ''
"""


def test_kubespray_spelling_beside_the_toolkits_in_a_real_config(tmp_path):
    (f,) = fired(facts_from({"etc/containerd/config.toml": ISSUE_1374}, tmp_path), "RT004")
    assert "'nvidia' sets BinaryName and binaryName" in f.explanation and "case-insensitively" in f.explanation
    # the options table (the runtime has no table of its own in the paste) and the key that wins
    assert [e.cite() for e in f.evidence] == ["etc/containerd/config.toml:3", "etc/containerd/config.toml:12"]
    assert f.fixes[0].snippet == ("[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia.options]\n"
                                  '  BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"\n')
