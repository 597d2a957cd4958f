"""Golden: example:device-plugin-unregistered (seed 004's opening incident)."""

import pytest
from golden import disguised, report

NAME = "device-plugin-unregistered"


@pytest.fixture(scope="module")
def rep():
    return report(f"example:{NAME}")


def test_first_root_cause_is_the_device_plugin_with_both_sides_cited(rep):
    root = rep["root_causes"][0]
    assert root["layer"] == "device-plugin" and root["code"] == "DP001"
    texts = [e["text"] for e in root["evidence"]]
    assert any("nvidia.com/gpu" in t and t.rstrip().endswith("0") for t in texts), texts  # allocatable 0
    assert any("H100" in t or "NVIDIA-SMI" in t for t in texts), texts  # what nvidia-smi sees
    assert root["facts"]["gpus_seen"] == 8 and root["facts"]["advertised"] in (0, None)
    assert all(isinstance(e["line"], int) for e in root["evidence"] if "nvidia.com/gpu" in e["text"])


def test_pending_gpu_pods_are_symptoms_of_it(rep):
    pending = [f for f in rep["findings"] if f["code"] == "SC001"]
    assert all(f["role"] == "symptom" and "DP001" in f["caused_by"] for f in pending)


def test_same_diagnosis_from_renamed_artifacts(tmp_path):
    rep = report(str(disguised(NAME, tmp_path)))
    assert (rep["root_causes"][0]["code"], rep["root_causes"][0]["layer"]) == ("DP001", "device-plugin")
