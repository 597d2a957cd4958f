"""FW101 inforom-corrupted: nvidia-smi's infoROM warning, in pasted nvidia-smi output and in a validator log."""

from failure_fixtures import cites, facts_from, run

SMI = """\
$ nvidia-smi
WARNING: infoROM is corrupted at gpu 0000:0B:00.0
Thu Nov 25 10:11:12 2021
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  Tesla P100-PCIE...  On   | 00000000:0B:00.0 Off |                    0 |
| N/A   42C    P0    29W / 250W |      0MiB / 16280MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
"""
VALIDATOR = """\
$ kubectl logs -n gpu-operator nvidia-operator-validator-4xk8q -c driver-validation
running command chroot with args [/run/nvidia/driver nvidia-smi]
WARNING: infoROM is corrupted at gpu 0000:0B:00.0
command failed, retrying after 5 seconds
"""


def test_warning_in_pasted_nvidia_smi():
    [f] = run("FW101", facts_from({"smi.txt": SMI}))
    assert cites(f) == ["smi.txt:2"] and f.title.startswith("infoROM corrupted on GPU 0000:0b:00")


def test_warning_in_the_validator_log():
    [f] = run("FW101", facts_from({"validator.log": VALIDATOR}))
    assert cites(f) == ["validator.log:3"] and f.layer.value == "firmware"


def test_silent_without_the_warning():
    assert run("FW101", facts_from({"smi.txt": SMI.replace("WARNING: infoROM is corrupted at gpu 0000:0B:00.0\n", "")})) == []
