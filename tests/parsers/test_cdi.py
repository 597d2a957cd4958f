"""CDI specs as nvidia-ctk writes them: YAML with hostPaths, one-line JSON, broken files."""

import pytest
from conftest import doc_from_text

from gpusleuth.analysis.engine import sniff
from gpusleuth.errors import UnusableData
from gpusleuth.parsers import cdi

YAML = """\
root@gpu-node-2:~# cat /var/run/cdi/nvidia-container-toolkit.yaml
---
cdiVersion: 0.5.0
containerEdits:
  deviceNodes:
  - path: /dev/nvidia-modeset
  - path: /dev/nvidiactl
  hooks:
  - args:
    - nvidia-cdi-hook
    - create-symlinks
    - --link
    - libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so
    hookName: createContainer
    path: /usr/bin/nvidia-cdi-hook
  mounts:
  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
    hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
    options:
    - ro
    - nosuid
    - nodev
    - bind
devices:
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: "0"
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: GPU-b1028956-cfa2-0990-bf4a-5da9abb51763
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: all
kind: nvidia.com/gpu
"""
JSON = ('{"cdiVersion":"0.6.0","kind":"nvidia.com/gpu","devices":[{"name":"all","containerEdits":{"deviceNodes":[{"path":"/dev/nvidia0"}]}}],'
        '"containerEdits":{"mounts":[{"hostPath":"/usr/lib64/libnvidia-ml.so.570.86.15","containerPath":"/usr/lib64/libnvidia-ml.so.570.86.15","options":["ro","nosuid","nodev","bind"]}]}}')


def test_yaml_spec_devices_paths_and_lines():
    doc = doc_from_text(YAML, "cdi.txt")
    assert sniff(doc)[1] is cdi.parse
    [spec] = cdi.parse.parse(doc)
    assert spec.path == "/var/run/cdi/nvidia-container-toolkit.yaml" and spec.kind == "nvidia.com/gpu" and spec.cdi_version == "0.5.0"
    assert spec.devices == ("0", "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763", "all")
    assert [(p, e.line) for p, e in spec.host_paths] == [("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15", 18)]
    assert ("/dev/nvidia0", 27) in [(p, e.line) for p, e in spec.device_nodes]


def test_one_line_json():
    doc = doc_from_text(JSON, "nvidia.json")
    assert sniff(doc)[1] is cdi.parse
    [spec] = cdi.parse.parse(doc)
    assert spec.devices == ("all",) and spec.host_paths[0][0] == "/usr/lib64/libnvidia-ml.so.570.86.15" and spec.host_paths[0][1].line == 1


def test_broken_spec_is_a_one_line_message():
    doc = doc_from_text("cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\n  containerEdits: {\n", "cdi.yaml")
    with pytest.raises(UnusableData, match="not valid YAML/JSON"):
        list(cdi.parse.parse(doc))


def test_not_claimed_for_other_yaml():
    doc = doc_from_text("driver:\n  enabled: true\ncdi:\n  enabled: true\n", "values.yaml")
    assert cdi.sniff(doc) == 0
