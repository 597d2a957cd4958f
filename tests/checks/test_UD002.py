"""UD002 driver-library-version-mismatch: nvidia-smi's NVML error and the kernel's API mismatch."""

from gpu_case import run

MISMATCH = """\
[2140090.470492] NVRM: API mismatch: the client has the version 535.183.06, but
                 NVRM: this kernel module has the version 535.161.08.  Please
                 NVRM: make sure that this kernel module and all NVIDIA driver
                 NVRM: components have the same version.
"""


def test_versions_from_the_kernel_and_nvidia_smi():
    (f,) = run("UD002", {"dmesg.txt": MISMATCH, "nvidia-smi.txt": "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.183\n"})
    assert f.facts == {"client": "535.183.06", "kernel": "535.161.08"}
    assert "libraries 535.183.06, kernel module 535.161.08" in f.title
    assert {e.artifact for e in f.evidence} == {"dmesg.txt", "nvidia-smi.txt"}


def test_matching_versions():
    assert run("UD002", {"dmesg.txt": "[    9.854868] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\n"}) == []


def test_the_module_the_kernel_runs_against_the_driver_installed_on_disk():
    host = ("$ cat /proc/driver/nvidia/version\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  535.161.08  Sat Feb 17 22:55:48 UTC 2024\n"
            "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n"
            "$ modinfo nvidia\nfilename:       /lib/modules/5.15.0-94-generic/updates/dkms/nvidia.ko\nversion:        535.183.06\n"
            "vermagic:       5.15.0-94-generic SMP mod_unload modversions\n")
    (f,) = run("UD002", {"host.txt": host})
    assert "the kernel runs 535.161.08, the installed driver is 535.183.06" in f.title
    assert f.facts == {"loaded": "535.161.08", "installed": "535.183.06"}
    assert [e.cite() for e in f.evidence] == ["host.txt:2", "host.txt:6"] and f.confidence == 0.8
    (both,) = run("UD002", {"host.txt": host, "dmesg.txt": MISMATCH})
    assert both.facts["client"] == "535.183.06" and both.facts["installed"] == "535.183.06" and both.confidence == 0.9


def test_same_version_loaded_and_installed():
    same = ("$ cat /proc/driver/nvidia/version\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.06  Sat Feb 17 22:55:48 UTC 2024\n"
            "$ modinfo nvidia\nfilename:       /lib/modules/5.15.0-94-generic/updates/dkms/nvidia.ko\nversion:        535.183.06\n")
    assert run("UD002", {"host.txt": same}) == []
