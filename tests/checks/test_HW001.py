"""HW001 gpu-fallen-off-the-bus: Xid 79 (and the NVRM paragraph without an Xid), follow-ons, the ladder."""

from gpu_case import NODE, dmesg, healthy_node, nodes_table, run

XID79 = dmesg(
    "NVRM: GPU at PCI:0000:9a:00: GPU-00000004-1a3d-4c5e-9f8a-0b1c2d3e4f54",
    "NVRM: GPU Board Serial Number: 1654123045683",
    "NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "NVRM: GPU 0000:9a:00.0: GPU has fallen off the bus.",
    "NVRM: Xid (PCI:0000:9a:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)",
    "NVRM: Xid (PCI:0000:9a:00): 119, pid=4071838, name=python, Timeout after 45s of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801702 0x4).",
)


def test_xid79_with_follow_ons_and_node_name():
    (f,) = run("HW001", {"dmesg.txt": XID79, "nvidia-smi.xml": healthy_node(), "nodes.txt": nodes_table("nvidia.com/gpu.count=8")})
    assert f.severity.value == "critical" and f.node == NODE and "GPU 4" in f.title
    assert f.evidence[0].line == 3 and "79, pid='<unknown>'" in f.evidence[0].text
    assert f.facts["follow_on_xids"] == [119, 154]
    cmds = [c for fx in f.fixes for c in fx.commands]
    assert f"kubectl cordon {NODE}" in cmds and "systemctl reboot" in cmds and "dcgmi diag -r 3" in cmds
    assert any("If it recurs" in fx.description for fx in f.fixes)  # one burst: RMA only if the slot does it again


def test_same_slot_twice_is_an_rma_candidate():
    again = XID79 + dmesg("NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", start=90210.5)
    (f,) = run("HW001", {"dmesg.txt": again})
    assert f.facts["bursts"] == 2 and any("RMA candidate now" in fx.description for fx in f.fixes)
    assert "<node>" in f.fixes[1].commands[0]  # no node name anywhere: the description says so
    assert "not in the artifacts" in f.fixes[1].description


def test_multiline_paragraph_without_xid():
    text = (
        "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
        "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
        "               NVRM: fallen off the bus and is not responding to commands.\n"
        "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n"
    )
    (f,) = run("HW001", {"dmesg.txt": text})
    assert "0000:b3:00" in f.title and f.severity.value == "critical"


def test_quiet_kernel_log_is_silent():
    quiet = dmesg("NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U22-I3-AF03-09-1)",
                  "nvidia-uvm: Loaded the UVM driver, major device number 509.")
    assert run("HW001", {"dmesg.txt": quiet}) == []
