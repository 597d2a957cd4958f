"""FD103 gpu-labels-stale: GFD labels name another driver than nvidia-smi."""

from failure_fixtures import cites, facts_from, node, pod, run

SMI = """\
$ nvidia-smi
Tue Jun 10 09:12:01 2025
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 570.133.20             Driver Version: 570.133.20     CUDA Version: 12.8     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA L40S                    On  |   00000000:3B:00.0 Off |                    0 |
| N/A   31C    P8             33W /  350W |       1MiB /  46068MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
"""
OLD = {"nvidia.com/cuda.driver-version.full": "550.127.05", "nvidia.com/gpu.count": "1"}


def test_driver_label_from_before_the_upgrade():
    n = node("l40s-1", labels=OLD, capacity={"nvidia.com/gpu": "1"})
    gfd = pod("gpu-feature-discovery-kx8s2", node="l40s-1", status="CrashLoopBackOff", ready="0/1", restarts=40)
    [f] = run("FD103", facts_from({"smi.txt": SMI}, n, gfd))
    assert "550.127.05 (running 570.133.20)" in f.title and "CrashLoopBackOff" in f.explanation
    assert cites(f) == ["nodes.txt:4", "smi.txt:4"]


def test_silent_when_labels_match():
    n = node("l40s-1", labels={**OLD, "nvidia.com/cuda.driver-version.full": "570.133.20"}, capacity={"nvidia.com/gpu": "1"})
    assert run("FD103", facts_from({"smi.txt": SMI}, n)) == []
