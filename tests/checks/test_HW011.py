"""HW011 row-remap-pending: reset the GPU to activate the remap."""

from pathlib import Path

from gpu_case import gpu_xml, run, smi_xml

QUERY = (Path(__file__).parent.parent / "fixtures" / "nvidia_smi" / "h100_r550_query.txt").read_text()


def test_pending_remap_in_query_text():
    (f,) = run("HW011", {"nvidia-smi-q.txt": QUERY})
    assert "GPU 1" in f.title and f.severity.value == "warning"
    assert f.evidence[0].text == "Pending                           : Yes"
    assert any(fx.commands == ("nvidia-smi -r -i 1",) for fx in f.fixes)


def test_no_pending():
    assert run("HW011", {"nvidia-smi.xml": smi_xml(gpu_xml(0), gpu_xml(1, remap=(3, 0, "No", "No")))}) == []
