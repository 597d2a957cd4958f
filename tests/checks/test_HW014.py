"""HW014 thermal-slowdown: decoded reasons and the GPU's own thresholds."""

from pathlib import Path

from gpu_case import gpu_xml, run, smi_xml

FIX = Path(__file__).parent.parent / "fixtures" / "nvidia_smi"


def test_thermal_reasons_active_with_numbers():
    (f,) = run("HW014", {"smi.xml": smi_xml(gpu_xml(0), gpu_xml(1, reasons=("hw_slowdown", "hw_thermal_slowdown"), temp=88, util=100))})
    assert "88 C" in f.title and f.facts["slowdown_c"] == 89
    assert f.evidence[0].text == "<clocks_event_reason_hw_thermal_slowdown>Active</clocks_event_reason_hw_thermal_slowdown>"


def test_r470_throttle_names_and_dcgm_mask():
    (f,) = run("HW014", {"q.txt": (FIX / "v100_r470_query.txt").read_text()})
    assert f.facts["reasons"] == ["hw_thermal_slowdown"]
    (d,) = run("HW014", {"scrape.txt": (FIX.parent / "dcgm" / "h100_scrape.txt").read_text()})
    assert d.facts["reasons"] == ["sw_thermal_slowdown", "hw_thermal_slowdown"]  # mask 96 decoded


def test_cool_gpu_is_silent():
    assert run("HW014", {"smi.xml": smi_xml(gpu_xml(0, temp=61, reasons=()))}) == []
