"""GpuInventory (every count with its evidence, GPUs merged across forms) and KernelEvents (Xids in every
kernel-log shape, bursts, follow-ons, the NVRM lines that are not Xids)."""

from pathlib import Path

from gpu_case import NODE, gpu_xml, nodes_table, smi_xml

from gpusleuth.facts import GpuInventory, KernelEvents

FIX = Path(__file__).parent.parent / "fixtures" / "nvidia_smi"


def test_counts_from_every_layer_with_evidence(facts_of):
    labels = "feature.node.kubernetes.io/pci-10de.present=true,nvidia.com/gpu.count=8,nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3"
    facts = facts_of({"nvidia-smi.txt": (FIX / "h100_r535_table.txt").read_text(), "nodes.txt": nodes_table(labels)})
    inv = facts.get(GpuInventory)
    (ng,) = inv.nodes
    assert ng.node == NODE and ng.assumed_node  # the table names no node; the one node in the artifacts does
    counts = {c.source: c.value for c in ng.counts}
    assert counts == {"nvidia-smi": 8, "label nvidia.com/gpu.count": 8, "label feature.node.kubernetes.io/pci-10de.present": None}
    assert ng.visible.value == 8 and ng.visible.evidence.line == 3
    assert ng.driver_version == "535.183.01" and ng.cuda_version == "12.2"


def test_table_and_xml_of_the_same_gpus_merge(facts_of):
    table = (FIX / "h100_r535_table.txt").read_text()
    xml = smi_xml(gpu_xml(0, remap=(0, 1, "Yes", "No")), gpu_xml(1))
    inv = facts_of({"a.txt": table, "b.xml": xml}).get(GpuInventory)
    (ng,) = inv.nodes
    assert len(ng.gpus) == 8
    g0 = ng.gpu_by_pci("0000:18:00")
    assert g0.remap_pending is True and g0.processes[0].pid == 2231048  # one from each form
    assert g0.ev("remap_pending").artifact == "b.xml" and g0.ev("ecc").artifact == "a.txt"


def test_driver_from_gfd_labels_alone(facts_of):
    labels = "nvidia.com/cuda.driver-version.full=570.133.20,nvidia.com/cuda.runtime-version.full=12.8,nvidia.com/gpu.count=4"
    (ng,) = facts_of({"nodes.txt": nodes_table(labels)}).get(GpuInventory).nodes
    assert (ng.driver_version, ng.cuda_version) == ("570.133.20", "12.8") and ng.driver_evidence.line == 3


XID_SHAPES = """\
[  812.118209] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[Tue Nov 18 03:41:10 2026] NVRM: Xid (PCI:0000:2a:00.0): 48, pid=40213, name=python, Ch 00000010
Nov 18 03:41:11 gpu-node-07 kernel: NVRM: Xid (PCI:0000:3a:00): 13, pid=51822, name=python3, Graphics Exception
2026-11-18T03:41:12+0000 gpu-node-07 kernel: NVRM: Xid (0000:5d:00): 94, pid='<unknown>', name=<unknown>, Contained: SM (0x1). RST: No, D-RST: No
"""


def test_xid_in_every_kernel_log_shape(facts_of):
    for n, line in enumerate(XID_SHAPES.splitlines()):
        ke = facts_of({"kern.log": line + "\n"}).get(KernelEvents)
        (x,) = ke.xids
        assert (x.code, x.pci) == ([79, 48, 13, 94][n], ["0000:9a:00", "0000:2a:00", "0000:3a:00", "0000:5d:00"][n]), line
        assert x.evidence.line == 1


def test_bursts_attribute_follow_ons_to_the_first(facts_of):
    text = ("[  812.1] NVRM: Xid (PCI:0000:2a:00): 48, pid=1, name=python, Ch 00000010\n"
            "[  812.2] NVRM: Xid (PCI:0000:2a:00): 94, pid=1, name=python, Contained: SM (0x1)\n"
            "[  813.0] NVRM: Xid (PCI:0000:2a:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row marked for remapping\n"
            "[ 9000.0] NVRM: Xid (PCI:0000:2a:00): 94, pid=2, name=python, Contained: SM (0x1)\n"
            "[ 9000.1] NVRM: Xid (PCI:0000:18:00): 13, pid=3, name=python, Graphics Exception\n")
    ke = facts_of({"dmesg.txt": text}).get(KernelEvents)
    bursts = {(b.pci, b.first.code): b for b in ke.bursts}
    first = bursts[("0000:2a:00", 48)]
    assert [e.code for e in first.events] == [48, 94, 63] and set(first.follow_ons.values()) == {48}
    assert [e.code for e in bursts[("0000:2a:00", 94)].primaries()] == [94]  # hours later: its own burst
    assert len(ke.bursts) == 3


def test_nvrm_lines_that_are_not_xids(facts_of):
    text = ("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
            "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
            "               NVRM: fallen off the bus and is not responding to commands.\n"
            "[   84.300488] NVRM: GPU6 _kgspLogRpcTimeout: ********************************* GSP Timeout **********************************\n"
            "[  176.432772] NVRM: API mismatch: the client has the version 550.54.14, but\n"
            "[  176.432777] NVRM: this kernel module has the version 545.29.06.  Please\n"
            "[    3.912233] nouveau 0000:18:00.0: NVIDIA GH100 (180000a1)\n"
            "[  900.000001] NVRM: GPU at PCI:0000:9a:00: GPU-00000004-1a3d-4c5e-9f8a-0b1c2d3e4f54\n")
    ke = facts_of({"dmesg.txt": text}).get(KernelEvents)
    kinds = {e.kind: e for e in ke.events}
    assert set(kinds) == {"fallen-off-bus", "gsp-timeout", "api-mismatch", "nouveau"}
    assert kinds["fallen-off-bus"].pci == "0000:b3:00"
    assert kinds["api-mismatch"].detail == {"client": "550.54.14", "kernel": "545.29.06"}
    assert ke.uuids == {"0000:9a:00": "GPU-00000004-1a3d-4c5e-9f8a-0b1c2d3e4f54"}
