"""What one real H100 node gave gpusleuth (2026-11-26, driver 580.159.04, nvidia-ml-py 13.615.71, a single
H100 80GB HBM3 passed through to a VM): its NVML answers (tests/node/h100/nvml-calls.json), the probe artifact
the probe wrote there (gpusleuth-node.json), its `dmesg -T` after a CUDA kernel wrote through a wild pointer
(dmesg-T.txt: a real Xid 31), and `nvidia-smi -q -x` / `nvidia-smi -q` taken the same minute
(tests/fixtures/nvidia_smi/h100_r580_query.*). Two more machines of the same kind: one under a bf16 matmul
load holding 20 GiB (load-nvml-calls.json and nvidia-smi of the same seconds, h100_r580_load_*), one whose
`gpusleuth node --save` bundle holds three more application faults, Xid 43 and Xid 13 as the driver prints
them (faults-bundle). Board serial numbers are zeroed; nothing else is changed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from gpusleuth.analysis.engine import sniff
from gpusleuth.cli import cli
from gpusleuth.model.finding import Severity
from gpusleuth.parsers import node_probe
from gpusleuth.sources.nvml import read
from tests.conftest import docs_from_text
from tests.node.replay_nvml import ReplayNvml
from tests.node.test_node_command import fake_host

HERE = Path(__file__).parent / "h100"
SMI = Path(__file__).parent.parent / "fixtures" / "nvidia_smi"
NODE = "h100-probe"


def _gpu_line(text: str) -> dict:
    return json.loads(text.splitlines()[2].rstrip(","))


def test_the_replayed_reading_renders_the_artifact_the_probe_wrote_on_the_gpu():
    reading = read(ReplayNvml())
    assert (reading.driver_version, reading.cuda_version, reading.attached_gpus, reading.errors) == ("580.159.04", "13.0", 1, [])
    text = node_probe.render(NODE, reading.driver_version, reading.cuda_version, reading.attached_gpus, reading.gpus, reading.errors,
                             [], "2026-11-26T18:04:49+00:00")
    on_the_gpu = (HERE / "gpusleuth-node.json").read_text()
    moving = ("power_draw_w", "temperature_c", "memory_used_mib")  # read seconds apart on the machine
    assert {k: v for k, v in _gpu_line(text).items() if k not in moving} == {k: v for k, v in _gpu_line(on_the_gpu).items() if k not in moving}
    head = lambda t: {k: v for k, v in json.loads(t).items() if k not in ("gpus", "collected_at")}  # noqa: E731
    assert head(text) == head(on_the_gpu)


def _parsed(name: str):
    doc = docs_from_text((SMI / name).read_text(), name)[-1]
    _, p = sniff(doc)
    assert p is not None, f"{name} not recognised"
    (report,) = p.parse(doc)
    return report.gpus[0]


def test_nvidia_smi_xml_text_and_nvml_agree_on_the_same_gpu():
    """Three readers of one GPU a minute apart: what they all report must be the same value."""
    nvml = read(ReplayNvml()).gpus[0]
    for name in ("h100_r580_query.xml", "h100_r580_query.txt"):
        smi = _parsed(name)
        for field in ("name", "uuid", "pci_bus_id", "memory_total_mib", "persistence_mode", "ecc_enabled", "remap_correctable",
                      "remap_uncorrectable", "remap_pending", "remap_failure", "mig_current", "mig_pending", "temperature_c",
                      "power_limit_w", "pcie_gen_max", "pcie_width_max", "performance_state"):
            assert getattr(smi, field) == getattr(nvml, field), (name, field, getattr(smi, field), getattr(nvml, field))
        assert (smi.ecc.volatile_dbe, smi.ecc.aggregate_dbe) == (nvml.ecc.volatile_dbe, nvml.ecc.aggregate_dbe) == (0, 0)
        # R580 prints temperatures against T.Limit (margins below the GPU's max operating temperature), NVML in
        # degrees: the same thresholds, 87 C max operating on this H100.
        assert smi.temp_slowdown_c is None and (smi.temp_tlimit_margin_c, smi.temp_tlimit_slowdown_c, smi.temp_tlimit_shutdown_c) == (50, -2, -8)
        assert nvml.temp_max_operating_c - smi.temp_tlimit_margin_c == nvml.temperature_c == 37
        assert nvml.temp_max_operating_c - smi.temp_tlimit_slowdown_c == nvml.temp_slowdown_c == 89
        assert nvml.temp_max_operating_c - smi.temp_tlimit_shutdown_c == nvml.temp_shutdown_c == 95


def _node(tmp_path, monkeypatch, *args: str) -> tuple[int, dict]:
    monkeypatch.setitem(sys.modules, "pynvml", ReplayNvml())
    root = fake_host(tmp_path, monkeypatch)
    result = CliRunner().invoke(cli, ["node", "--node-name", NODE, "--host-root", str(root), "--format", "json", *args],
                                catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def test_the_healthy_h100_is_healthy(tmp_path, monkeypatch):
    before = tmp_path / "dmesg-before.txt"  # the same boot, before the fault: the lines up to the Xid's
    before.write_text("".join((HERE / "dmesg-T.txt").read_text().splitlines(keepends=True)[:358]))
    code, report = _node(tmp_path, monkeypatch, "--kernel-log", str(before))
    assert code == 0 and report["verdict"] == "healthy", [(f["code"], f["title"]) for f in report["findings"]]


def test_a_real_xid_31_is_the_workload_and_the_gpu_stays_usable(tmp_path, monkeypatch):
    code, report = _node(tmp_path, monkeypatch, "--kernel-log", str(HERE / "dmesg-T.txt"))
    assert code == 1
    serious = [f for f in report["findings"] if f["severity"] in ("error", "critical")]
    assert [f["code"] for f in serious] == ["WL001"], [(f["code"], f["title"]) for f in serious]
    (xid,) = serious
    assert xid["layer"] == "workload" and xid["node"] == NODE and "Xid 31" in xid["title"]
    first = xid["evidence"][0]
    assert (first["artifact"], first["line"]) == ("kernel.log", 361)
    assert "pid=511, name=python3" in first["text"] and "FAULT_PDE ACCESS_TYPE_VIRT_WRITE" in first["text"]
    assert any("restart the workload" in fx["description"].lower() for fx in xid["fixes"])


def test_the_bundle_gpusleuth_node_saved_on_the_gpu_reads_back_whole(facts_of):
    """`gpusleuth node --save` on the H100 (tests/node/h100/bundle): every artifact is recognised, and the host's
    own files agree with NVML about the driver."""
    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.facts.host import HostFacts
    from gpusleuth.sources.loose import read_directory

    bundle = HERE / "bundle"
    report = diagnose(read_directory(bundle))
    assert report.verdict == "healthy", [(f.code, f.title) for f in report.findings]
    assert not [g for g in report.gaps if "not recognised" in str(g) or "host facts" in str(g)], report.gaps
    (host,) = facts_of(bundle).get(HostFacts).nodes
    assert host.node == NODE and host.loaded("nvidia") and host.driver.version == "580.159.04"
    assert host.kernel.release == "6.18.44-fc-v657-gpu" and host.os.tag == "ubuntu24.04"


def test_under_load_nvml_and_nvidia_smi_agree_on_the_process_and_the_power_cap(tmp_path, monkeypatch):
    nvml = read(ReplayNvml(HERE / "load-nvml-calls.json")).gpus[0]
    (proc,) = nvml.processes
    assert (proc.pid, proc.name, proc.used_memory_mib, proc.gpu_instance_id, proc.compute_instance_id) == (463, "python3", 21482, None, None)
    assert nvml.throttle_reasons == ("sw_power_cap",) and nvml.utilization_gpu_pct == 99
    for name in ("h100_r580_load_table.txt", "h100_r580_load_query.xml"):
        smi = _parsed(name)
        assert [(p.pid, p.name, p.used_memory_mib) for p in smi.processes] == [(463, "python3", 21482)], name
        assert (smi.uuid or nvml.uuid, smi.power_limit_w) == (nvml.uuid, nvml.power_limit_w), name
    monkeypatch.setitem(sys.modules, "pynvml", ReplayNvml(HERE / "load-nvml-calls.json"))
    root = fake_host(tmp_path, monkeypatch)
    quiet = tmp_path / "quiet.txt"
    quiet.write_text("".join((HERE / "dmesg-T.txt").read_text().splitlines(keepends=True)[:358]))
    result = CliRunner().invoke(cli, ["node", "--node-name", NODE, "--host-root", str(root), "--kernel-log", str(quiet), "--format", "json"])
    report = json.loads(result.stdout)
    assert result.exit_code == 0 and report["verdict"] == "healthy"
    # running at the power cap under full load is how a busy GPU runs: a note, not a problem
    assert [(f["code"], f["severity"]) for f in report["findings"]] == [("HW015", "info")]


def test_real_xid_43_and_13_are_the_workload_and_every_xid_line_is_accounted_for():
    """A trap, a misaligned store and an illegal shared-memory access: Xid 43 alone for the trap, Xid 13 (warp
    exception, ESR, channel) and then Xid 43 for the others. All application faults; the GPU stays usable."""
    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.sources.loose import read_directory

    bundle = HERE / "faults-bundle"
    report = diagnose(read_directory(bundle))
    serious = [f for f in report.findings if f.severity.weight >= Severity.ERROR.weight]
    assert sorted((f.code, f.facts["xid"]) for f in serious) == [("WL001", 13), ("WL001", 43)], [(f.code, f.title) for f in serious]
    assert all(f.layer.value == "workload" and f.node == NODE for f in serious)
    xid43 = next(f for f in serious if f.facts["xid"] == 43)
    assert "pids 715, 767" in xid43.explanation and xid43.facts["occurrences"] == 2
    xid13 = next(f for f in serious if f.facts["xid"] == 13)  # two faults of three lines each, not six
    assert xid13.facts["occurrences"] == 2 and "6 kernel log lines" in xid13.explanation
    cited = {e.line for f in report.findings for e in f.evidence if e.artifact == "kernel.log"}
    xid_lines = {i for i, ln in enumerate((bundle / "kernel.log").read_text().splitlines(), 1) if "NVRM: Xid" in ln}
    assert len(xid_lines) == 8 and xid_lines <= {e.line for f in serious for e in f.evidence if e.artifact == "kernel.log"} <= cited


def test_unprivileged_on_the_gpu_reads_nvml_and_says_the_kernel_log_was_refused():
    """`gpusleuth node --save` as uid 65534 on the H100 (unprivileged-bundle): NVML answers everything, the
    kernel log answers nothing, and the report says which source refused and how."""
    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.sources.loose import read_directory

    bundle = HERE / "unprivileged-bundle"
    assert not (bundle / "kernel.log").exists()
    report = diagnose(read_directory(bundle))
    refused = [str(g) for g in report.gaps if "kernel log not readable" in str(g)]
    assert len(refused) == 1 and "dmesg: read kernel buffer failed: Operation not permitted" in refused[0]
    assert "/dev/kmsg: Operation not permitted" in refused[0] and "run as root or in a privileged pod" in refused[0]
    assert report.verdict == "healthy" and [f.code for f in report.findings] == ["HW015"]


def test_an_h200_read_three_ways_agrees():
    """An H200 (driver 580.159.04) under load: NVML replayed, `nvidia-smi -L` and `--query-gpu ... noheader,nounits` with
    the command that printed it (tests/node/h200/, tests/fixtures/nvidia_smi/h200_r580_*)."""
    nvml = read(ReplayNvml(Path(__file__).parent / "h200" / "load-nvml-calls.json")).gpus[0]
    csv_gpu, listed = _parsed("h200_r580_query_gpu_noheader.txt"), _parsed("h200_r580_list.txt")
    assert nvml.name == csv_gpu.name == listed.name == "NVIDIA H200"
    assert nvml.uuid == csv_gpu.uuid == listed.uuid and nvml.pci_bus_id == csv_gpu.pci_bus_id == "00000000:00:06.0"
    assert (nvml.memory_total_mib, nvml.power_limit_w, nvml.performance_state) == (csv_gpu.memory_total_mib, csv_gpu.power_limit_w,
                                                                                   csv_gpu.performance_state) == (143771, 700.0, "P0")
    assert nvml.throttle_reasons == csv_gpu.throttle_reasons == ("sw_power_cap",) and csv_gpu.remap_pending is False
    assert [(p.name, p.used_memory_mib) for p in nvml.processes] == [("python3", 21482)]
