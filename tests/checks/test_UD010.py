"""UD010 driver-branch-end-of-life: relative to the date it is called with (today by default)."""

from datetime import date

from gpu_case import healthy_node, nodes_table, run

from gpusleuth.analysis.diagnose import build_facts
from gpusleuth.checks import get_check
from gpusleuth.facts import GpuInventory

TODAY = date(2026, 11, 21)


def _inventory(files, tmp_path) -> GpuInventory:
    from gpusleuth.sources.loose import read_directory

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return build_facts(read_directory(tmp_path)).get(GpuInventory)


def test_r535_is_past_eol(tmp_path):
    inv = _inventory({"smi.xml": healthy_node(2, driver="535.183.01", cuda="12.2")}, tmp_path)
    (h,) = get_check("UD010")(inventory=inv, today=TODAY)
    assert h.severity.value == "warning" and "past end of life since June 2026" in h.title
    assert h.role.value == "contributing"  # a risk, listed apart from what breaks the node now
    assert h.facts["days_past"] == 144 and h.evidence[0].text == "<driver_version>535.183.01</driver_version>"
    assert "R580 LTS until June 2028" in h.fixes[0].description


def test_near_eol_and_from_gfd_labels(tmp_path):
    labels = "nvidia.com/cuda.driver.major=610,nvidia.com/cuda.driver.minor=43,nvidia.com/cuda.driver.rev=02,nvidia.com/gpu.count=8"
    inv = _inventory({"nodes.txt": nodes_table(labels)}, tmp_path)
    (h,) = get_check("UD010")(inventory=inv, today=date(2026, 6, 1))
    assert h.severity.value == "info" and h.facts["days_left"] == 91 and h.node == "gpu-node-07"


def test_supported_branch_is_silent(tmp_path):
    inv = _inventory({"smi.xml": healthy_node(2, driver="580.95.05")}, tmp_path)
    assert list(get_check("UD010")(inventory=inv, today=TODAY)) == []


def test_default_is_today():
    """Through the engine the check gets no date and uses today's: R450 (EOL 2023) is past it whenever this runs."""
    (f,) = run("UD010", {"smi.xml": healthy_node(1, driver="450.80.02", cuda="11.0")})
    assert f.facts["today"] == date.today().isoformat()


def test_the_date_can_be_pinned_and_a_bad_pin_is_named(monkeypatch):
    from datetime import date

    import pytest

    from gpusleuth.errors import UnusableData
    from gpusleuth.facts import Facts
    from gpusleuth.facts.clock import ENV

    monkeypatch.setenv(ENV, "2026-01-02")
    assert Facts().get(date) == date(2026, 1, 2)
    monkeypatch.setenv(ENV, "next tuesday")
    with pytest.raises(UnusableData, match="GPUSLEUTH_TODAY='next tuesday'"):
        Facts().get(date)


def test_a_stated_driver_version_is_judged_marked_stated():
    from failure_fixtures import facts_from

    from gpusleuth.facts import Prose

    prose = facts_from({"ticket.txt": "GPU node on Ubuntu 20.04.\nThe NVIDIA driver 470.82.01 is installed on the host.\n"}).get(Prose)
    (h,) = get_check("UD010")(prose=prose, today=TODAY)
    assert "470.82.01 (stated)" in h.title and h.facts["stated"] is True
    assert h.evidence[0].line == 2 and "A ticket states driver 470.82.01" in h.explanation
    assert h.confidence < 0.5 and h.fixes[0].commands == ("nvidia-smi --query-gpu=driver_version --format=csv,noheader",)


def test_a_machine_read_version_wins_over_a_stated_one(tmp_path):
    from failure_fixtures import facts_from

    from gpusleuth.facts import Prose

    prose = facts_from({"ticket.txt": "The NVIDIA driver 470.82.01 is installed on the host.\n"}).get(Prose)
    inv = _inventory({"smi.xml": healthy_node(2, driver="580.95.05")}, tmp_path)
    assert list(get_check("UD010")(inventory=inv, prose=prose, today=TODAY)) == []
