"""RT160 containerd-cri-key-not-read: keys of the CRI plugin section against containerd's config structs."""

from pathlib import Path

from gpu_case import run

# https://github.com/NVIDIA/nvidia-docker/issues/1788: the config nvidia-ctk wrote, SystemdCgroup added by hand
# under the runtime's options table (confirmed correct in the thread)
GOOD = """\
version = 2
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".containerd]
      default_runtime_name = "nvidia"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes]
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
          privileged_without_host_devices = false
          runtime_engine = ""
          runtime_root = ""
          runtime_type = "io.containerd.runc.v2"

          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
            BinaryName = "/usr/bin/nvidia-container-runtime"
            SystemdCgroup = true
"""

# the same option one table too high: beside runtime_type instead of under options
MISPLACED = GOOD.replace('          runtime_type = "io.containerd.runc.v2"\n',
                         '          runtime_type = "io.containerd.runc.v2"\n          SystemdCgroup = true\n'
                         ).replace("            SystemdCgroup = true\n", "")

V3 = """\
version = 3
[plugins."io.containerd.cri.v1.runtime"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  enable_cdi = true
  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia.options]
      BinaryName = "/usr/bin/nvidia-container-runtime"
"""


def test_runc_option_beside_the_runtime():
    (f,) = run("RT160", {"config.toml": MISPLACED})
    (p,) = f.facts["problems"]
    assert p == {"kind": "misplaced-key", "path": "containerd.runtimes.nvidia.SystemdCgroup",
                 "belongs": "containerd.runtimes.nvidia.options.SystemdCgroup"}
    assert [e.line for e in f.evidence] == [13]
    assert f.fixes[0].snippet == '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n  SystemdCgroup = true\n'


def test_version_2_key_in_a_version_3_file():
    (f,) = run("RT160", {"config.toml": V3})
    assert f.facts["problems"][0]["path"] == "sandbox_image" and "version 2" in f.title
    assert [e.line for e in f.evidence] == [3]


def test_containerds_documented_config_of_1_7_strands_keys_under_a_subtable():
    # https://github.com/containerd/containerd/blob/v1.7.27/docs/cri/config.md: keys written after the
    # x509_key_pair_streaming table header belong to that table in TOML
    text = (Path(__file__).parent.parent / "fixtures" / "schemas" / "containerd-cri-docs-v1.7.27.toml").read_text()
    (f,) = run("RT160", {"config.toml": text})
    assert "x509_key_pair_streaming" in f.title and "belongs under the top level" in f.title


def test_valid_real_config_is_silent():
    assert run("RT160", {"config.toml": GOOD}) == []
