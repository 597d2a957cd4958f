"""HW002 xid-double-bit-ecc: Xid 48 with its 94/63 follow-ons attributed to it."""

from gpu_case import dmesg, run

BURST = dmesg(
    "NVRM: Xid (PCI:0000:2a:00): 48, pid=40213, name=python, Ch 00000010, errorString CTX SWITCH TIMEOUT, Info 0x2c014",
    "NVRM: Xid (PCI:0000:2a:00): 94, pid=40213, name=python, Contained: SM (0x1). RST: No, D-RST: No",
    "NVRM: Xid (PCI:0000:2a:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x0000000000a3f1c2) marked for remapping, reset gpu to activate.",
)


def test_xid48_owns_its_burst():
    (f,) = run("HW002", {"kern.log": BURST})
    assert f.severity.value == "critical" and f.facts["follow_on_xids"] == [63, 94]
    assert any("nvidia-smi -r -i 0000:2a:00" in c for fx in f.fixes for c in fx.commands)
    assert run("HW004", {"kern.log": BURST}) == []  # the 94 is a follow-on of the 48, not a finding of its own
    assert run("HW005", {"kern.log": BURST}) == []


def test_no_dbe_no_finding():
    assert run("HW002", {"kern.log": dmesg("NVRM: Xid (PCI:0000:2a:00): 13, pid=51822, name=python3, Graphics Exception: ESR 0x504224=0x80000")}) == []
