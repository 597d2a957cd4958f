"""RT009: options set twice under spellings that differ only by case."""

from __future__ import annotations

from runtime_samples import ETC_CONFIG, facts_from, fired

PS_ONE = "root@n:~# ps -ef | grep [c]ontainerd\nroot  1187  1  0 Sep26 ?  00:03:41 /usr/bin/containerd\n"


def test_fires_on_systemdcgroup_twice(tmp_path):
    text = ETC_CONFIG.replace("        SystemdCgroup = true\n", "        SystemdCgroup = true\n        systemdCgroup = false\n")
    (f,) = fired(facts_from({"ps.txt": PS_ONE, "etc.txt": text}, tmp_path), "RT009")
    assert "SystemdCgroup (line 19) and systemdCgroup (line 20)" in f.explanation and f.evidence[0].cite() == "etc.txt:20"


def test_binaryname_twice_is_left_to_rt004(tmp_path):
    text = ETC_CONFIG.replace('      BinaryName = "/usr/bin/nvidia-container-runtime"\n',
                              '      BinaryName = "/usr/bin/nvidia-container-runtime"\n      binaryName = "/usr/bin/nvidia-container-runtime"\n')
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": text}, tmp_path), "RT009") == []
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": ETC_CONFIG}, tmp_path / "b"), "RT009") == []
