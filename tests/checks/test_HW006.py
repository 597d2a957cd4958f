"""HW006 xid-hardware-other: hardware Xids without a check of their own (NVLink 74 here)."""

from gpu_case import dmesg, run


def test_nvlink_xid():
    text = dmesg("NVRM: Xid (PCI:0000:18:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)")
    (f,) = run("HW006", {"dmesg.txt": text})
    assert f.facts["xid"] == 74 and f.layer.value == "hardware"


def test_application_xid_is_not_hardware():
    assert run("HW006", {"dmesg.txt": dmesg("NVRM: Xid (PCI:0000:18:00): 31, pid=99, name=python, Ch 00000008, intr 10000000. MMU Fault")}) == []
