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
