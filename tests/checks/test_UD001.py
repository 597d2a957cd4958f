"""UD001 nvml-gpu-unreadable: "Unable to determine the device handle ... Unknown Error" / GPU is lost."""

from gpu_case import dmesg, run

LOST = "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU\n"


def test_gpu_lost_is_a_root_cause_without_xid():
    (f,) = run("UD001", {"nvidia-smi.txt": "$ nvidia-smi\n" + LOST})
    assert f.role.value == "root-cause" and "GPU is lost" in f.title and f.evidence[0].line == 2


def test_after_xid79_it_is_a_symptom():
    files = {"nvidia-smi.txt": LOST, "dmesg.txt": dmesg("NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")}
    (f,) = run("UD001", files)
    assert f.role.value == "symptom"


def test_readable_gpus_are_silent():
    assert run("UD001", {"nvidia-smi.txt": "No devices were found\n"}) == []
