"""HW003 xid-uncontained-memory-error: Xid 95 means reset before anything restarts."""

from gpu_case import dmesg, run

XID95 = dmesg("NVRM: Xid (PCI:0000:5d:00): 95, pid=2231051, name=python3, Uncontained: FBHUB. RST: Yes, D-RST: No")


def test_xid95_resets_before_restart():
    (f,) = run("HW003", {"dmesg.txt": XID95})
    assert f.severity.value == "critical"
    reset = next(fx for fx in f.fixes if "nvidia-smi -r -i 0000:5d:00" in fx.commands)
    assert reset.kind.value == "immediate" and "before anything runs on it again" in reset.description


def test_contained_is_not_uncontained():
    assert run("HW003", {"dmesg.txt": dmesg("NVRM: Xid (PCI:0000:5d:00): 94, pid=2231051, name=python3, Contained: SM (0x1). RST: No, D-RST: No")}) == []
