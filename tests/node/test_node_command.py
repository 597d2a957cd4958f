"""`gpusleuth node` against a fake NVML (tests/node/fake_nvml.py) and a saved kernel log.

Done means: an eight-H100 node with one Xid 79 and one GPU with pending row remaps reports both with the
right actions; a healthy node reports nothing above info; --save DIR then `diagnose DIR` gives the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pynvml
from click.testing import CliRunner

from gpusleuth.cli import cli
from tests.node.fake_nvml import FakeGpu, FakeMig, FakeNvml, h100_node

NODE = "gpu-node-07"

# dmesg -T on the node after GPU 5 (0000:ab:00) fell off the bus.
KERNEL_79 = """\
[Tue Nov 18 02:14:51 2026] nvidia-nvlink: Nvlink Core is being initialized, major device number 235
[Tue Nov 18 03:41:09 2026] NVRM: GPU at PCI:0000:ab:00: GPU-00000005-1a3d-4c5e-9f8a-0b1c2d3e4f55
[Tue Nov 18 03:41:09 2026] NVRM: GPU Board Serial Number: 1654123045684
[Tue Nov 18 03:41:09 2026] NVRM: Xid (PCI:0000:ab:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[Tue Nov 18 03:41:09 2026] NVRM: GPU 0000:ab:00.0: GPU has fallen off the bus.
[Tue Nov 18 03:41:09 2026] NVRM: A GPU crash dump has been created. If possible, please run
                           NVRM: nvidia-bug-report.sh as root to collect this data before
                           NVRM: the NVIDIA kernel module is unloaded.
[Tue Nov 18 03:41:10 2026] NVRM: Xid (PCI:0000:ab:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)
[Tue Nov 18 03:41:55 2026] NVRM: Xid (PCI:0000:ab:00): 119, pid=3811, name=nv-hostengine, Timeout after 45s of waiting for RPC response from GPU5 GSP! Expected function 76 (GSP_RM_CONTROL) (0x2080014b 0x5).
"""

KERNEL_QUIET = """\
[Tue Nov 18 02:14:51 2026] nvidia-nvlink: Nvlink Core is being initialized, major device number 235
[Tue Nov 18 02:14:52 2026] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U22-I3-AF03-09-1)
[Tue Nov 18 02:14:58 2026] nvidia-uvm: Loaded the UVM driver, major device number 509.
"""

UNC = (pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, pynvml.NVML_VOLATILE_ECC)
UNC_AGG = (pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, pynvml.NVML_AGGREGATE_ECC)


def broken_node() -> FakeNvml:
    gpus = h100_node()
    for g in gpus:
        g.used_mib, g.util, g.reasons, g.power_mw = 71230, 97, 0, 412_000
        g.processes = [(2231048 + g.index, "/usr/bin/python3", 71218)]
    gpus[2].remapped = (0, 1, 1, 0)  # one uncorrectable row, remap pending
    gpus[2].ecc = {UNC: 1, UNC_AGG: 1}
    gpus[5].fail = {"nvmlDeviceGetName": pynvml.NVMLError_GpuIsLost}  # fell off the bus
    return FakeNvml(gpus, driver="580.95.05", cuda=13000)


# The host a node probe reads (knowledge/live.toml [probe]), as an Ubuntu 22.04 GPU node with the driver on the host.
HOST = {
    "etc/os-release": 'PRETTY_NAME="Ubuntu 22.04.5 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\n',
    "proc/driver/nvidia/version": ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
                                   "(dvs-builder@U22-I3-AF03-09-1)  Tue Sep 23 09:55:41 UTC 2025\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n"),
    "proc/modules": ("nvidia_uvm 2076672 0 - Live 0x0000000000000000 (OE)\n"
                     "nvidia_modeset 1556480 0 - Live 0x0000000000000000 (OE)\n"
                     "nvidia 11583488 2 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (OE)\n"),
    "proc/uptime": "86423.51 1372200.11\n",
}


def fake_host(tmp_path: Path, monkeypatch, files: dict[str, str] | None = None, dmesg: str | None = None) -> Path:
    """A host root for --host-root, an empty process table, and `uname` (and `dmesg`, when given) on PATH: the
    boundary the probe script reads, so a test never reads the machine it runs on."""
    root, proc, bin_ = tmp_path / "host", tmp_path / "proc", tmp_path / "bin"
    for d in (root, proc, bin_):
        d.mkdir(exist_ok=True)
    for rel, text in (HOST if files is None else files).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    stubs = {"uname": "echo 5.15.0-1063-nvidia"} | ({"dmesg": f"cat {tmp_path / 'stub-dmesg.txt'}"} if dmesg is not None else {})
    if dmesg is not None:
        (tmp_path / "stub-dmesg.txt").write_text(dmesg)
    for name, body in stubs.items():
        (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}:{os.environ['PATH']}")
    monkeypatch.setenv("GPUSLEUTH_PROBE_PROC", str(proc))
    return root


def run(args: list[str], nvml, tmp_path: Path, kernel: str | None, monkeypatch, host: dict[str, str] | None = HOST) -> tuple[int, str]:
    """`gpusleuth node` with this NVML, a saved kernel log (None: this machine's, stubbed) and a fake host root
    (None: no --host-root)."""
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    extra = []
    if kernel is not None:
        log = tmp_path / "dmesg.txt"
        log.write_text(kernel)
        extra = ["--kernel-log", str(log)]
    if host is not None:
        extra += ["--host-root", str(fake_host(tmp_path, monkeypatch, host))]
    result = CliRunner().invoke(cli, ["node", "--node-name", NODE, *extra, *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def by_code(report: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f in report["findings"]:
        out.setdefault(f["code"], []).append(f)
    return out


def test_eight_h100_with_xid79_and_pending_remap(tmp_path, monkeypatch):
    code, out = run(["--format", "json"], broken_node(), tmp_path, KERNEL_79, monkeypatch)
    assert code == 1
    report = json.loads(out)
    f = by_code(report)
    (hw001,) = f["HW001"]
    assert hw001["severity"] == "critical" and hw001["node"] == NODE and hw001["role"] == "root-cause"
    assert hw001["facts"]["follow_on_xids"] == [119, 154]  # attributed to the 79, not reported on their own
    assert "The driver's own verdict (Xid 154): Node Reboot Required." in hw001["explanation"]
    assert "FW001" not in f
    cmds = [c for fx in hw001["fixes"] for c in fx["commands"]]
    assert f"kubectl cordon {NODE}" in cmds and f"kubectl drain {NODE} --ignore-daemonsets --delete-emptydir-data" in cmds
    assert "systemctl reboot" in cmds and "dcgmi diag -r 3" in cmds and f"kubectl uncordon {NODE}" in cmds
    assert hw001["evidence"][0]["artifact"] == "kernel.log" and "79, pid='<unknown>'" in hw001["evidence"][0]["text"]
    assert "GPU 5" in hw001["title"]  # the kernel's PCI matched to NVML's index

    (hw011,) = f["HW011"]
    assert "GPU 2" in hw011["title"] and hw011["node"] == NODE
    assert any("nvidia-smi -r -i 2" in c for fx in hw011["fixes"] for c in fx["commands"])
    assert hw011["evidence"][0]["artifact"] == "gpusleuth-node.json" and "pending=True" in hw011["evidence"][0]["text"]
    assert [x["facts"]["volatile_dbe"] for x in f["HW010"]] == [1]

    (lost,) = f["UD001"]
    assert lost["role"] == "symptom" and "GPU is lost" in lost["title"]
    assert report["root_causes"][0]["code"] == "HW001"


def test_healthy_node_has_nothing_above_info(tmp_path, monkeypatch):
    code, out = run(["--format", "json"], FakeNvml(h100_node()), tmp_path, KERNEL_QUIET, monkeypatch)
    report = json.loads(out)
    assert code == 0, report["findings"]
    assert all(f["severity"] == "info" for f in report["findings"]), [(f["code"], f["title"]) for f in report["findings"]]
    assert report["verdict"] == "healthy"


def test_save_then_diagnose_gives_the_same_findings(tmp_path, monkeypatch):
    saved = tmp_path / "bundle"
    code, out = run(["--format", "json", "--save", str(saved)], broken_node(), tmp_path, KERNEL_79, monkeypatch)
    live = json.loads(out)
    assert {"manifest.json", "gpusleuth-node.json", "kernel.log", "files", "commands"} <= {p.name for p in saved.iterdir()}
    manifest = json.loads((saved / "manifest.json").read_text())
    records = {r["name"]: r for r in manifest["artifacts"]}
    assert records["files/proc/modules"]["path"] == "/proc/modules" and records["files/proc/modules"]["node"] == NODE
    assert records["commands/uname-r.txt"]["command"] == "uname -r"
    result = CliRunner().invoke(cli, ["diagnose", str(saved), "--format", "json"], catch_exceptions=False)
    again = json.loads(result.stdout)
    strip = lambda r: [(f["id"], f["title"], f["severity"], f["evidence"], f["fixes"]) for f in r["findings"]]  # noqa: E731
    assert strip(again) == strip(live)
    assert result.exit_code == code == 1
    assert sorted(again["gaps"]) == sorted(live["gaps"])


def test_no_driver_reads_the_kernel_log_and_host_for_why(tmp_path, monkeypatch):
    """On a node whose driver is not loaded NVML cannot start: that refusal, the module list and the kernel log
    are the diagnosis, not a reason to stop."""
    quiet = "[Tue Nov 18 02:14:51 2026] Linux version 5.15.0-1063-nvidia (buildd@lcy02-amd64-014)\n"
    mismatch = quiet + ("[Tue Nov 18 02:14:58 2026] NVRM: API mismatch: the client has the version 580.95.05, but\n"
                        "[Tue Nov 18 02:14:58 2026] NVRM: this kernel module has the version 570.172.08.  Please\n"
                        "[Tue Nov 18 02:14:58 2026] NVRM: make sure that this kernel module and all NVIDIA driver\n"
                        "[Tue Nov 18 02:14:58 2026] NVRM: components have the same version.\n")
    without_nvidia = {**HOST, "proc/modules": "nf_tables 376832 0 - Live 0x0000000000000000\n"}
    for dmesg in (quiet, mismatch):
        monkeypatch.setitem(sys.modules, "pynvml", FakeNvml([], init_error=pynvml.NVMLError_DriverNotLoaded))
        root = fake_host(tmp_path, monkeypatch, without_nvidia, dmesg=dmesg)
        result = CliRunner().invoke(cli, ["node", "--node-name", NODE, "--host-root", str(root), "--format", "json"])
        assert result.exit_code == 1, result.output
        said = [ln for ln in result.stderr.splitlines() if ln.strip()]
        assert len(said) == 1 and "no usable NVIDIA GPU or driver" in said[0] and "Driver Not Loaded" in said[0]
        report = json.loads(result.stdout)
        assert any("NVML was not available" in g for g in report["gaps"])
        assert not any("no host facts" in g for g in report["gaps"]), report["gaps"]
        serious = [f for f in report["findings"] if f["severity"] in ("error", "critical")]
        cited = {(e["artifact"], e["text"]) for f in serious for e in f["evidence"]}
        assert any(a == "gpusleuth-node.json" and "Driver Not Loaded" in t for a, t in cited), cited
        assert any(a == "files/proc/modules" for a, _ in cited), cited  # the module list confirms it
        if dmesg is mismatch:
            assert any(a == "kernel.log" and "API mismatch" in t for a, t in cited), cited


def test_a_machine_nvml_cannot_read_says_so_in_one_line(tmp_path, monkeypatch):
    """Without GPUs or driver, and nothing in its kernel log or files that explains it: one line, exit 2."""
    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml([], init_error=pynvml.NVMLError_NoPermission))
    root = fake_host(tmp_path, monkeypatch, {}, dmesg="[Tue Nov 18 02:14:51 2026] Linux version 6.8.0-90-generic\n")
    result = CliRunner().invoke(cli, ["node", "--node-name", NODE, "--host-root", str(root), "--format", "json"])
    assert result.exit_code == 2
    said = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(said) == 1 and "no usable NVIDIA GPU or driver" in said[0] and "Insufficient Permissions" in said[0]


def test_without_nvidia_ml_py(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    result = CliRunner().invoke(cli, ["node"])
    assert result.exit_code == 2 and "nvidia-ml-py" in result.output


def test_nvml_errors_become_findings_not_crashes(tmp_path, monkeypatch):
    """Consumer GPU (no ECC, no power reading: Not Supported) and an unprivileged reader."""
    gpu = FakeGpu(0, "00000000:01:00.0", "GPU-5f1e0c4a-21d3-4b7e-a0c2-9d8e7f6a5b41", name="NVIDIA GeForce RTX 4090",
                  total_mib=24564, fabric=(pynvml.NVML_GPU_FABRIC_STATE_NOT_SUPPORTED, pynvml.NVML_SUCCESS))
    gpu.fail = {"nvmlDeviceGetEccMode": pynvml.NVMLError_NotSupported, "nvmlDeviceGetRemappedRows": pynvml.NVMLError_NotSupported,
                "nvmlDeviceGetPowerUsage": pynvml.NVMLError_NotSupported,
                "nvmlDeviceGetComputeRunningProcesses": pynvml.NVMLError_NoPermission,
                "nvmlDeviceGetGpuFabricInfo": pynvml.NVMLError_NotSupported}
    code, out = run(["--format", "json"], FakeNvml([gpu], driver="580.95.05"), tmp_path, KERNEL_QUIET, monkeypatch)
    report = json.loads(out)
    f = by_code(report)
    assert code == 0
    titles = " | ".join(x["title"] for x in f["UD004"])
    assert "do not support ecc, power" in titles and "denied access" in titles
    assert all(x["severity"] == "info" for x in report["findings"])


def test_mig_instances_and_fabric_are_read(tmp_path, monkeypatch):
    gpus = h100_node(2)
    gpus[0].mig = (pynvml.NVML_DEVICE_MIG_ENABLE, pynvml.NVML_DEVICE_MIG_ENABLE)
    gpus[0].migs = [FakeMig(1, 0, "3g.40gb", "MIG-1b4d3c9e-9a8f-5b1e-8f2d-7c3e2a1f0b9d", 40192),
                    FakeMig(2, 0, "3g.40gb", "MIG-2c5e4d0f-0b9a-5c2f-9a3e-8d4f3b2a1c0e", 40192)]
    gpus[1].fabric = (pynvml.NVML_GPU_FABRIC_STATE_IN_PROGRESS, pynvml.NVML_SUCCESS)
    saved = tmp_path / "s"
    code, out = run(["--format", "json", "--save", str(saved)], FakeNvml(gpus), tmp_path, KERNEL_QUIET, monkeypatch)
    doc = json.loads((saved / "gpusleuth-node.json").read_text())
    assert [m["profile"] for m in doc["gpus"][0]["mig_devices"]] == ["3g.40gb", "3g.40gb"]
    assert doc["gpus"][1]["fabric_state"] == "In Progress"
    f = by_code(json.loads(out))
    assert "HW019" in f and code == 1


def test_kernel_log_unreadable_is_a_gap(tmp_path, monkeypatch):
    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.sources.node import no_host, probe, source

    collection = probe(FakeNvml(h100_node(1)), lambda: (None, ["dmesg -T: dmesg: read kernel buffer failed: Operation not permitted",
                                                              "journalctl -k: No journal files were found.", "/dev/kmsg: Permission denied"], None),
                       "n1", no_host)
    report = diagnose(source(collection, "node n1"))
    assert any("kernel log not readable" in str(g) and "Operation not permitted" in str(g) for g in report.gaps)


def test_fake_has_only_real_nvml_names():
    for name in vars(FakeNvml):
        if name.startswith("nvml"):
            assert hasattr(pynvml, name), f"the fake invents {name}"


def test_offline_commands_never_import_pynvml(tmp_path):
    (tmp_path / "nvidia-smi.txt").write_text("No devices were found\n")
    code = ("import sys\nfrom click.testing import CliRunner\nfrom gpusleuth.cli import cli\n"
            f"CliRunner().invoke(cli, ['diagnose', {str(tmp_path)!r}])\nCliRunner().invoke(cli, ['xid', '79'])\n"
            "assert 'pynvml' not in sys.modules, 'offline path imported pynvml'\n")
    src = Path(__file__).resolve().parents[2] / "src"
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": str(src)})


def test_truncated_probe_artifact_is_a_gap(tmp_path, monkeypatch):
    saved = tmp_path / "b"
    run(["--format", "json", "--save", str(saved)], FakeNvml(h100_node(2)), tmp_path, KERNEL_QUIET, monkeypatch)
    text = (saved / "gpusleuth-node.json").read_text()
    (saved / "gpusleuth-node.json").write_text(text[: len(text) // 2])
    result = CliRunner().invoke(cli, ["diagnose", str(saved), "--format", "json"])
    report = json.loads(result.stdout)
    assert any("gpusleuth-node.json" in g and "not valid JSON" in g and "truncated?" in g for g in report["gaps"])


def test_kernel_log_without_nvml_reports_its_findings_and_says_nvml_was_missing(tmp_path, monkeypatch):
    """A laptop reading a GPU node's saved dmesg: no nvidia-ml-py at all, or a library with no driver behind it."""
    for nvml in (None, FakeNvml([], init_error=pynvml.NVMLError_LibraryNotFound)):
        code, out = run(["--format", "json"], nvml, tmp_path, KERNEL_79, monkeypatch, host=None)
        report = json.loads(out)
        assert code == 1
        assert "HW001" in by_code(report)
        hw001 = by_code(report)["HW001"][0]
        assert hw001["evidence"][0]["artifact"] == "kernel.log"
        assert any("NVML was not available" in g for g in report["gaps"]), report["gaps"]
    result = CliRunner().invoke(cli, ["node", "--node-name", NODE, "--kernel-log", str(tmp_path / "dmesg.txt")])
    assert "NVML was not available" in result.stderr and "only the kernel log" in result.stderr
    saved = tmp_path / "saved"
    monkeypatch.setitem(sys.modules, "pynvml", None)
    CliRunner().invoke(cli, ["node", "--kernel-log", str(tmp_path / "dmesg.txt"), "--save", str(saved), "--format", "json"])
    assert sorted(p.name for p in saved.iterdir()) == ["kernel.log", "manifest.json"]


def test_fail_on_sets_the_exit_code(tmp_path, monkeypatch):
    assert run(["--format", "json", "--fail-on", "never"], broken_node(), tmp_path, KERNEL_79, monkeypatch)[0] == 0
    assert run(["--format", "json", "--fail-on", "critical"], broken_node(), tmp_path, KERNEL_79, monkeypatch)[0] == 1
    code, out = run(["--format", "json", "--fail-on", "info"], FakeNvml(h100_node()), tmp_path, KERNEL_QUIET, monkeypatch)
    assert code == (1 if json.loads(out)["findings"] else 0)
    assert run(["--format", "json", "--fail-on", "warning"], FakeNvml(h100_node()), tmp_path, KERNEL_QUIET, monkeypatch)[0] == 0


def test_save_to_something_that_exists_is_refused_before_the_probe_reads_anything(tmp_path, monkeypatch):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine\n")
    class Untouched:
        def __getattr__(self, name):
            raise AssertionError(f"the probe read NVML ({name}) before refusing --save")

    code, out = run(["--save", str(taken)], Untouched(), tmp_path, KERNEL_QUIET, monkeypatch)
    assert code == 2 and out == ""
    assert (taken / "notes.txt").read_text() == "mine\n" and sorted(p.name for p in taken.iterdir()) == ["notes.txt"]


def test_a_host_file_too_big_to_read_is_cut_and_said(tmp_path, monkeypatch):
    """The probe's output is read as far as a probe pod's log is (live/probes.MAX_OUTPUT), then the read stops."""
    from gpusleuth.live import probes

    monkeypatch.setattr(probes, "MAX_OUTPUT", 64 * 1024)
    big = {**HOST, "etc/containerd/config.toml": 'version = 2\n' + "# padding\n" * 20_000}
    code, out = run(["--format", "json"], FakeNvml(h100_node(1)), tmp_path, KERNEL_QUIET, monkeypatch, host=big)
    report = json.loads(out)
    assert any("read only in part" in g for g in report["gaps"]), report["gaps"]
    assert report["verdict"] == "healthy"  # what was read before the cut is still read


def test_credentials_in_host_files_never_reach_the_bundle_or_the_report(tmp_path, monkeypatch):
    """The node reads containerd's config, where registry credentials live: redacted as `collect` redacts."""
    config = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".registry.configs."registry.example.com".auth]\n'
              '  username = "robot$ci"\n  password = "hunter2-s3cr3t-Pa55"\n'
              '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n  runtime_type = "io.containerd.runc.v2"\n')
    saved = tmp_path / "b"
    code, out = run(["--format", "json", "--save", str(saved)], FakeNvml(h100_node(1)), tmp_path, KERNEL_QUIET, monkeypatch,
                    host={**HOST, "etc/containerd/config.toml": config})
    assert "hunter2-s3cr3t-Pa55" not in out
    written = (saved / "files/etc/containerd/config.toml").read_text()
    assert "hunter2-s3cr3t-Pa55" not in written and 'runtime_type = "io.containerd.runc.v2"' in written
    manifest = json.loads((saved / "manifest.json").read_text())
    assert manifest["redaction"]["total"] >= 1
    assert not any("hunter2" in p.read_text(errors="replace") for p in saved.rglob("*") if p.is_file())
