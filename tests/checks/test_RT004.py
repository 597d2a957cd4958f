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
