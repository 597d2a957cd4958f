"""RT164 crio-runtime-key-not-read: CRI-O runtime handlers against cri-o's RuntimeConfig / RuntimeHandler types."""

from gpu_case import run

# The drop-in `nvidia-ctk runtime configure --runtime=crio` writes (NVIDIA container toolkit install guide,
# "Configuring CRI-O"), with the hooks directory the GPU Operator installs its OCI hook into added to the
# hooks_dir list as in https://github.com/NVIDIA/gpu-operator/issues/172.
VALID = """\
[crio]
  [crio.runtime]
    default_runtime = "nvidia"
    hooks_dir = [
        "/usr/share/containers/oci/hooks.d",
        "/run/containers/oci/hooks.d",
    ]
    [crio.runtime.runtimes]
      [crio.runtime.runtimes.nvidia]
        runtime_path = "/usr/bin/nvidia-container-runtime"
        runtime_type = "oci"
        runtime_root = "/run/nvidia"
"""

# The same hooks directory written inside the runtime handler (the table the surrounding lines are in):
# CRI-O drops it there, so the hook in /run/containers/oci/hooks.d is never found (gpu-operator#172, #280).
MISPLACED = """\
[crio.runtime]
  default_runtime = "nvidia"
[crio.runtime.runtimes.nvidia]
  runtime_path = "/usr/bin/nvidia-container-runtime"
  runtime_type = "oci"
  hooks_dir = ["/run/containers/oci/hooks.d"]
"""


def test_hooks_dir_inside_a_handler_belongs_under_crio_runtime():
    (f,) = run("RT164", {"99-nvidia.conf": MISPLACED})
    (p,) = f.facts["problems"]
    assert p["kind"] == "misplaced-key" and p["path"] == "crio.runtime.runtimes.nvidia.hooks_dir"
    assert p["belongs"] == "crio.runtime.hooks_dir"
    assert "[crio.runtime]\n  hooks_dir = [" in f.fixes[0].snippet
    assert [e.line for e in f.evidence] == [3]
    assert f.severity.value == "warning"


def test_dashed_runtime_path_and_refused_runtime_type():
    text = MISPLACED.replace('  hooks_dir = ["/run/containers/oci/hooks.d"]\n', "").replace("runtime_path", "runtime-path")
    (f,) = run("RT164", {"99-nvidia.conf": text})
    assert [(p["kind"], p["closest"]) for p in f.facts["problems"]] == [("unknown-key", "runtime_path")]
    (g,) = run("RT164", {"99-nvidia.conf": text.replace("runtime-path", "runtime_path").replace('"oci"', '"runc"')})
    assert g.facts["problems"][0]["kind"] == "bad-value" and g.severity.value == "error"


def test_valid_config_is_silent():
    assert run("RT164", {"99-nvidia.conf": VALID}) == []
