"""HW005 row-remapping-trend: one 63 is a note, repeated 63s a warning, 64 an error, persistent 64 RMA."""

from gpu_case import dmesg, gpu_xml, run, smi_xml

LINE63 = "NVRM: Xid (PCI:0000:3a:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x00000000000{n}f1c2) marked for remapping, reset gpu to activate."
LINE64 = "NVRM: Xid (PCI:0000:3a:00): 64, pid='<unknown>', name=<unknown>, Row Remapper: Error in remapping row, bank 0x1f"


def test_single_remap_is_only_watched():
    (f,) = run("HW005", {"dmesg.txt": dmesg(LINE63.format(n=1))})
    assert f.severity.value == "info" and "watch the trend" in f.title


def test_repeated_remaps_trend_up():
    text = "".join(dmesg(LINE63.format(n=k), start=1000.0 + 5000 * k) for k in range(3))
    (f,) = run("HW005", {"dmesg.txt": text})
    assert f.severity.value == "warning" and f.facts["bursts"] == 3


def test_remap_failure_with_flag_is_rma():
    smi = smi_xml(gpu_xml(0), gpu_xml(1), gpu_xml(2, remap=(0, 7, "No", "Yes")))
    (f,) = run("HW005", {"dmesg.txt": dmesg(LINE64), "nvidia-smi.xml": smi})
    assert f.severity.value == "critical" and "RMA" in f.title
    assert any("remapped_row_failure" in e.text for e in f.evidence)


def test_no_remap_events():
    assert run("HW005", {"dmesg.txt": dmesg("NVRM: Xid (PCI:0000:3a:00): 13, pid=7, name=python, Graphics Exception")}) == []
