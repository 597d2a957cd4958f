"""OP150 mig-parted-config-invalid: profiles per model, max instances, slice sums, no 5g/6g, structure."""

from gpu_case import NODE, nodes_table, run

CM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: custom-mig-config
  namespace: gpu-operator
data:
  config.yaml: |
    version: v1
    mig-configs:
      all-disabled:
        - devices: all
          mig-enabled: false
      three-40:
        - devices: all
          mig-enabled: true
          mig-devices:
            "3g.40gb": 3
      balanced:
        - devices: all
          mig-enabled: true
          mig-devices:
            "1g.10gb": 2
            "2g.20gb": 1
            "3g.40gb": 1
"""
LABELS = "nvidia.com/gpu.count=8,nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3,nvidia.com/mig.config={},nvidia.com/mig.config.state=failed"


def test_three_40gb_on_h100_is_impossible():
    (f,) = run("OP150", {"mig.yaml": CM, "nodes.txt": nodes_table(LABELS.format("three-40"))})
    assert f.severity.value == "error" and f.node == NODE
    assert "3 x 3g.40gb on H100-80GB: at most 2 fit on one GPU" in f.title
    assert f.evidence[0].artifact == "mig.yaml" and f.evidence[0].line == 7 and "mig-devices" in f.evidence[0].text


def test_profile_of_another_model_and_no_5g():
    file = ("version: v1\nmig-configs:\n  custom:\n    - devices: [0, 1]\n      mig-enabled: true\n      mig-devices:\n"
            "        \"1g.18gb\": 2\n        \"5g.50gb\": 1\n")
    (f,) = run("OP150", {"config.yaml": file, "nodes.txt": nodes_table(LABELS.format("custom"))})
    problems = " | ".join(f.facts["problems"])
    assert "'1g.18gb' does not exist on H100-80GB" in problems and "no 5g or 6g profile" in problems
    assert any(e.artifact == "config.yaml" and e.line == 8 for e in f.evidence)


def test_structure_errors_warn_when_unused():
    file = 'version: v1\nmig-configs:\n  x:\n    - devices: all\n      mig-enabled: "true"\n      migDevices:\n        "1g.10gb": 7\n'
    (f,) = run("OP150", {"config.yaml": file})
    assert f.severity.value == "warning"
    assert any("unknown key 'migDevices'" in p for p in f.facts["problems"]) and any("mig-enabled must be true or false" in p for p in f.facts["problems"])


def test_valid_geometries_are_silent():
    assert run("OP150", {"mig.yaml": CM.replace('"3g.40gb": 3', '"3g.40gb": 2'), "nodes.txt": nodes_table(LABELS.format("balanced"))}) == []


def test_a_single_gpu_index_instead_of_a_list():
    # https://github.com/NVIDIA/mig-parted/issues/44: `devices: 7` for GPU 7; mig-parted refuses it ("invalid string
    # input for 'devices': 7") and the maintainer's answer is a list, `devices: [7]`
    cfg = "version: v1\nmig-configs:\n  all-1g.5gb:\n  - devices: 7\n    mig-enabled: true\n    mig-devices:\n      1g.5gb: 7\n"
    (f,) = run("OP150", {"mig-config.yaml": cfg})
    assert f.facts["problems"] == ["all-1g.5gb[0]: devices must be 'all' or a list of GPU indices, not 7"]
    assert [e.line for e in f.evidence] == [4]
    assert run("OP150", {"mig-config.yaml": cfg.replace("devices: 7", "devices: [7]")}) == []
