"""DP151 gpu-sharing-isolation: what time-slicing / MPS give, and MIG as the alternative on MIG GPUs."""

from gpu_case import healthy_node, run

TS = "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 10\n"


def test_time_slicing_isolation_note():
    (f,) = run("DP151", {"plugin.yaml": TS, "smi.xml": healthy_node(2)})
    assert f.severity.value == "info" and "memory isolation none, fault isolation none" in f.title
    assert "H100-80GB" in f.explanation and "hardware" in f.explanation


def test_mps_and_no_sharing():
    (f,) = run("DP151", {"plugin.yaml": TS.replace("timeSlicing", "mps")})
    assert "soft caps" in f.title
    assert run("DP151", {"plugin.yaml": "version: v1\nflags:\n  migStrategy: single\n"}) == []


def test_gpus_without_mig_get_mps_as_the_step_up():
    from gpu_case import gpu_xml, smi_xml

    (f,) = run("DP151", {"plugin.yaml": TS, "smi.xml": smi_xml(gpu_xml(0, name="NVIDIA L4", total=23034))})
    assert "cannot do MIG" in f.explanation and "mps: memory isolation soft caps" in f.explanation
