"""TK101 cdi-spec-stale: the CDI spec mounts libraries of a driver the node no longer runs."""

from failure_fixtures import cites, facts_from, run

SPEC = """\
$ cat /etc/cdi/nvidia.yaml
cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: "0"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
- name: all
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
containerEdits:
  deviceNodes:
  - path: /dev/nvidiactl
  - path: /dev/nvidia-uvm
  hooks:
  - hookName: createContainer
    path: /usr/bin/nvidia-cdi-hook
    args: [nvidia-cdi-hook, update-ldcache, --folder, /usr/lib/x86_64-linux-gnu]
  mounts:
  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.129.03
    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.129.03
    options: [ro, nosuid, nodev, bind]
  - hostPath: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.129.03
    containerPath: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.129.03
    options: [ro, nosuid, nodev, bind]
"""
DMESG = "$ dmesg | grep NVRM\n[   12.33] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"


def test_spec_for_535_on_a_550_node():
    [f] = run("TK101", facts_from({"cdi.yaml": SPEC, "dmesg.txt": DMESG}))
    assert f.facts["spec"] == "/etc/cdi/nvidia.yaml" and f.facts["spec_driver"] == ["535.129.03"]
    assert cites(f) == ["cdi.yaml:22", "cdi.yaml:25", "dmesg.txt:2"]


def test_silent_when_the_spec_matches_the_driver():
    assert run("TK101", facts_from({"cdi.yaml": SPEC, "dmesg.txt": DMESG.replace("550.54.15", "535.129.03")})) == []
