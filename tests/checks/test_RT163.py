"""RT163 runtimeclass-handler-not-in-runtime-table: RuntimeClass handler vs containerd's runtimes vs the toolkit."""

from gpu_case import run

RC = """\
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: nvidia
handler: nvidia
"""

# the runtime table nvidia-ctk writes with --nvidia-runtime-name (here: nvidia-container-runtime)
CONFIG = """\
$ cat /etc/containerd/config.toml
version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "runc"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-container-runtime]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-container-runtime.options]
      BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
"""


def test_handler_named_otherwise_in_the_runtime_table():
    (f,) = run("RT163", {"rc.yaml": RC, "config.toml": CONFIG})
    assert f.facts["handler"] == "nvidia" and "nvidia-container-runtime" in f.facts["containerd_runtimes"]
    assert "handler: nvidia-container-runtime" in f.fixes[0].snippet
    assert {e.artifact for e in f.evidence} == {"rc.yaml", "config.toml"}


def test_matching_names_are_silent():
    ok = CONFIG.replace("runtimes.nvidia-container-runtime", "runtimes.nvidia")
    assert run("RT163", {"rc.yaml": RC, "config.toml": ok}) == []


def test_toolkit_writes_another_runtime_name():
    values = ("$ helm get values gpu-operator -n gpu-operator\nUSER-SUPPLIED VALUES:\ntoolkit:\n  env:\n"
              "  - name: CONTAINERD_RUNTIME_CLASS\n    value: nvidia-cr\n  - name: CONTAINERD_CONFIG\n    value: /etc/containerd/config.toml\n")
    (f,) = run("RT163", {"rc.yaml": RC, "values.txt": values})
    assert f.facts["toolkit_runtime_class"] == "nvidia-cr" and "the toolkit writes its runtime as 'nvidia-cr'" in f.explanation
    assert "values.txt" in {e.artifact for e in f.evidence}
