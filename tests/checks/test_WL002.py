"""WL002 gpu-util-overstates-work: GPU_UTIL 96% with 8% tensor activity is memory-bound, with the numbers."""

from pathlib import Path

from gpu_case import run

SCRAPE = (Path(__file__).parent.parent / "fixtures" / "dcgm" / "h100_scrape.txt").read_text()


def test_memory_bound_with_numbers():
    (f,) = run("WL002", {"metrics.txt": SCRAPE})
    assert "GPU_UTIL 96%, tensor pipes 8%, DRAM 73%: memory-bound" in f.title
    assert f.facts["pod"] == "llama-ft-0" and f.node == "gpu-node-07"
    assert [e.text.split("{")[0] for e in f.evidence] == ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE"]


def test_busy_tensor_cores_are_fine():
    busy = SCRAPE.replace('pod="llama-ft-0"} 0.081527', 'pod="llama-ft-0"} 0.623001')
    assert run("WL002", {"metrics.txt": busy}) == []
