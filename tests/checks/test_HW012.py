"""HW012 row-remap-failure: out of spare rows, RMA."""

from gpu_case import gpu_xml, run, smi_xml


def test_failure_flag_is_rma():
    (f,) = run("HW012", {"smi.xml": smi_xml(gpu_xml(0), gpu_xml(1), gpu_xml(2, remap=(0, 9, "No", "Yes")))})
    assert f.severity.value == "error" and "GPU 2" in f.title
    assert any("RMA candidate now" in fx.description for fx in f.fixes)


def test_remapped_rows_without_failure():
    assert run("HW012", {"smi.xml": smi_xml(gpu_xml(0, remap=(2, 1, "No", "No")))}) == []
