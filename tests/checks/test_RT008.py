"""RT008: a containerd config containerd cannot load."""

from __future__ import annotations

from runtime_samples import CONFIGS_TWO, ETC_CONFIG, PS_TWO, facts_from, fired

PS_ONE = "root@n:~# ps -ef | grep [c]ontainerd\nroot  1187  1  0 Sep26 ?  00:03:41 /usr/bin/containerd\n"


def test_fires_on_duplicate_table_in_kubelets_config(tmp_path):
    dup = ETC_CONFIG + '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n      runtime_type = "io.containerd.runc.v2"\n'
    (f,) = fired(facts_from({"ps.txt": PS_ONE, "etc.txt": dup}, tmp_path), "RT008")
    assert f.severity.value == "error" and "defined twice (lines 22 and 28; 21 and 27 of /etc/containerd/config.toml)" in f.explanation
    assert [e.cite() for e in f.evidence] == ["etc.txt:22", "etc.txt:28"]


def test_fires_on_unclosed_string_with_its_line(tmp_path):
    bad = ETC_CONFIG.replace('sandbox_image = "registry.k8s.io/pause:3.8"', 'sandbox_image = "registry.k8s.io/pause:3.8')
    (f,) = fired(facts_from({"ps.txt": PS_ONE, "etc.txt": bad}, tmp_path), "RT008")
    assert "at line 10" in f.explanation and f.evidence[0].cite() == "etc.txt:10"


def test_other_instances_broken_config_is_only_a_warning(tmp_path):
    bad = CONFIGS_TWO.replace('sandbox_image = "registry.k8s.io/pause:3.8"', 'sandbox_image = "registry.k8s.io/pause:3.8')
    (f,) = fired(facts_from({"ps.txt": PS_TWO, "configs.txt": bad}, tmp_path), "RT008")
    assert f.severity.value == "warning"


def test_silent_for_valid_files_and_templates(tmp_path):
    tmpl = ("root@k3s:~# cat /var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl\n{{ template \"base\" . }}\n"
            '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n  runtime_type = "io.containerd.runc.v2"\n')
    assert fired(facts_from({"ps.txt": PS_ONE, "etc.txt": ETC_CONFIG, "tmpl.txt": tmpl}, tmp_path), "RT008") == []


def test_a_running_owner_will_not_survive_its_next_restart(tmp_path):
    bad = CONFIGS_TWO.replace('sandbox_image = "registry.k8s.io/pause:3.8"', 'sandbox_image = "registry.k8s.io/pause:3.8')
    (f,) = fired(facts_from({"ps.txt": PS_TWO, "configs.txt": bad}, tmp_path), "RT008")
    assert "containerd.service (/usr/bin/containerd), socket /run/containerd/containerd.sock is running" in f.explanation
