"""FW001 gsp-firmware-timeout: Xid 119/120 and NVRM GSP timeout lines; not when they follow an Xid 79."""

from gpu_case import dmesg, run

XID119 = dmesg(
    "NVRM: Xid (PCI:0000:9b:00): 119, pid=4071838, name=python, Timeout after 45s of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801702 0x4).",
    "NVRM: Xid (PCI:0000:9b:00): 119, pid=28232, name=cache_mgr_main, Timeout after 45s of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20810108 0x3e0).",
)


def test_xid119_with_gsp_workaround():
    (f,) = run("FW001", {"dmesg.txt": XID119})
    assert f.layer.value == "firmware" and f.facts["occurrences"] == 2
    assert any("NVreg_EnableGpuFirmware=0" in c for fx in f.fixes for c in fx.commands)
    assert any(fx.kind.value == "immediate" and "nvidia-smi -r -i 0000:9b:00" in fx.commands for fx in f.fixes)


def test_gsp_timeout_lines_without_xid():
    text = (
        "[   84.300488] NVRM: GPU6 _kgspLogRpcTimeout: ********************************* GSP Timeout **********************************\n"
        "[   84.300490] NVRM: GPU6 _kgspLogRpcTimeout: Note: Please also check logs above.\n"
    )
    (f,) = run("FW001", {"dmesg.txt": text})
    assert f.facts["lines"] == 2


def test_after_fallen_off_the_bus_it_is_a_follow_on():
    text = dmesg("NVRM: Xid (PCI:0000:9b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.") + XID119
    assert run("FW001", {"dmesg.txt": text}) == []
