"""HW019 nvswitch-fabric-not-ready: fabric state must be Completed / Success on NVSwitch systems."""

from gpu_case import gpu_xml, run, smi_xml


def test_fabric_in_progress():
    (f,) = run("HW019", {"smi.xml": smi_xml(gpu_xml(0, fabric=("In Progress", "N/A")), gpu_xml(1, fabric=("In Progress", "N/A")))})
    assert "2 GPU(s)" in f.title and "802" in f.explanation
    assert "systemctl status nvidia-fabricmanager" in f.fixes[0].commands


def test_completed_or_not_applicable():
    assert run("HW019", {"smi.xml": smi_xml(gpu_xml(0), gpu_xml(1, fabric=None))}) == []
