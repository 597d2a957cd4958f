"""RT005: runtimes written in a config layout the running containerd does not read."""

from __future__ import annotations

from runtime_samples import ETC_CONFIG, facts_from, fired

PS_ONE = "root@n:~# ps -ef | grep [c]ontainerd\nroot  1187  1  0 Sep26 ?  00:03:41 /usr/bin/containerd\n"
V3 = """\
root@n:~# cat /etc/containerd/config.toml
version = 3
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia]
  runtime_type = 'io.containerd.runc.v2'
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia.options]
  BinaryName = '/usr/local/nvidia/toolkit/nvidia-container-runtime'
"""


def test_fires_without_version_line(tmp_path):
    text = ETC_CONFIG.replace("version = 2\n", "")
    (f,) = fired(facts_from({"ps.txt": PS_ONE, "etc.txt": text}, tmp_path), "RT005")
    assert f.severity.value == "error" and "no `version` line" in f.explanation
    assert f.evidence[0].cite() == "etc.txt:15"


def test_fires_on_version3_file_with_containerd_16(tmp_path):
    version = "root@n:~# containerd --version\ncontainerd containerd.io 1.6.21 3dce8eb055cbb6872793272b4f20ed16117344f8\n"
    (f,) = fired(facts_from({"ps.txt": PS_ONE, "v3.txt": V3, "version.txt": version}, tmp_path), "RT005")
    assert "containerd 1.6.21 does not read it" in f.title
    assert [e.cite() for e in f.evidence] == ["v3.txt:2", "version.txt:2"]


def test_silent_for_matching_layouts(tmp_path):
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": ETC_CONFIG}, tmp_path / "a"), "RT005") == []
    version = "root@n:~# containerd --version\ncontainerd github.com/containerd/containerd/v2 v2.0.4 1a43cb6a\n"
    assert fired(facts_from({"ps.txt": PS_ONE, "v3.txt": V3, "version.txt": version}, tmp_path / "b"), "RT005") == []
