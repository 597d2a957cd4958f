"""FW103 gpu-firmware-boot-timeout: GFW/VBIOS boot never completed."""

from failure_fixtures import cites, facts_from, run

DMESG = """\
$ dmesg -T | grep NVRM
[Fri Mar  6 08:01:12 2026] NVRM: GPU0 gpuWaitForGfwBootComplete_TU102: GSP failed to halt with GFW_BOOT: (progress 0xff)
[Fri Mar  6 08:01:12 2026] NVRM: GPU0 kgspWaitForGfwBootOk_TU102: failed to wait for GFW boot complete: 0x55 VBIOS version 94.02.5C.00.02
[Fri Mar  6 08:01:12 2026] NVRM: GPU0 kgspWaitForGfwBootOk_TU102: (the GPU may be in a bad state and may need to be reset)
[Fri Mar  6 08:01:12 2026] NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x62:0x55:2028)
"""


def test_gfw_boot_timeout_asks_for_a_power_cycle():
    [f] = run("FW103", facts_from({"dmesg.txt": DMESG}))
    assert cites(f) == ["dmesg.txt:2", "dmesg.txt:3"] and "power-cycle" in f.fixes[0].description


def test_silent_without_gfw_lines():
    assert run("FW103", facts_from({"dmesg.txt": DMESG.splitlines()[0] + "\n" + DMESG.splitlines()[4] + "\n"})) == []
