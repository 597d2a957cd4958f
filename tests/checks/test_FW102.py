"""FW102 gsp-firmware-init-failed: the driver cannot boot the GPU's GSP firmware."""

from failure_fixtures import cites, facts_from, run

DMESG = """\
$ sudo dmesg | tail -6
[  217.545140] NVRM nvAssertFailedNoLog: Assertion failed: status == NV_OK @ kernel_gsp_ga102.c:235
[  217.545142] NVRM kgspInitRm_IMPL: cannot bootstrap riscv/gsp: 0xffff
[  217.545145] NVRM RmInitAdapter: Cannot initialize GSP firmware RM
[  217.545832] NVRM: GPU 0000:05:00.0: RmInitAdapter failed! (0x62:0xffff:1622)
[  217.546288] NVRM: GPU 0000:05:00.0: rm_init_adapter failed, device minor number 0
"""


def test_gsp_bootstrap_failure():
    [f] = run("FW102", facts_from({"dmesg.txt": DMESG}))
    assert cites(f) == ["dmesg.txt:3", "dmesg.txt:4"]


def test_silent_on_a_normal_gsp_boot():
    ok = "$ dmesg\n[   10.1] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.54.15\n[   11.2] nvidia-modeset: Loading NVIDIA UNIX Open Kernel Mode Setting Driver\n"
    assert run("FW102", facts_from({"dmesg.txt": ok})) == []
