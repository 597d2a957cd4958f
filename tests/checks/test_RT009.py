"""RT009: options containerd drops (misspelt) or folds into one (differing only by case)."""

from __future__ import annotations

from runtime_samples import ETC_CONFIG, facts_from, fired

PS_ONE = "root@n:~# ps -ef | grep [c]ontainerd\nroot  1187  1  0 Sep26 ?  00:03:41 /usr/bin/containerd\n"


def test_fires_on_systemdcgroup_twice(tmp_path):
    text = ETC_CONFIG.replace("        SystemdCgroup = true\n", "        SystemdCgroup = true\n        systemdCgroup = false\n")
    (f,) = fired(facts_from({"ps.txt": PS_ONE, "etc.txt": text}, tmp_path), "RT009")
    assert "SystemdCgroup (line 19) and systemdCgroup (line 20)" in f.explanation and f.evidence[0].cite() == "etc.txt:20"


def test_fires_on_misspelt_systemdcgroup(tmp_path):
    text = ETC_CONFIG.replace("        SystemdCgroup = true\n", "        SystemdCgrup = true\n")
    (f,) = fired(facts_from({"ps.txt": PS_ONE, "etc.txt": text}, tmp_path), "RT009")
    assert "did you mean SystemdCgroup" in f.explanation and f.evidence[0].cite() == "etc.txt:19"


def test_binaryname_is_left_to_rt004_and_clean_files_pass(tmp_path):
    text = ETC_CONFIG.replace('      BinaryName = "/usr/bin/nvidia-container-runtime"\n',
                              '      BinaryName = "/usr/bin/nvidia-container-runtime"\n      binaryName = "/usr/bin/nvidia-container-runtime"\n')
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": text}, tmp_path), "RT009") == []
    misspelt = ETC_CONFIG.replace("BinaryName =", "BinaryNmae =")
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": misspelt}, tmp_path / "m"), "RT009") == []
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": ETC_CONFIG}, tmp_path / "b"), "RT009") == []
