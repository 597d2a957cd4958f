"""DP161 device-plugin-helm-value-not-read: nvidia-device-plugin chart values against the chart's values.yaml."""

from gpu_case import run

HEADER = "$ helm get values nvdp -n nvidia-device-plugin\nUSER-SUPPLIED VALUES:\n"

# https://github.com/NVIDIA/k8s-device-plugin/issues/990 (answer: the chart's key for an existing ConfigMap is
# config.name); values.yaml of the chart at v0.17.0 keeps name/default/map/fallbackStrategies under config
GOOD = HEADER + """\
config:
  name: time-slicing-config
  default: any
gfd:
  enabled: true
migStrategy: mixed
"""


def test_misplaced_and_misspelt_chart_values():
    bad = HEADER + """\
config:
  name: time-slicing-config
  defualt: any
devicePlugin:
  migStrategy: mixed
gfd:
  enabled: true
"""
    (f,) = run("DP161", {"values.txt": bad})
    got = {p["path"]: p for p in f.facts["problems"]}
    assert got["config.defualt"]["kind"] == "unknown-key" and "did you mean `default`" in f.explanation
    assert got["devicePlugin.migStrategy"]["kind"] == "misplaced-key" and got["devicePlugin.migStrategy"]["belongs"] == "migStrategy"
    assert sorted(e.line for e in f.evidence) == [5, 7]


def test_valid_values_are_silent():
    assert run("DP161", {"values.txt": GOOD}) == []
