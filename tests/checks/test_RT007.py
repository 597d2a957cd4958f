"""RT007: on containerd 1.x a CRI drop-in replaces the main file's whole CRI section."""

from __future__ import annotations

from runtime_samples import facts_from, fired

MAIN = """\
root@n:~# cat /etc/containerd/config.toml
version = 2
imports = ["/etc/containerd/conf.d/*.toml"]

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.9"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = true
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "/etc/containerd/certs.d"
"""
DROP_IN = """\
root@n:~# cat /etc/containerd/conf.d/99-nvidia.toml
version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
  BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
"""
V16 = "root@n:~# containerd --version\ncontainerd containerd.io 1.6.21 3dce8eb055cbb6872793272b4f20ed16117344f8\n"
V20 = "root@n:~# containerd --version\ncontainerd github.com/containerd/containerd/v2 v2.0.4 1a43cb6a1035441f9aca8f5666a9b3ef9e70ab20\n"


def test_fires_on_containerd_16_naming_what_is_lost(tmp_path):
    (f,) = fired(facts_from({"main.txt": MAIN, "dropin.txt": DROP_IN, "version.txt": V16}, tmp_path), "RT007")
    assert f.role.value == "root-cause" and f.confidence >= 0.8
    assert {"sandbox_image", "containerd.runtimes.runc.options.SystemdCgroup", "registry.config_path"} <= set(f.facts["lost"])
    cited = [e.cite() for e in f.evidence]
    assert cited[0] == "main.txt:3" and "main.txt:6" in cited and "main.txt:12" in cited and "version.txt:2" in cited


def test_warns_with_low_confidence_when_version_unknown(tmp_path):
    (f,) = fired(facts_from({"main.txt": MAIN, "dropin.txt": DROP_IN}, tmp_path), "RT007")
    assert f.role.value == "contributing" and f.confidence == 0.5 and "not in the artifacts" in f.explanation


def test_silent_on_containerd_2_or_when_the_drop_in_repeats_everything(tmp_path):
    assert fired(facts_from({"main.txt": MAIN, "dropin.txt": DROP_IN, "version.txt": V20}, tmp_path / "a"), "RT007") == []
    complete = MAIN.replace("cat /etc/containerd/config.toml", "cat /etc/containerd/conf.d/99-nvidia.toml").replace(
        'imports = ["/etc/containerd/conf.d/*.toml"]\n', "") + DROP_IN.split("version = 2\n", 1)[1]
    assert fired(facts_from({"main.txt": MAIN, "dropin.txt": complete, "version.txt": V16}, tmp_path / "b"), "RT007") == []
