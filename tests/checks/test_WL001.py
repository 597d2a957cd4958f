"""WL001 xid-application-fault: 13/31/43 are the code's fault, restart the workload."""

from gpu_case import dmesg, run

APP = dmesg(
    "NVRM: Xid (PCI:0000:18:00): 13, pid=51822, name=python3, Graphics SM Warp Exception on (GPC 1, TPC 3, SM 0): Out Of Range Address",
    "NVRM: Xid (PCI:0000:18:00): 31, pid=51822, name=python3, Ch 00000008, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f3a_8c000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
)


def test_application_faults_restart_the_workload():
    hits = run("WL001", {"dmesg.txt": APP})
    assert sorted(h.facts["xid"] for h in hits) == [13, 31]
    h13 = next(h for h in hits if h.facts["xid"] == 13)
    assert h13.layer.value == "workload" and "process python3, pid 51822" in h13.explanation
    assert "Restart the workload" in h13.fixes[0].description and not any("cordon" in c for fx in h13.fixes for c in fx.commands)


def test_hardware_xid_is_not_an_application_fault():
    assert run("WL001", {"dmesg.txt": dmesg("NVRM: Xid (PCI:0000:18:00): 48, pid=1, name=x, Ch 00000010")}) == []
