"""RT161 cdi-spec-field-not-read: CDI specs against the specification's Go types and their cdiVersion."""

from gpu_case import run

# the shape nvidia-ctk writes (see parsers/cdi.py); valid at cdiVersion 0.5.0
GOOD = """\
cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: "0"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
containerEdits:
  mounts:
  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
    options: [ro, nosuid, nodev, bind]
  hooks:
  - hookName: createContainer
    path: /usr/bin/nvidia-cdi-hook
"""


def test_misplaced_field_and_field_newer_than_cdiversion():
    bad = GOOD.replace("cdiVersion: 0.5.0", "cdiVersion: 0.3.0").replace(
        "    - path: /dev/nvidia0\n", "    - path: /dev/nvidia0\n      hostPath: /dev/nvidia0\n    mounts: []\n    hookName: x\n")
    (f,) = run("RT161", {"nvidia.yaml": bad})
    got = {p["path"]: p for p in f.facts["problems"]}
    assert got["devices[0].containerEdits.deviceNodes[0].hostPath"]["kind"] == "not-yet"
    assert got["devices[0].containerEdits.hookName"]["belongs"] == "devices[].containerEdits.hooks[].hookName"
    assert f.severity.value == "error" and 8 in {e.line for e in f.evidence}


def test_valid_spec_is_silent():
    assert run("RT161", {"nvidia.yaml": GOOD}) == []


# https://github.com/NVIDIA/nvidia-container-runtime/issues/85: a spec nvidia-ctk generated on a DGX-A100 (cdiVersion
# 0.4.0, mounts cut to two)
ISSUE_85 = """\
cdiVersion: 0.4.0
kind: nvidia.com/gpu
containerEdits:
  hooks:
  - hookName: createContainer
    path: /usr/bin/nvidia-ctk
    args:
    - /usr/bin/nvidia-ctk
    - hook
    - update-ldcache
    - --folder
    - /usr/lib/x86_64-linux-gnu
  deviceNodes:
  - path: /dev/nvidia-modeset
  - path: /dev/nvidiactl
  - path: /dev/nvidia-uvm
  - path: /dev/nvidia-uvm-tools
  mounts:
  - containerPath: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.460.91.03
    hostPath: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.460.91.03
    options:
    - ro
    - nosuid
    - nodev
    - bind
  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.460.91.03
    hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.460.91.03
    options:
    - ro
    - nosuid
    - nodev
    - bind
devices:
- name: gpu0
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
"""


def test_real_generated_spec_is_silent():
    assert run("RT161", {"nvidia.yaml": ISSUE_85}) == []
    # the same spec declaring an older cdiVersion than a deviceNodes hostPath needs
    older = ISSUE_85.replace("    - path: /dev/nvidia0\n", "    - path: /dev/nvidia0\n      hostPath: /dev/nvidia0\n")
    (f,) = run("RT161", {"nvidia.yaml": older})
    assert f.facts["problems"][0]["kind"] == "not-yet" and "0.5.0" in f.title
