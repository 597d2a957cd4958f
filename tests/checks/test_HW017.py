"""HW017 gpu-missing-from-driver: nvidia-smi reads fewer GPUs than the node has."""

from pathlib import Path

from gpu_case import NODE, dmesg, nodes_table, run

FIX = Path(__file__).parent.parent / "fixtures" / "nvidia_smi"
TABLE = (FIX / "h100_r535_table.txt").read_text()
def _seven() -> str:
    """GPU 5 (0000:AB:00.0) gone: nvidia-smi prints the handle error and a table of seven."""
    lines = TABLE.splitlines()
    start = next(i for i, ln in enumerate(lines) if "00000000:AB:00.0" in ln)
    del lines[start:start + 4]
    return "Unable to determine the device handle for GPU0000:AB:00.0: Unknown Error\n" + "\n".join(lines) + "\n"


def test_seven_of_eight_with_label():
    files = {"nvidia-smi.txt": _seven(), "nodes.txt": nodes_table("nvidia.com/gpu.count=8,nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3")}
    (f,) = run("HW017", files)
    assert f.node == NODE and "7 of 8" in f.title and f.role.value == "root-cause"
    assert "00000000:AB:00.0: Unknown Error" in f.explanation


def test_explained_by_xid79():
    files = {"nvidia-smi.txt": _seven(), "nodes.txt": nodes_table("nvidia.com/gpu.count=8"),
             "dmesg.txt": dmesg("NVRM: Xid (PCI:0000:ab:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")}
    (f,) = run("HW017", files)
    assert f.role.value == "symptom" and f.caused_by == ("HW001",)


def test_all_eight_present():
    assert run("HW017", {"nvidia-smi.txt": TABLE, "nodes.txt": nodes_table("nvidia.com/gpu.count=8")}) == []
