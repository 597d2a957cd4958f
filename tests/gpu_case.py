"""Realistic artifacts for the GPU checks' tests, run through the real sources, parsers, views and engine.

``run(code, files)`` writes {name: text} to a folder, reads it like `gpusleuth diagnose DIR` and returns the
findings of that one check. The builders write nvidia-smi -q -x and dmesg the way the tools print them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from gpusleuth.analysis.diagnose import build_facts
from gpusleuth.analysis.engine import Selection, run_checks
from gpusleuth.model.finding import Finding
from gpusleuth.sources.loose import read_directory

NODE = "gpu-node-07"
BUSES = ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"]


def run(code: str, files: dict[str, str]) -> list[Finding]:
    tmp = Path(tempfile.mkdtemp(prefix="gpusleuth-gpu-"))
    for name, text in files.items():
        (tmp / name).write_text(text, encoding="utf-8")
    facts = build_facts(read_directory(tmp))
    findings, outcomes = run_checks(facts, Selection((code,)))
    errors = [o for o in outcomes if o.status == "error"]
    assert not errors, errors
    return findings


def _reasons(active: set[str], tag: str) -> str:
    ids = ["gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "hw_thermal_slowdown",
           "hw_power_brake_slowdown", "sync_boost", "sw_thermal_slowdown", "display_clocks_setting"]
    rows = "".join(f"\t\t\t<{tag}_{i}>{'Active' if i in active else 'Not Active'}</{tag}_{i}>\n" for i in ids)
    return f"\t\t<{tag}s>\n{rows}\t\t</{tag}s>\n"


def gpu_xml(i: int, *, name="NVIDIA H100 80GB HBM3", persistence="Enabled", mig=("Disabled", "Disabled"), reasons=("gpu_idle",),
            used=1, total=81559, util=0, vol_dbe=0, agg_dbe=0, remap=(0, 0, "No", "No"), temp=33, slowdown=89, shutdown=92,
            power="71.42 W", limit="700.00 W", gen=(5, 5), width=(16, 16), fabric=("Completed", "Success"), extra="") -> str:
    pci = f"00000000:{BUSES[i]}:00.0"
    remap_xml = ("\t\t<remapped_rows>N/A</remapped_rows>\n" if remap is None else
                 f"\t\t<remapped_rows>\n\t\t\t<remapped_row_corr>{remap[0]}</remapped_row_corr>\n\t\t\t<remapped_row_unc>{remap[1]}</remapped_row_unc>\n"
                 f"\t\t\t<remapped_row_pending>{remap[2]}</remapped_row_pending>\n\t\t\t<remapped_row_failure>{remap[3]}</remapped_row_failure>\n\t\t</remapped_rows>\n")
    return (
        f'\t<gpu id="{pci}">\n\t\t<product_name>{name}</product_name>\n\t\t<persistence_mode>{persistence}</persistence_mode>\n'
        f"\t\t<mig_mode>\n\t\t\t<current_mig>{mig[0]}</current_mig>\n\t\t\t<pending_mig>{mig[1]}</pending_mig>\n\t\t</mig_mode>\n"
        f"\t\t<uuid>GPU-{i:08x}-1a3d-4c5e-9f8a-0b1c2d3e4f5{i}</uuid>\n\t\t<minor_number>{i}</minor_number>\n"
        f"\t\t<pci>\n\t\t\t<pci_bus_id>{pci}</pci_bus_id>\n\t\t\t<pci_gpu_link_info>\n\t\t\t\t<pcie_gen>\n"
        f"\t\t\t\t\t<max_link_gen>{gen[1]}</max_link_gen>\n\t\t\t\t\t<current_link_gen>{gen[0]}</current_link_gen>\n\t\t\t\t</pcie_gen>\n"
        f"\t\t\t\t<link_widths>\n\t\t\t\t\t<max_link_width>{width[1]}x</max_link_width>\n\t\t\t\t\t<current_link_width>{width[0]}x</current_link_width>\n"
        f"\t\t\t\t</link_widths>\n\t\t\t</pci_gpu_link_info>\n\t\t</pci>\n\t\t<performance_state>P0</performance_state>\n"
        + _reasons(set(reasons), "clocks_event_reason")
        + f"\t\t<fb_memory_usage>\n\t\t\t<total>{total} MiB</total>\n\t\t\t<used>{used} MiB</used>\n\t\t</fb_memory_usage>\n"
        f"\t\t<utilization>\n\t\t\t<gpu_util>{util} %</gpu_util>\n\t\t</utilization>\n"
        f"\t\t<ecc_mode>\n\t\t\t<current_ecc>Enabled</current_ecc>\n\t\t\t<pending_ecc>Enabled</pending_ecc>\n\t\t</ecc_mode>\n"
        f"\t\t<ecc_errors>\n\t\t\t<volatile>\n\t\t\t\t<sram_correctable>0</sram_correctable>\n\t\t\t\t<sram_uncorrectable_parity>0</sram_uncorrectable_parity>\n"
        f"\t\t\t\t<sram_uncorrectable_secded>0</sram_uncorrectable_secded>\n\t\t\t\t<dram_correctable>0</dram_correctable>\n"
        f"\t\t\t\t<dram_uncorrectable>{vol_dbe}</dram_uncorrectable>\n\t\t\t</volatile>\n\t\t\t<aggregate>\n\t\t\t\t<sram_correctable>0</sram_correctable>\n"
        f"\t\t\t\t<sram_uncorrectable_parity>0</sram_uncorrectable_parity>\n\t\t\t\t<sram_uncorrectable_secded>0</sram_uncorrectable_secded>\n"
        f"\t\t\t\t<dram_correctable>0</dram_correctable>\n\t\t\t\t<dram_uncorrectable>{agg_dbe}</dram_uncorrectable>\n\t\t\t</aggregate>\n\t\t</ecc_errors>\n"
        + remap_xml
        + f"\t\t<temperature>\n\t\t\t<gpu_temp>{temp} C</gpu_temp>\n\t\t\t<gpu_temp_max_threshold>{shutdown} C</gpu_temp_max_threshold>\n"
        f"\t\t\t<gpu_temp_slow_threshold>{slowdown} C</gpu_temp_slow_threshold>\n\t\t</temperature>\n"
        f"\t\t<gpu_power_readings>\n\t\t\t<power_draw>{power}</power_draw>\n\t\t\t<current_power_limit>{limit}</current_power_limit>\n\t\t</gpu_power_readings>\n"
        + (f"\t\t<fabric>\n\t\t\t<state>{fabric[0]}</state>\n\t\t\t<status>{fabric[1]}</status>\n\t\t</fabric>\n" if fabric else "")
        + extra + "\t\t<processes>\n\t\t</processes>\n\t</gpu>\n"
    )


def smi_xml(*gpus: str, driver="580.95.05", cuda="13.0") -> str:
    return ('<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">\n<nvidia_smi_log>\n'
            f"\t<timestamp>Thu Nov 19 09:12:44 2026</timestamp>\n\t<driver_version>{driver}</driver_version>\n"
            f"\t<cuda_version>{cuda}</cuda_version>\n\t<attached_gpus>{len(gpus)}</attached_gpus>\n" + "".join(gpus) + "</nvidia_smi_log>\n")


def healthy_node(n: int = 8, **kw) -> str:
    return smi_xml(*(gpu_xml(i) for i in range(n)), **kw)


def dmesg(*lines: str, start: float = 812.118201) -> str:
    """dmesg (uptime stamps) with NVRM lines, one second apart."""
    return "".join(f"[{start + k:12.6f}] {ln}\n" for k, ln in enumerate(lines))


def nodes_table(labels: str, name: str = NODE) -> str:
    """`kubectl get nodes --show-labels` for one node."""
    return ("$ kubectl get nodes --show-labels\nNAME          STATUS   ROLES    AGE   VERSION   LABELS\n"
            f"{name}   Ready    <none>   41d   v1.30.4   {labels}\n")
