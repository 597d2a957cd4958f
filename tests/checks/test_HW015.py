"""HW015 power-slowdown: a power brake is a warning, the software power cap a note with the numbers."""

from gpu_case import gpu_xml, run, smi_xml


def test_power_brake_is_a_warning():
    (f,) = run("HW015", {"smi.xml": smi_xml(gpu_xml(0, reasons=("hw_slowdown", "hw_power_brake_slowdown"), power="250.10 W", util=100))})
    assert f.severity.value == "warning" and f.facts["reasons"] == ["hw_slowdown", "hw_power_brake_slowdown"]


def test_sw_power_cap_is_info():
    (f,) = run("HW015", {"smi.xml": smi_xml(gpu_xml(0, reasons=("sw_power_cap",), power="698.77 W", util=100))})
    assert f.severity.value == "info" and "699 W of 700 W" in f.title


def test_idle_is_silent():
    assert run("HW015", {"smi.xml": smi_xml(gpu_xml(0))}) == []
