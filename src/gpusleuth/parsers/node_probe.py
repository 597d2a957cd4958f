"""The node probe's own artifact, gpusleuth-node.json: what `gpusleuth node` read through NVML.

One JSON document laid out one GPU (and one error) per line, so evidence can cite the line of the GPU it is
about. `gpusleuth node --save DIR` writes it and `gpusleuth diagnose DIR` reads it back through this parser,
which is also what the live probe itself does: one path, the same findings.

    {"schema": "gpusleuth/node-probe/v1", "node": "gpu-node-07", "driver_version": "535.183.01", ...,
     "gpus": [
      {"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-...", "pci_bus_id": "00000000:18:00.0", ...},
      ...
     ],
     "errors": [
      {"kind": "gpu-lost", "message": "GPU is lost", "gpu_index": 5, "function": "nvmlDeviceGetHandleByIndex"}
     ]}
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields, replace
from typing import Callable, Iterable

from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.gpu import EccCounts, GpuDevice, GpuError, GpuProcess, MigDevice, NvidiaSmiReport
from gpusleuth.parsers.base import NO, SURE, parser

SCHEMA = "gpusleuth/node-probe/v1"
ARTIFACT = "gpusleuth-node.json"
_SKIP = {"evidence", "artifact", "line", "node", "source", "driver_version", "cuda_version"}
_GPU_FIELDS = {f.name for f in fields(GpuDevice)} - _SKIP
_ERROR_FIELDS = {f.name for f in fields(GpuError)} - {"evidence"}


def render(node: str | None, driver: str | None, cuda: str | None, attached: int | None, gpus: list[GpuDevice],
           errors: list[GpuError], notes: list[str], collected_at: str) -> str:
    """The artifact's text: a header, one line per GPU, one line per error."""
    head = {"schema": SCHEMA, "node": node, "collected_at": collected_at, "driver_version": driver, "cuda_version": cuda,
            "attached_gpus": attached, "notes": notes}
    out = [json.dumps(head)[:-1] + ","]
    out.append(' "gpus": [')
    gpu_lines = [json.dumps({k: v for k, v in asdict(g).items() if k in _GPU_FIELDS and v not in (None, (), [])}) for g in gpus]
    out += ["  " + ln + ("," if i < len(gpu_lines) - 1 else "") for i, ln in enumerate(gpu_lines)]
    out.append(" ],")
    out.append(' "errors": [')
    err_lines = [json.dumps({k: v for k, v in asdict(e).items() if k in _ERROR_FIELDS and v is not None}) for e in errors]
    out += ["  " + ln + ("," if i < len(err_lines) - 1 else "") for i, ln in enumerate(err_lines)]
    out.append(" ]")
    out.append("}")
    return "\n".join(out) + "\n"


def _sniff(doc: Document) -> int:
    return SURE if any(f'"schema": "{SCHEMA}"' in ln for ln in doc.head(2)) else NO


@parser("gpusleuth.node-probe", "gpusleuth node: GPUs read through NVML (gpusleuth-node.json)", sniff=_sniff)
def parse(doc: Document) -> Iterable[NvidiaSmiReport]:
    try:
        data = json.loads(doc.text)
    except json.JSONDecodeError as exc:
        raise UnusableData(f"not valid JSON (line {doc.lineno(exc.lineno - 1)}: {exc.msg}); truncated?") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise UnusableData(f"not a {SCHEMA} document")
    node = data.get("node")
    gpu_line = _array_lines(doc, '"gpus": [')
    err_line = _array_lines(doc, '"errors": [')
    gpus = [_gpu(raw, node, data, doc.artifact, doc.lineno(gpu_line.get(n, 0))) for n, raw in enumerate(data.get("gpus") or [])]
    errors = [
        GpuError(**{k: v for k, v in raw.items() if k in _ERROR_FIELDS}, evidence=doc.evidence(err_line.get(n, 0)))
        for n, raw in enumerate(data.get("errors") or [])
    ]
    yield NvidiaSmiReport(
        source="nvml", artifact=doc.artifact, driver_version=data.get("driver_version"), cuda_version=data.get("cuda_version"),
        node=node, attached_gpus=data.get("attached_gpus"), gpus=tuple(gpus), errors=tuple(errors),
        timestamp=data.get("collected_at"), line=doc.first_line, notes=tuple(data.get("notes") or ()),
        evidence=Evidence(doc.artifact, doc.first_line, f"node {node}: driver {data.get('driver_version')}, CUDA {data.get('cuda_version')} (NVML)"),
    )


def _array_lines(doc: Document, opener: str) -> dict[int, int]:
    """Element number -> line index, for the one-element-per-line arrays render() writes."""
    start = next((i for i, ln in enumerate(doc.lines) if ln.strip() == opener), None)
    out: dict[int, int] = {}
    if start is None:
        return out
    for i in range(start + 1, len(doc.lines)):
        if not doc.lines[i].strip().startswith("{"):
            break
        out[len(out)] = i
    return out


def _gpu(raw: dict, node, data: dict, artifact: str, line: int) -> GpuDevice:
    values = {k: v for k, v in raw.items() if k in _GPU_FIELDS}
    values["ecc"] = EccCounts(**(values.get("ecc") or {}))
    values["mig_devices"] = tuple(MigDevice(**m) for m in values.get("mig_devices") or ())
    if "processes" in values:
        values["processes"] = tuple(GpuProcess(**p) for p in values["processes"])
    for key in ("throttle_reasons", "field_errors"):
        if key in values:
            values[key] = tuple(tuple(x) if isinstance(x, list) else x for x in values[key])
    g = GpuDevice(**values, node=node, source="nvml", driver_version=data.get("driver_version"),
                  cuda_version=data.get("cuda_version"), artifact=artifact, line=line)
    ev = {key: Evidence(artifact, line, f"{g.label}: {text(g)}") for key, text in _EVIDENCE.items() if _has(g, key)}
    ev.update({f"throttle:{r}": Evidence(artifact, line, f"{g.label}: clock event reason {r} active") for r in g.throttle_reasons or ()})
    ev.update({f: Evidence(artifact, line, f"{g.label}: {f}: {m} (NVML)") for f, m in g.field_errors})
    ev["gpu"] = Evidence(artifact, line, f"{g.label}: {g.name or 'name unreadable'} {g.uuid or ''}".strip())
    return replace(g, evidence=ev)


def _has(g: GpuDevice, key: str) -> bool:
    attr = _ATTR.get(key, key)
    return getattr(g, attr, None) not in (None, ())


_ATTR = {"ecc_volatile": "ecc", "ecc_aggregate": "ecc", "mig": "mig_current", "fabric": "fabric_state", "throttle": "throttle_reasons",
         "temperature": "temperature_c", "power": "power_draw_w", "pcie_width": "pcie_width_current", "pcie_gen": "pcie_gen_current",
         "memory": "memory_total_mib", "utilization": "utilization_gpu_pct"}
_EVIDENCE: dict[str, Callable[[GpuDevice], str]] = {
    "name": lambda g: f"product {g.name}",
    "ecc_volatile": lambda g: f"ECC uncorrectable volatile={g.ecc.volatile_dbe} aggregate={g.ecc.aggregate_dbe}, corrected volatile={g.ecc.volatile_sbe}",
    "ecc_aggregate": lambda g: f"ECC uncorrectable aggregate={g.ecc.aggregate_dbe}",
    "remap_pending": lambda g: f"remapped rows pending={g.remap_pending} (uncorrectable {g.remap_uncorrectable}, correctable {g.remap_correctable})",
    "remap_failure": lambda g: f"remapped rows failure={g.remap_failure}",
    "retired_pages_pending": lambda g: f"retired pages pending={g.retired_pages_pending} (single-bit {g.retired_pages_sbe}, double-bit {g.retired_pages_dbe})",
    "throttle": lambda g: f"clock event reasons {', '.join(g.throttle_reasons or ()) or 'none'} (mask {g.throttle_mask:#x})" if g.throttle_mask is not None else f"clock event reasons {', '.join(g.throttle_reasons or ())}",
    "temperature": lambda g: f"temperature {g.temperature_c} C (slowdown {g.temp_slowdown_c} C, shutdown {g.temp_shutdown_c} C)",
    "power": lambda g: f"power {g.power_draw_w} W of {g.power_limit_w} W",
    "pcie_width": lambda g: f"PCIe width x{g.pcie_width_current} of x{g.pcie_width_max}",
    "pcie_gen": lambda g: f"PCIe Gen{g.pcie_gen_current} of Gen{g.pcie_gen_max}",
    "persistence_mode": lambda g: f"persistence mode {'Enabled' if g.persistence_mode else 'Disabled'}",
    "mig": lambda g: f"MIG mode current={'Enabled' if g.mig_current else 'Disabled'} pending={'Enabled' if g.mig_pending else 'Disabled'}",
    "fabric": lambda g: f"fabric state {g.fabric_state}, status {g.fabric_status}",
    "memory": lambda g: f"memory {g.memory_used_mib} MiB used of {g.memory_total_mib} MiB",
    "utilization": lambda g: f"GPU utilization {g.utilization_gpu_pct} %",
}
