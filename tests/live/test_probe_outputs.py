"""What a node probe collects is all read: the real probe script runs against a host root with realistic
files and programs, its output is served as the nodes' probes of each bundled example, collected with
--node-probes and diagnosed. No probe output may end as "not recognised" (or unusable), and the host facts
reach the nodes they were read on."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from gpusleuth.analysis.diagnose import build_facts, diagnose
from gpusleuth.facts import HostFacts
from gpusleuth.live import probe_format, probes
from gpusleuth.live.collect import Options
from gpusleuth.live.resources import BY_KIND
from gpusleuth.serve.store import Store
from gpusleuth.sources import example_names, open_source
from gpusleuth.sources.live import source_from_collection
from tests.live.helpers import run_collect, serving

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")

HOST_FILES = {
    "etc/os-release": 'PRETTY_NAME="Ubuntu 22.04.5 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nVERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\n',
    "proc/modules": ("nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n"
                     "nvidia_uvm 1794048 0 - Live 0x0000000000000000 (POE)\n"
                     "nvidia 56717312 12 nvidia_peermem,nvidia_uvm, Live 0x0000000000000000 (POE)\n"
                     "ib_core 434176 2 nvidia_peermem,mlx5_ib, Live 0x0000000000000000 (OE)\n"
                     "mlx5_core 2453504 1 mlx5_ib, Live 0x0000000000000000 (OE)\n"),
    "proc/cmdline": "BOOT_IMAGE=/vmlinuz-5.15.0-94-generic root=UUID=0c2f6a7e ro modprobe.blacklist=nouveau quiet\n",
    "proc/uptime": "350735.47 5567911.20\n",
    "proc/driver/nvidia/version": ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.06  Wed Jun 26 06:46:07 UTC 2024\n"
                                   "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n"),
    "sys/module/nvidia/version": "535.183.06\n",
    "sys/module/mlx5_core/version": "24.10-1.1.4\n",
    "run/nvidia/validations/driver-ready": "IS_HOST_DRIVER=false\nNVIDIA_DRIVER_ROOT=/run/nvidia/driver\nDRIVER_ROOT_CTR_PATH=/driver-root\n",
    "run/nvidia/validations/.driver-ctr-ready": "GDRCOPY_ENABLED: false\nGDS_ENABLED: false\nGPU_DIRECT_RDMA_ENABLED: true\n",
    "run/nvidia/validations/toolkit-ready": "",
    "run/mellanox/drivers/.driver-ready": "",
}
PROGRAMS = ["run/nvidia/driver/usr/bin/modinfo", "usr/sbin/mokutil", "run/mellanox/drivers/usr/bin/ofed_info"]
# Stand-ins on PATH for what runs in the probe (chroot into the host root, busybox's uname and dmesg).
STUBS = {
    "chroot": 'shift\nexec "$@"\n',
    "uname": "echo 5.15.0-94-generic\n",
    "dmesg": "echo '[   12.331245] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.06  Wed Jun 26 06:46:07 UTC 2024'\n",
    "modinfo": ("printf '%s\\n' 'filename:       /lib/modules/5.15.0-94-generic/kernel/drivers/video/nvidia.ko' "
                "'version:        535.183.06' 'license:        NVIDIA' 'name:           nvidia' "
                "'vermagic:       5.15.0-94-generic SMP mod_unload modversions '\n"),
    "mokutil": "echo 'SecureBoot disabled'\n",
    "ofed_info": "echo 'MLNX_OFED_LINUX-24.10-1.1.4.0:'\n",
}


@pytest.fixture(scope="module")
def probe_sections(tmp_path_factory):
    """The sections the real probe script prints for a GPU node with the driver container and MOFED."""
    root = tmp_path_factory.mktemp("host")
    for rel, text in HOST_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for rel in PROGRAMS:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
        (root / rel).chmod(0o755)
    stubs = tmp_path_factory.mktemp("bin")
    for name, body in STUBS.items():
        (stubs / name).write_text("#!/bin/sh\n" + body)
        (stubs / name).chmod(0o755)
    out = subprocess.run(["sh", "-c", probes.script()], capture_output=True, text=True, timeout=60,
                         env={"GPUSLEUTH_PROBE_ROOT": str(root), "PATH": f"{stubs}:{os.environ['PATH']}"})
    parsed = probe_format.parse(out.stdout)
    assert parsed.complete, out.stderr
    return parsed


def test_host_commands_run_in_the_root_that_has_them(probe_sections):
    cmds = {s.ref: s for s in probe_sections.sections if s.kind == "cmd"}
    assert cmds["modinfo-nvidia.txt"].command == "chroot /run/nvidia/driver modinfo nvidia"
    assert cmds["ofed-info.txt"].command == "chroot /run/mellanox/drivers ofed_info -s" and cmds["ofed-info.txt"].rc == 0
    assert cmds["mokutil-sb-state.txt"].command == "mokutil --sb-state" and cmds["mokutil-sb-state.txt"].lines == ["SecureBoot disabled"]
    assert "nvidia-smi -q -x" in probe_sections.absent


@pytest.mark.parametrize("name", example_names())
def test_a_probe_bundle_of_each_example_leaves_no_probe_output_unread(name, probe_sections, monkeypatch):
    monkeypatch.setattr(probes, "POLL", 0.01)
    store = Store.from_source(open_source(f"example:{name}"))
    nodes = sorted({n["metadata"]["name"] for n in store.items(BY_KIND["Node"])} | set(store.pod_nodes()))
    for node in nodes:
        store.node_files.setdefault(node, []).extend(probe_sections.sections)
    with serving(store, probe_namespace="gpusleuth") as srv:
        col = run_collect(srv.url, Options(node_probes=True, max_workers=4))
    source = source_from_collection(col, "live:probed")
    probed = {d.artifact for d in source.documents if d.meta.get("source") == "probe"}
    assert {f"nodes/{nodes[0]}/files/proc/modules", f"nodes/{nodes[0]}/commands/modinfo-nvidia.txt"} <= probed
    report = diagnose(source)
    unread = [str(g) for g in report.gaps if (g.artifact or "").startswith("nodes/")]
    assert unread == []
    facts = build_facts(source)
    kinds = {r.kind for r in facts.recognised if r.artifact.startswith("nodes/")}
    assert {"host.modules", "host.modinfo", "host.uname", "host.os-release", "host.uptime", "host.cmdline", "host.secure-boot",
            "host.nvidia-version", "host.mofed-version", "host.ready-marker", "host.file-probe"} <= kinds
    host = facts.get(HostFacts).for_node(nodes[0])
    assert host.loaded("nvidia_peermem") and host.driver.version == "535.183.06" and host.os.tag == "ubuntu22.04"
    assert host.markers["/run/nvidia/validations/driver-ready"].value("IS_HOST_DRIVER") == "false"
    assert host.uptime.read_at is not None  # the API server's clock when the probe's output was read: dmesg uptimes get a wall time
    direct = diagnose(open_source(f"example:{name}"))
    assert sorted(f.code for f in report.root_causes) == sorted(f.code for f in direct.root_causes)
