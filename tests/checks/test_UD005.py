"""UD005 nvml-cannot-reach-driver: no driver, no devices, or nouveau holding the GPU."""

from gpu_case import run


def test_driver_not_loaded():
    (f,) = run("UD005", {"nvidia-smi.txt": "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"})
    assert f.title.startswith("The NVIDIA driver is not loaded") and f.layer.value == "userspace-driver"


def test_nouveau_moves_it_to_the_kernel_driver():
    dmesg = ("[    3.912233] nouveau 0000:18:00.0: NVIDIA GH100 (180000a1)\n"
             "[    3.915104] nouveau 0000:18:00.0: bios: version 96.00.89.00.01\n")
    (f,) = run("UD005", {"dmesg.txt": dmesg})
    assert f.layer.value == "kernel-driver" and "nouveau" in f.title
    assert any("blacklist nouveau" in c for fx in f.fixes for c in fx.commands)


def test_working_driver():
    assert run("UD005", {"dmesg.txt": "[    9.8] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05\n"}) == []


def test_the_nodes_module_listing_says_whether_nvidia_is_loaded():
    smi = "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"
    lsmod = "$ lsmod\nModule                  Size  Used by\ndrm_kms_helper        311296  0\n"
    (f,) = run("UD005", {"nvidia-smi.txt": smi, "lsmod.txt": lsmod})
    assert "confirms that no nvidia module is loaded" in f.explanation and "lsmod.txt:1" in [e.cite() for e in f.evidence]
    (f,) = run("UD005", {"nvidia-smi.txt": smi, "lsmod.txt": lsmod + "nvidia              56717312  0\n"})
    assert "lists the nvidia module" in f.explanation and "lsmod.txt:4" in [e.cite() for e in f.evidence]
