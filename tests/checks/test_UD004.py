"""UD004 nvml-access-limited: Not Supported (consumer GPU) and Insufficient Permissions are notes, not crashes."""

from gpu_case import run


def test_permission_denied_is_a_note():
    (f,) = run("UD004", {"nvidia-smi.txt": "$ nvidia-smi\nFailed to initialize NVML: Insufficient Permissions\n"})
    assert f.severity.value == "info" and "incomplete" in f.title


def test_not_supported_fields():
    xml = ('<?xml version="1.0" ?>\n<nvidia_smi_log>\n<driver_version>580.95.05</driver_version>\n<gpu id="00000000:01:00.0">\n'
           "<product_name>NVIDIA GeForce RTX 4090</product_name>\n<gpu_power_readings>\n<power_draw>[Not Supported]</power_draw>\n"
           "</gpu_power_readings>\n</gpu>\n</nvidia_smi_log>\n")
    (f,) = run("UD004", {"smi.xml": xml})
    assert "do not support power" in f.title and f.severity.value == "info"


def test_full_access():
    assert run("UD004", {"nvidia-smi.txt": "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n"}) == []
