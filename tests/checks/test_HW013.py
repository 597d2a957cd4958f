"""HW013 retired-pages-pending: Volta-era page retirement waiting for a reset."""

from pathlib import Path

from gpu_case import run

FIX = Path(__file__).parent.parent / "fixtures" / "nvidia_smi"


def test_v100_pending_retirement():
    (f,) = run("HW013", {"q.txt": (FIX / "v100_r470_query.txt").read_text()})
    assert "page retirement pending" in f.title and f.facts["retired_dbe"] == 1


def test_h100_has_no_page_retirement():
    assert run("HW013", {"q.txt": (FIX / "h100_r550_query.txt").read_text()}) == []
