"""WL003 framebuffer-nearly-full: the OOM early warning, from dcgm-exporter or nvidia-smi."""

from pathlib import Path

from gpu_case import gpu_xml, run, smi_xml

SCRAPE = (Path(__file__).parent.parent / "fixtures" / "dcgm" / "h100_scrape.txt").read_text()


def test_full_framebuffer_from_dcgm():
    (f,) = run("WL003", {"metrics.txt": SCRAPE})
    assert "79794 of 81559 MiB" in f.title and f.severity.value == "info"


def test_room_left():
    assert run("WL003", {"smi.xml": smi_xml(gpu_xml(0, used=71230))}) == []
