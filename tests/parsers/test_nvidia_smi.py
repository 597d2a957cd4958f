"""nvidia-smi in its four forms, from R470 to R580, including the error lines and truncated XML."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpusleuth.analysis.engine import sniff
from gpusleuth.errors import UnusableData
from gpusleuth.parsers import nvidia_smi
from gpusleuth.model.gpu import NvidiaSmiReport, normalise_pci, short_pci
from tests.conftest import doc_from_text, docs_from_text

FIX = Path(__file__).parent.parent / "fixtures" / "nvidia_smi"


def report(name: str, text: str | None = None) -> NvidiaSmiReport:
    docs = docs_from_text(text if text is not None else (FIX / name).read_text(), name)
    doc = docs[-1]
    score, p = sniff(doc)
    assert p is not None, f"{name} not recognised"
    out = list(p.parse(doc))
    assert len(out) == 1 and isinstance(out[0], NvidiaSmiReport)
    return out[0]


def test_r535_h100_table_eight_gpus_with_processes():
    r = report("h100_r535_table.txt")
    assert r.source == "nvidia-smi"
    assert (r.driver_version, r.cuda_version) == ("535.183.01", "12.2")
    assert [g.index for g in r.gpus] == list(range(8))
    g3 = r.gpus[3]
    assert g3.name == "NVIDIA H100 80GB HBM3"
    assert g3.pci_bus_id == "00000000:5D:00.0"
    assert g3.ecc.volatile_dbe == 2
    assert (g3.temperature_c, g3.power_draw_w, g3.power_limit_w) == (35, 124.0, 700.0)
    assert (g3.memory_used_mib, g3.memory_total_mib, g3.utilization_gpu_pct) == (71230, 81559, 97)
    assert g3.persistence_mode is True and g3.mig_current is False
    assert g3.processes[0].pid == 2231051 and g3.processes[0].used_memory_mib == 71218
    assert g3.ev("ecc").line == 21 and "00000000:5D:00.0" in g3.ev("ecc").text


def test_r570_table_with_err_fields_and_unknown_error_line():
    r = report("a100_r570_err_table.txt")
    assert r.driver_version == "570.124.06"
    assert len(r.gpus) == 3
    bad = r.gpus[1]
    assert bad.pci_bus_id == "00000000:0F:00.0"
    fields = dict(bad.field_errors)
    assert {"ecc", "fan", "temperature", "power", "utilization"} <= set(fields)
    assert bad.temperature_c is None and bad.memory_total_mib == 81920
    assert r.gpus[0].field_errors == ()
    assert [g.processes for g in r.gpus] == [(), (), ()]  # "No running processes found"
    (err,) = r.errors
    assert (err.kind, err.pci_bus_id, err.message) == ("unknown-error", "00000000:47:00.0", "Unknown Error")
    assert err.evidence.line == 2  # the line after the prompt, in the original file


def test_r580_table_mig_devices_and_pending_mig_change():
    r = report("a100_r580_mig_table.txt")
    assert (r.driver_version, r.cuda_version) == ("580.65.06", "13.0")
    g0, g1 = r.gpus
    assert g0.mig_current is True and g0.mig_pending is True
    assert g0.ecc.volatile_dbe is None  # the ECC column says "On" with MIG enabled
    assert [(m.gpu_instance_id, m.index, m.sm_count, m.memory_total_mib) for m in g0.mig_devices] == [
        (2, 0, 56, 20096), (3, 1, 14, 9984), (9, 2, 14, 4864)]
    assert g1.mig_current is False and g1.mig_pending is True  # "Disabled*"
    assert g0.processes[0].gpu_instance_id == 2 and g0.processes[0].name == "python3"


def test_r470_narrow_table():
    r = report("v100_r470_table.txt")
    (g,) = r.gpus
    assert g.name == "Tesla V100-SXM2..." and g.persistence_mode is False
    assert g.pci_bus_id == "00000000:00:1E.0" and g.mig_current is None
    assert g.processes == ()


def test_table_without_processes_section_leaves_processes_unknown():
    text = (FIX / "v100_r470_table.txt").read_text().split("| Processes:")[0]
    (g,) = report("cut.txt", text).gpus
    assert g.processes is None


@pytest.mark.parametrize(
    "text,kind",
    [
        ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n", "driver-not-loaded"),
        ("$ nvidia-smi\nNo devices were found\n", "no-devices"),
        ("$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.183\n", "version-mismatch"),
        ("Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error\n", "unknown-error"),
        ("Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU\n", "gpu-lost"),
        ("$ nvidia-smi\nFailed to initialize NVML: Insufficient Permissions\n", "insufficient-permissions"),
    ],
)
def test_error_only_outputs(text, kind):
    r = report("nvidia-smi.txt", text)
    assert r.gpus == ()
    assert [e.kind for e in r.errors] == [kind]


def test_failed_sample_file():
    r = report("nvidia_smi_failed.txt")
    assert [e.kind for e in r.errors] == ["driver-not-loaded"]
    assert r.errors[0].evidence.line == 2


def test_list_with_mig_devices():
    r = report("list_mig.txt")
    assert r.source == "nvidia-smi -L"
    g0, g1 = r.gpus
    assert g0.uuid == "GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f"
    assert [m.profile for m in g0.mig_devices] == ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
    assert g1.mig_devices == () and g1.index == 1


def test_list_legacy_mig_uuid_carries_ids():
    text = "GPU 0: A100-SXM4-40GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)\n  MIG 1g.5gb Device 0: (UUID: MIG-GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77/7/0)\n"
    (g,) = report("l.txt", text).gpus
    assert (g.mig_devices[0].gpu_instance_id, g.mig_devices[0].compute_instance_id) == (7, 0)


def test_query_text_r550_h100():
    r = report("h100_r550_query.txt")
    assert (r.source, r.driver_version, r.cuda_version, r.attached_gpus) == ("nvidia-smi -q", "550.90.07", "12.4", 2)
    g0, g1 = r.gpus
    assert g0.uuid == "GPU-7b6c4e2f-1a3d-4c5e-9f8a-0b1c2d3e4f50" and g0.pci_bus_id == "00000000:18:00.0"
    assert g0.throttle_reasons == ("gpu_idle",)
    assert (g0.temp_slowdown_c, g0.temp_shutdown_c, g0.temp_max_operating_c) == (89, 92, 87)
    assert g0.fabric_state == "Completed" and g0.processes == ()
    assert g0.remap_pending is False and g0.retired_pages_sbe is None
    assert g1.remap_pending is True and g1.remap_uncorrectable == 1
    assert g1.ev("remap_pending").text == "Pending                           : Yes"
    assert g1.ecc.volatile_dbe == 1 and g1.ecc.aggregate_sbe == 57
    assert g1.throttle_reasons == ("sw_power_cap",)
    assert (g1.pcie_width_current, g1.pcie_width_max, g1.pcie_gen_current) == (8, 16, 5)
    assert g1.processes[0].pid == 3012233 and g1.processes[0].used_memory_mib == 80104
    assert g1.power_draw_w == 698.77


def test_query_text_r470_single_double_bit_and_throttle_rename():
    (g,) = report("v100_r470_query.txt").gpus
    assert g.ecc.volatile_dbe == 2 and g.ecc.aggregate_sbe == 4
    assert g.retired_pages_dbe == 1 and g.retired_pages_pending is True
    assert g.remap_pending is None  # "Remapped Rows : N/A" on Volta
    assert g.throttle_reasons == ("hw_thermal_slowdown",)
    assert (g.power_draw_w, g.power_limit_w) == (288.31, 300.0)
    assert g.persistence_mode is False and g.mig_current is None
    assert g.processes[0].name == "python"


def test_xml_r535_h100_event_reasons_mig_and_remap():
    r = report("h100_r535_query.xml")
    assert (r.source, r.driver_version, r.cuda_version, r.attached_gpus, r.truncated) == ("nvidia-smi -q -x", "535.161.08", "12.2", 2, False)
    g0, g1 = r.gpus
    assert g0.mig_current is True and len(g0.mig_devices) == 2 and g0.mig_devices[0].sm_count == 60
    assert g0.throttle_reasons == ("gpu_idle",) and g0.processes == ()
    assert g0.fabric_state == "Completed"
    assert g1.pci_bus_id == "00000000:2A:00.0" and g1.index == 1
    assert g1.remap_pending is True and g1.remap_uncorrectable == 2
    ev = g1.ev("remap_pending")
    assert ev.text == "<remapped_row_pending>Yes</remapped_row_pending>"
    assert (FIX / "h100_r535_query.xml").read_text().splitlines()[ev.line - 1].strip() == ev.text
    assert g1.ecc.volatile_dbe == 2 and g1.ecc.aggregate_sbe == 118
    assert "dram_uncorrectable" in g1.ev("ecc_volatile").text
    assert g1.throttle_reasons == ("hw_slowdown", "hw_thermal_slowdown", "sw_thermal_slowdown")
    assert (g1.pcie_gen_current, g1.pcie_gen_max) == (4, 5)
    assert g1.persistence_mode is False and g1.temperature_c == 88
    assert g1.processes[0].pid == 40213


def test_xml_r470_old_names():
    (g,) = report("a100_r470_query.xml").gpus
    assert g.throttle_reasons == ("sw_power_cap",)
    assert g.ecc.aggregate_sbe == 7 and g.ecc.volatile_dbe == 0
    assert g.power_limit_w == 400.0 and g.power_draw_w is None
    assert ("power", "Unknown Error") in g.field_errors
    assert g.mig_current is False and g.mig_pending is True


def test_xml_truncated_keeps_complete_gpus():
    lines = (FIX / "h100_r535_query.xml").read_text().splitlines()
    cut = "\n".join(lines[: lines.index("\t<gpu id=\"00000000:2A:00.0\">") + 20]) + "\n"
    r = report("cut.xml", cut)
    assert r.truncated is True and len(r.gpus) == 1 and r.gpus[0].pci_bus_id == "00000000:18:00.0"


def test_xml_truncated_before_first_gpu_is_unusable():
    lines = (FIX / "h100_r535_query.xml").read_text().splitlines()
    doc = doc_from_text("\n".join(lines[:30]) + "\n", "cut.xml")
    _, p = sniff(doc)
    with pytest.raises(UnusableData, match="truncated"):
        list(p.parse(doc))


def test_xml_with_entities_is_refused():
    text = '<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY a "aaaa">]>\n<nvidia_smi_log>&a;</nvidia_smi_log>\n'
    doc = doc_from_text(text, "evil.xml")
    _, p = sniff(doc)
    with pytest.raises(UnusableData, match="entities"):
        list(p.parse(doc))


def test_xml_missing_tags_tolerated():
    text = '<?xml version="1.0" ?>\n<nvidia_smi_log>\n<driver_version>550.54.14</driver_version>\n<gpu id="00000000:01:00.0">\n<product_name>NVIDIA A100-SXM4-40GB</product_name>\n</gpu>\n</nvidia_smi_log>\n'
    r = report("min.xml", text)
    (g,) = r.gpus
    assert g.name == "NVIDIA A100-SXM4-40GB" and g.pci_bus_id == "00000000:01:00.0"
    assert g.remap_pending is None and g.throttle_reasons is None and g.processes is None and r.cuda_version is None


@pytest.mark.parametrize("text", [
    "hello\nworld\n",
    "I0121 12:04:24.655909 1 main.go:154] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND\nI0121 12:04:24.655 1 main.go:155] retrying\nI0121 12:04:25 x\nI0121 12:04:26 y\n",
])
def test_unrelated_text_is_not_claimed(text):
    doc = doc_from_text(text)
    for p in (nvidia_smi.parse_table, nvidia_smi.parse_list, nvidia_smi.parse_query, nvidia_smi.parse_xml):
        assert p.sniff(doc) == 0, p.kind


def test_pci_forms():
    assert normalise_pci("0000:9a:00.0") == "00000000:9A:00.0"
    assert normalise_pci("00000000:18:00.0") == "00000000:18:00.0"
    assert short_pci("00000000:9A:00.0") == "0000:9a:00"


def test_query_gpu_csv_as_a_real_h100_printed_it():
    """`nvidia-smi --query-gpu=... --format=csv` on an H100 (R580) under load: units in the header and the values."""
    r = report("h100_r580_query_gpu.csv")
    assert (r.source, r.driver_version) == ("nvidia-smi --query-gpu", "580.159.04")
    (g,) = r.gpus
    assert (g.name, g.uuid, g.pci_bus_id) == ("NVIDIA H100 80GB HBM3", "GPU-4141c293-3b27-2e4c-38dd-99859aa72d83", "00000000:00:06.0")
    assert (g.temperature_c, g.utilization_gpu_pct, g.memory_used_mib, g.memory_total_mib) == (58, 98, 21491, 81559)
    assert (g.power_draw_w, g.power_limit_w, g.performance_state, g.persistence_mode) == (692.73, 700.0, "P0", True)
    assert g.ecc.volatile_dbe == 0 and g.throttle_reasons == ("sw_power_cap",) and g.evidence["gpu"].line == 2


def test_query_gpu_csv_without_header_or_units_takes_its_fields_from_the_command():
    text = ("$ nvidia-smi --query-gpu=index,name,pci.bus_id,memory.used,ecc.errors.uncorrected.volatile.total,remapped_rows.pending "
            "--format=csv,noheader,nounits\n"
            "0, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, 3, 0, No\n"
            "1, NVIDIA A100-SXM4-80GB, 00000000:0F:00.0, 81000, 2, Yes\n"
            "2, NVIDIA A100-SXM4-80GB, 00000000:47:00.0, [Unknown Error], [N/A], [Not Supported]\n")
    docs = docs_from_text(text, "smi.txt")
    _, p = sniff(docs[-1])
    (r,) = p.parse(docs[-1])
    assert [g.pci_bus_id for g in r.gpus] == ["00000000:07:00.0", "00000000:0F:00.0", "00000000:47:00.0"]
    assert (r.gpus[1].memory_used_mib, r.gpus[1].ecc.volatile_dbe, r.gpus[1].remap_pending) == (81000, 2, True)
    assert r.gpus[2].memory_used_mib is None and r.gpus[2].field_errors == (("memory_used_mib", "Unknown Error"),)


def test_a_csv_of_something_else_is_not_nvidia_smi():
    assert report_or_none("name, value, unit\nfoo, 1, MiB\n") is None
    assert report_or_none("name, uuid, namespace\ngpu-operator, 5f1e0c4a-21d3-4b7e-a0c2-9d8e7f6a5b41, default\n") is None


def report_or_none(text: str):
    doc = docs_from_text(text, "x.csv")[-1]
    score, p = sniff(doc)
    return None if p is None or p.kind != "nvidia-smi.csv" else p


def test_query_of_some_sections_under_load():
    """`nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE` on an H100 (R580) at its power cap: the event
    reasons' counters (time spent, in us) are not reasons that are active."""
    (g,) = report("h100_r580_query_d_perf.txt").gpus
    assert g.throttle_reasons == ("sw_power_cap",) and g.performance_state == "P0"
    assert (g.power_draw_w, g.power_limit_w, g.temperature_c, g.temp_tlimit_margin_c) == (692.75, 700.0, 58, 26)
    assert g.name is None and g.memory_total_mib is None  # sections it was not asked for are absent, not zero


def test_a_query_gpu_csv_cut_inside_its_row_says_so():
    doc = docs_from_text("index, name, uuid, pci.bus_id, memory.used [MiB]\n0, NVIDIA H1", "smi.csv")[-1]
    _, p = sniff(doc)
    with pytest.raises(UnusableData, match="cut short"):
        list(p.parse(doc))


def test_a_few_sentences_quoting_the_nvml_error_are_prose_not_nvidia_smi_output():
    said = ('nvidia-smi inside one of our images fails with "Failed to initialize NVML: Driver/library version mismatch".\n'
            "Other images work on the same host, and the host driver is 470.129.06.\n")
    assert nvidia_smi._sniff_table(doc_from_text(said)) == nvidia_smi.NO
    bare = "Failed to initialize NVML: Driver/library version mismatch\n"
    assert nvidia_smi._sniff_table(doc_from_text(bare)) > nvidia_smi.NO
