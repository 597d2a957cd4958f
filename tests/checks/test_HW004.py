"""HW004 xid-contained-memory-error: Xid 94 means restart the app, drain politely, reset when convenient."""

from gpu_case import dmesg, run

XID94 = dmesg("NVRM: Xid (PCI:0000:5d:00): 94, pid=2231051, name=python3, Contained: SM (0x1). RST: No, D-RST: No")


def test_xid94_reset_when_convenient():
    (f,) = run("HW004", {"dmesg.txt": XID94})
    assert f.severity.value == "error" and "process python3, pid 2231051" in f.explanation
    kinds = {fx.kind.value for fx in f.fixes if "nvidia-smi -r -i 0000:5d:00" in fx.commands}
    assert kinds == {"workaround"}  # when convenient, not immediate


def test_uncontained_is_not_contained():
    assert run("HW004", {"dmesg.txt": dmesg("NVRM: Xid (PCI:0000:5d:00): 95, pid=1, name=x, Uncontained: FBHUB. RST: Yes, D-RST: No")}) == []
