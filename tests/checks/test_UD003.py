"""UD003 nvml-field-errors: ERR! in the table; several at once is a bad GPU, one is often transient."""

from pathlib import Path

from gpu_case import run

FIX = Path(__file__).parent.parent / "fixtures" / "nvidia_smi"


def test_err_fields():
    (f,) = run("UD003", {"nvidia-smi.txt": (FIX / "a100_r570_err_table.txt").read_text()})
    assert "GPU 1" in f.title and f.severity.value == "warning"
    assert set(f.facts["fields"]) >= {"temperature", "power", "fan"}


def test_clean_table():
    assert run("UD003", {"nvidia-smi.txt": (FIX / "h100_r535_table.txt").read_text()}) == []
