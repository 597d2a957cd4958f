"""nvidia-smi in the five forms people paste: the default table, `-L`, `-q`, `-q -x` and `--query-gpu` CSV.

All five become one ``NvidiaSmiReport`` with ``GpuDevice``s, so checks never care which form they got.
The forms drift between driver branches and this parser takes every variant it knows:

* table: the narrow layout (R418-R525), the wide one (R530+) and the wider Bus-Id column (R550+);
  ``ERR!`` cells; the ``MIG devices:`` table; ``Processes:`` with or without GI/CI columns;
  ``Disabled*`` (a pending MIG change);
* ``-q -x``: ``clocks_throttle_reasons`` became ``clocks_event_reasons`` (R535+), ``power_readings``
  became ``gpu_power_readings``, ECC ``single_bit``/``double_bit`` became ``sram_*``/``dram_*``,
  temperatures in absolute degrees or as a T.Limit margin; a truncated document keeps its whole GPUs;
* ``-q``: the same content as indented text, sections by indentation;
* the error lines any form can print instead of (or among) the GPUs: ``Unable to determine the device
  handle for GPU0000:xx:00.0: Unknown Error``, ``No devices were found``, ``NVIDIA-SMI has failed because
  it couldn't communicate with the NVIDIA driver``, ``Failed to initialize NVML: ...``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from gpusleuth.errors import UnusableData
from gpusleuth.knowledge import clock_reasons
from gpusleuth.model.document import Document
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.gpu import (
    EccCounts,
    GpuDevice,
    GpuError,
    GpuProcess,
    MigDevice,
    NvidiaSmiReport,
    error_kind,
    normalise_pci,
)
from gpusleuth.parsers.base import LIKELY, NO, SURE, WEAK, parser
from gpusleuth.parsers.prose import is_prose_line

if TYPE_CHECKING:  # imported by the XML parser itself: XML documents only
    import xml.etree.ElementTree as ET

_PCI = r"[0-9A-Fa-f]{3,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]"

# Lines any form may print instead of (or besides) GPUs.
_HANDLE_ERROR = re.compile(rf"Unable to (?:determine|detect) the device handle for (?:GPU\s*)?(?P<pci>{_PCI}):\s*(?P<msg>.+?)\s*$", re.I)
_NVML_INIT = re.compile(r"Failed to initialize NVML:\s*(?P<msg>.+?)\s*$")
_NO_DRIVER = re.compile(r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver")
_NO_LIB = re.compile(r"NVIDIA-SMI couldn't find libnvidia-ml\.so library")
_NO_DEVICES = re.compile(r"^\s*No devices were found\s*$")
_INFOROM = re.compile(rf"WARNING: infoROM is corrupted at gpu (?P<pci>{_PCI})", re.I)

_HEADER = re.compile(r"NVIDIA-SMI\s+(?P<smi>\S+)\s+Driver Version:\s*(?P<driver>\S+)(?:\s+CUDA Version:\s*(?P<cuda>[\w.]+))?")
_GPU_ROW1 = re.compile(r"^\s*(?P<idx>\d+)\s+(?P<name>.*?)\s+(?P<pm>On|Off|N/A|ERR!|TCC|WDDM)\s*$")
_BUS_CELL = re.compile(rf"^\s*(?P<pci>{_PCI})\s+(?P<disp>\S+)\s*$")
_GPU_ROW2 = re.compile(r"^\s*(?P<fan>\S+)\s+(?P<temp>\S+)\s+(?P<perf>\S+)\s+(?P<pwr>\S+)\s*/\s*(?P<cap>\S+)\s*$")
_MEM_CELL = re.compile(r"(?P<used>\d+)\s*MiB\s*/\s*(?P<total>\d+)\s*MiB")
_UTIL_CELL = re.compile(r"^\s*(?P<util>\S+)\s+(?P<mode>\S.*?)\s*$")
_MIG_ROW = re.compile(r"^\s*(?P<gpu>\d+)\s+(?P<gi>\d+)\s+(?P<ci>\d+)\s+(?P<dev>\d+)\s*$")
_MIG_SM = re.compile(r"^\s*(?P<sm>\d+)\s+")
_PROC_ROW = re.compile(
    r"^\|\s+(?P<gpu>\d+)\s+(?:(?P<gi>\S+)\s+(?P<ci>\S+)\s+)?(?P<pid>\d+)\s+(?P<type>C\+G|C|G|M\+C|M)\s+"
    r"(?P<name>.+?)\s+(?P<mem>\d+\s*MiB|N/A)\s*\|$"
)
_LIST_GPU = re.compile(r"^GPU (?P<idx>\d+): (?P<name>.+?) \(UUID: (?P<uuid>GPU-[0-9a-fA-F-]+)\)\s*$")
_LIST_MIG = re.compile(r"^\s+MIG (?P<profile>\S+)\s+Device\s+(?P<dev>\d+): \(UUID: (?P<uuid>MIG-[^)]+)\)")
_NUM = re.compile(r"^\s*\[?(?P<n>-?\d+(?:\.\d+)?)")
_TAG = re.compile(r"<([A-Za-z_][\w.-]*)[\s>/]")

_ERR_VALUES = ("err!", "unknown error", "gpu is lost", "requires reset", "requires restart", "insufficient permissions")
_MISSING = {"", "n/a", "[n/a]", "none", "not available", "[not available]", "unknown", "not active"}


# ---------------------------------------------------------------------------------------- values


def _missing(text: str | None) -> bool:
    return text is None or text.strip().lower() in _MISSING


def _error_value(text: str | None) -> str | None:
    """The error a field shows instead of a value ("ERR!", "[Unknown Error]", "[Not Supported]")."""
    if text is None:
        return None
    t = text.strip().strip("[]").strip()
    low = t.lower()
    if any(e in low for e in _ERR_VALUES) or low == "not supported":
        return t
    return None


def _num(text: str | None) -> float | None:
    if _missing(text) or _error_value(text):
        return None
    m = _NUM.match(text)
    return float(m.group("n")) if m else None


def _int(text: str | None) -> int | None:
    n = _num(text)
    return int(n) if n is not None else None


def _yes(text: str | None) -> bool | None:
    """Yes/No, Enabled/Disabled, On/Off, Active/Not Active -> bool; anything else None."""
    if text is None:
        return None
    t = text.strip().lower().rstrip("*")
    if t in ("yes", "enabled", "on", "active", "true"):
        return True
    if t in ("no", "disabled", "off", "not active", "false"):
        return False
    return None


def _cuda(text: str | None) -> str | None:
    return None if _missing(text) or not _NUM.match(text or "") else text.strip()


# ---------------------------------------------------------------------------------------- errors


def _error_line(line: str) -> tuple[str, str, str | None] | None:
    """(kind, message, pci) when the line is one of nvidia-smi's error lines."""
    m = _HANDLE_ERROR.search(line)
    if m:
        return error_kind(m.group("msg")), m.group("msg"), normalise_pci(m.group("pci"))
    m = _NVML_INIT.search(line)
    if m:
        return error_kind(m.group("msg")), m.group("msg"), None
    if _NO_DRIVER.search(line):
        return "driver-not-loaded", line.strip(), None
    if _NO_LIB.search(line):
        return "library-not-found", line.strip(), None
    if _NO_DEVICES.match(line):
        return "no-devices", "No devices were found", None
    m = _INFOROM.search(line)
    if m:
        return "inforom-corrupted", line.strip(), normalise_pci(m.group("pci"))
    return None


# A command that runs its program in a container: what nvidia-smi says there is about the container's view of the
# driver (what the runtime injected), not the node's.
_IN_CONTAINER = re.compile(
    r"^(?:sudo\s+(?:-\S+\s+)*)?(?:\S*/)?(?:docker|podman|nerdctl|ctr|crictl|kubectl|oc|k|apptainer|singularity)\s(?:.*\s)?(?:run|exec)\s"
)


def _errors(doc: Document) -> list[GpuError]:
    out = []
    run_in = doc.command if doc.command and _IN_CONTAINER.match(doc.command) else None
    for i, line in enumerate(doc.lines):
        hit = _error_line(line) if len(line) < 400 else None
        if hit:
            kind, msg, pci = hit
            out.append(GpuError(kind, msg, pci_bus_id=pci, evidence=doc.evidence(i), run_in=run_in))
    return out


# ---------------------------------------------------------------------------------------- sniffers


def _sniff_table(doc: Document) -> int:
    head = doc.head(60)
    smi = "NVIDIA-SMI" in "\n".join(head)  # what _HEADER, _NO_DRIVER and _NO_LIB all need: most documents skip them
    if smi and any(map(_HEADER.search, head)):
        return SURE
    first = head[:6]
    if any((smi and (_NO_DRIVER.search(ln) or _NO_LIB.search(ln))) or _HANDLE_ERROR.search(ln) for ln in first):
        return SURE
    if len(head) <= 3 and any(_NVML_INIT.search(ln) or _NO_DEVICES.match(ln) for ln in head):
        if (doc.command or "").startswith("nvidia-smi"):
            return LIKELY
        if any(is_prose_line(ln) for ln in head if not _error_line(ln)):
            return NO  # a few sentences that quote the error: prose, which reads the line and what is said around it
        return WEAK + 10
    return NO


def _sniff_list(doc: Document) -> int:
    head = [ln for ln in doc.head(10) if not _error_line(ln)]
    return SURE if head and _LIST_GPU.match(head[0]) else NO


def _sniff_query(doc: Document) -> int:
    return SURE if any("==============NVSMI LOG==============" in ln for ln in doc.head(5)) else NO


def _sniff_xml(doc: Document) -> int:
    head = " ".join(doc.head(4))
    return SURE if "<nvidia_smi_log" in head or "DOCTYPE nvidia_smi_log" in head else NO


# ---------------------------------------------------------------------------------------- table


@dataclass
class _TableGpu:
    rows: list[tuple[int, list[str]]] = field(default_factory=list)


@parser("nvidia-smi", "nvidia-smi default table (R418-R580), MIG devices, processes, error lines", sniff=_sniff_table)
def parse_table(doc: Document) -> Iterable[NvidiaSmiReport]:
    driver = cuda = header_line = None
    blocks: list[_TableGpu] = []
    migs: list[MigDevice] = []
    procs: dict[int, list[GpuProcess]] = {}
    procs_seen = False
    section, in_body = "gpus", False
    for i, raw in enumerate(doc.lines):
        line = raw.strip()
        m = _HEADER.search(line)
        if m:
            driver, cuda, header_line = m.group("driver"), _cuda(m.group("cuda")), i
            continue
        if line.startswith("| Processes:"):
            section, in_body, procs_seen = "processes", False, True
            continue
        if line.startswith("| MIG devices:"):
            section, in_body = "mig", False
            continue
        if line.startswith("|=") and line.endswith("|"):
            in_body = True
            continue
        if not (in_body and line.startswith("|") and line.endswith("|")):
            continue
        if section == "processes":
            p = _PROC_ROW.match(line)
            if p:
                procs.setdefault(int(p.group("gpu")), []).append(
                    GpuProcess(
                        pid=int(p.group("pid")),
                        name=p.group("name").strip(),
                        type=p.group("type"),
                        used_memory_mib=_int(p.group("mem")),
                        gpu_instance_id=_int(p.group("gi")),
                        compute_instance_id=_int(p.group("ci")),
                    )
                )
            continue
        cells = line[1:-1].split("|")
        if section == "mig":
            r = _MIG_ROW.match(cells[0]) if len(cells) == 4 else None
            if r:
                mem = _MEM_CELL.search(cells[1])
                sm = _MIG_SM.match(cells[2])
                migs.append(
                    MigDevice(
                        gpu_index=int(r.group("gpu")), gpu_instance_id=int(r.group("gi")), compute_instance_id=int(r.group("ci")),
                        index=int(r.group("dev")),
                        memory_used_mib=int(mem.group("used")) if mem else None,
                        memory_total_mib=int(mem.group("total")) if mem else None,
                        sm_count=int(sm.group("sm")) if sm else None,
                        evidence=doc.evidence(i),
                    )
                )
            continue
        if len(cells) != 3:
            continue
        if _GPU_ROW1.match(cells[0]) and _BUS_CELL.match(cells[1]):
            blocks.append(_TableGpu())
        if blocks:
            blocks[-1].rows.append((i, cells))
    errors = _errors(doc)
    if header_line is None and not blocks and not errors:
        raise UnusableData("nvidia-smi table without its header line or any GPU row")
    gpus = []
    for b in blocks:
        gpu_idx = int(_GPU_ROW1.match(b.rows[0][1][0]).group("idx"))
        gpus.append(
            _table_gpu(doc, b, driver, cuda, [m for m in migs if m.gpu_index == gpu_idx],
                       tuple(procs.get(gpu_idx, ())) if procs_seen else None)
        )
    yield NvidiaSmiReport(
        source="nvidia-smi",
        artifact=doc.artifact,
        driver_version=driver,
        cuda_version=cuda,
        node=doc.meta.get("node"),
        gpus=tuple(gpus),
        errors=tuple(errors),
        line=doc.lineno(header_line) if header_line is not None else doc.first_line,
        evidence=doc.evidence(header_line if header_line is not None else 0),
    )


def _table_gpu(doc: Document, b: _TableGpu, driver, cuda, migs: list[MigDevice], procs) -> GpuDevice:
    (i1, c1), rest = b.rows[0], b.rows[1:]
    r1 = _GPU_ROW1.match(c1[0])
    bus = _BUS_CELL.match(c1[1])
    ev = {"gpu": doc.evidence(i1)}
    errs: list[tuple[str, str]] = []
    vals: dict = {}
    for label, text in (("persistence_mode", r1.group("pm")), ("ecc", c1[2])):
        if _error_value(text):
            errs.append((label, text.strip()))
    ecc_cell = c1[2].strip()
    if rest:
        i2, c2 = rest[0]
        ev.update({k: doc.evidence(i2) for k in ("temperature", "power", "memory", "utilization", "fan")})
        r2 = _GPU_ROW2.match(c2[0])
        if r2:
            for label, text in (("fan", r2.group("fan")), ("temperature", r2.group("temp")), ("power", r2.group("pwr"))):
                if _error_value(text):
                    errs.append((label, text))
            vals.update(temperature_c=_int(r2.group("temp")), power_draw_w=_num(r2.group("pwr")),
                        power_limit_w=_num(r2.group("cap")), performance_state=r2.group("perf") if r2.group("perf").startswith("P") else None)
        mem = _MEM_CELL.search(c2[1])
        if mem:
            vals.update(memory_used_mib=int(mem.group("used")), memory_total_mib=int(mem.group("total")))
        util = _UTIL_CELL.match(c2[2])
        if util:
            if _error_value(util.group("util")):
                errs.append(("utilization", util.group("util")))
            vals["utilization_gpu_pct"] = _int(util.group("util"))
    if len(rest) > 1:
        i3, c3 = rest[1]
        mig_text = c3[2].strip()
        if mig_text and not _missing(mig_text):
            current = _yes(mig_text)
            if current is not None:
                # "Disabled*": the mode differs from what is pending; the change needs a GPU reset.
                vals.update(mig_current=current, mig_pending=(not current) if mig_text.endswith("*") else current)
                ev["mig"] = doc.evidence(i3)
    return GpuDevice(
        index=int(r1.group("idx")),
        name=r1.group("name").strip(),
        pci_bus_id=normalise_pci(bus.group("pci")),
        driver_version=driver,
        cuda_version=cuda,
        persistence_mode=_yes(r1.group("pm")),
        ecc=EccCounts(volatile_dbe=int(ecc_cell) if ecc_cell.isdigit() else None),
        mig_devices=tuple(migs),
        processes=procs,
        field_errors=tuple(errs),
        node=doc.meta.get("node"),
        source="nvidia-smi",
        artifact=doc.artifact,
        line=doc.lineno(i1),
        evidence=ev | ({"ecc": doc.evidence(i1)} if ecc_cell.isdigit() else {}),
        **vals,
    )


# ---------------------------------------------------------------------------------------- -L


@parser("nvidia-smi.list", "nvidia-smi -L: one line per GPU and MIG device", sniff=_sniff_list)
def parse_list(doc: Document) -> Iterable[NvidiaSmiReport]:
    gpus: list[tuple[int, re.Match, list[MigDevice]]] = []
    for i, line in enumerate(doc.lines):
        g = _LIST_GPU.match(line)
        if g:
            gpus.append((i, g, []))
            continue
        m = _LIST_MIG.match(line)
        if m and gpus:
            gi, ci = _mig_ids_from_legacy_uuid(m.group("uuid"))
            gpus[-1][2].append(
                MigDevice(gpu_index=int(gpus[-1][1].group("idx")), gpu_instance_id=gi, compute_instance_id=ci,
                          index=int(m.group("dev")), profile=m.group("profile"), uuid=m.group("uuid"), evidence=doc.evidence(i))
            )
    devices = tuple(
        GpuDevice(
            index=int(g.group("idx")), name=g.group("name"), uuid=g.group("uuid"), mig_devices=tuple(migs),
            mig_current=True if migs else None, node=doc.meta.get("node"), source="nvidia-smi -L",
            artifact=doc.artifact, line=doc.lineno(i), evidence={"gpu": doc.evidence(i)},
        )
        for i, g, migs in gpus
    )
    yield NvidiaSmiReport(source="nvidia-smi -L", artifact=doc.artifact, node=doc.meta.get("node"), gpus=devices,
                          errors=tuple(_errors(doc)), line=doc.first_line, evidence=doc.evidence(0))


def _mig_ids_from_legacy_uuid(uuid: str) -> tuple[int | None, int | None]:
    """R450-R465 named MIG devices MIG-GPU-<uuid>/<gi>/<ci>; later UUIDs carry no ids."""
    parts = uuid.split("/")
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return int(parts[1]), int(parts[2])
    return None, None


# ---------------------------------------------------------------------------------------- -q


@dataclass
class _Node:
    key: str
    value: str | None
    index: int
    children: list["_Node"] = field(default_factory=list)

    def child(self, *names: str) -> "_Node | None":
        for name in names:
            for c in self.children:
                if c.key == name:
                    return c
        return None

    def find(self, *path: str | tuple[str, ...]) -> "_Node | None":
        """Follow a path; each step is a name or a tuple of names a driver release may use instead."""
        node = self
        for step in path:
            node = node.child(*((step,) if isinstance(step, str) else step))
            if node is None:
                return None
        return node

    def walk(self):
        for c in self.children:
            yield c
            yield from c.walk()


_Q_LINE = re.compile(r"^(?P<indent>\s*)(?P<key>[^:]*?\S)\s*:(?:\s(?P<value>.*))?$")
_Q_GPU = re.compile(rf"^GPU (?P<pci>{_PCI})\s*$")


def _q_tree(doc: Document) -> _Node:
    root = _Node("", None, -1)
    stack: list[tuple[int, _Node]] = [(-1, root)]
    for i, raw in enumerate(doc.lines):
        if not raw.strip() or raw.lstrip().startswith("====="):
            continue
        indent = len(raw) - len(raw.lstrip())
        text = raw.strip()
        m = _Q_LINE.match(raw) if not _Q_GPU.match(text) else None
        node = _Node(m.group("key").strip(), (m.group("value") or "").strip(), i) if m else _Node(text, None, i)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    return root


@parser("nvidia-smi.query", "nvidia-smi -q: the full query as indented text", sniff=_sniff_query)
def parse_query(doc: Document) -> Iterable[NvidiaSmiReport]:
    root = _q_tree(doc)
    driver = root.child("Driver Version")
    cuda = root.child("CUDA Version")
    attached = root.child("Attached GPUs")
    driver_v = driver.value if driver and not _missing(driver.value) else None
    cuda_v = _cuda(cuda.value) if cuda else None
    gpus = []
    for n, g in enumerate(c for c in root.children if _Q_GPU.match(c.key)):
        gpus.append(_q_gpu(doc, g, n, driver_v, cuda_v))
    truncated = attached is not None and _int(attached.value) is not None and len(gpus) < _int(attached.value)
    yield NvidiaSmiReport(
        source="nvidia-smi -q", artifact=doc.artifact, driver_version=driver_v, cuda_version=cuda_v,
        node=doc.meta.get("node"), attached_gpus=_int(attached.value) if attached else None, gpus=tuple(gpus),
        errors=tuple(_errors(doc)), truncated=truncated, line=doc.first_line,
        evidence=doc.evidence(driver.index if driver else 0),
    )


def _q_gpu(doc: Document, g: _Node, ordinal: int, driver, cuda) -> GpuDevice:
    ev: dict[str, Evidence] = {"gpu": doc.evidence(g.index)}
    errs: list[tuple[str, str]] = []

    def val(name: str, *path) -> str | None:
        node = g.find(*path)
        if node is None or node.value is None:
            return None
        ev.setdefault(name, doc.evidence(node.index))
        if _error_value(node.value):
            errs.append((name, node.value.strip("[] ")))
        return node.value

    ecc_sec = g.find("ECC Errors")
    reasons_sec = g.find(("Clocks Event Reasons", "Clocks Throttle Reasons"))
    reasons = None
    if reasons_sec is not None:
        reasons = tuple(
            rid for n in reasons_sec.walk() if _yes(n.value) and (rid := clock_reasons.from_label(n.key))
        )
        active = [n for n in reasons_sec.walk() if _yes(n.value)]
        ev["throttle"] = doc.evidence(active[0].index if active else reasons_sec.index)
        for n in active:
            if rid := clock_reasons.from_label(n.key):
                ev[f"throttle:{rid}"] = doc.evidence(n.index)
    procs_sec = g.find("Processes")
    power = ("GPU Power Readings", "Power Readings")
    return GpuDevice(
        index=ordinal,  # -q prints no index; GPUs come in index (PCI bus) order
        name=val("name", "Product Name"),
        uuid=val("uuid", "GPU UUID"),
        pci_bus_id=normalise_pci(val("pci", "PCI", "Bus Id") or _Q_GPU.match(g.key).group("pci")),
        driver_version=driver,
        cuda_version=cuda,
        memory_total_mib=_int(val("memory", "FB Memory Usage", "Total")),
        memory_used_mib=_int(val("memory_used", "FB Memory Usage", "Used")),
        temperature_c=_int(val("temperature", "Temperature", "GPU Current Temp")),
        temp_shutdown_c=_int(val("temp_shutdown", "Temperature", "GPU Shutdown Temp")),
        temp_slowdown_c=_int(val("temp_slowdown", "Temperature", "GPU Slowdown Temp")),
        temp_max_operating_c=_int(val("temp_max_operating", "Temperature", "GPU Max Operating Temp")),
        temp_tlimit_margin_c=_int(val("temperature_tlimit", "Temperature", "GPU T.Limit Temp")),
        temp_tlimit_slowdown_c=_int(val("temp_tlimit_slowdown", "Temperature", "GPU Slowdown T.Limit Temp")),
        temp_tlimit_shutdown_c=_int(val("temp_tlimit_shutdown", "Temperature", "GPU Shutdown T.Limit Temp")),
        power_draw_w=_num(val("power", power, ("Power Draw", "Average Power Draw", "Instantaneous Power Draw"))),
        power_limit_w=_num(val("power_limit", power, ("Current Power Limit", "Enforced Power Limit", "Power Limit"))),
        performance_state=val("performance_state", "Performance State"),
        utilization_gpu_pct=_int(val("utilization", "Utilization", "Gpu")),
        persistence_mode=_yes(val("persistence_mode", "Persistence Mode")),
        ecc_enabled=_yes(val("ecc_mode", "ECC Mode", "Current")),
        ecc_pending=_yes(val("ecc_pending", "ECC Mode", "Pending")),
        ecc=_q_ecc(doc, ecc_sec, ev) if ecc_sec else EccCounts(),
        retired_pages_sbe=_int(val("retired_pages", "Retired Pages", ("Single Bit ECC", "Single Bit ECC Errors"))),
        retired_pages_dbe=_int(val("retired_pages_dbe", "Retired Pages", ("Double Bit ECC", "Double Bit ECC Errors"))),
        retired_pages_pending=_yes(val("retired_pages_pending", "Retired Pages", ("Pending Page Blacklist", "Pending Page Retirement", "Pending"))),
        remap_correctable=_int(val("remap_correctable", "Remapped Rows", ("Correctable Error", "Correctable"))),
        remap_uncorrectable=_int(val("remap_uncorrectable", "Remapped Rows", ("Uncorrectable Error", "Uncorrectable"))),
        remap_pending=_yes(val("remap_pending", "Remapped Rows", "Pending")),
        remap_failure=_yes(val("remap_failure", "Remapped Rows", ("Remapping Failure Occurred", "Remapping Failure"))),
        throttle_reasons=reasons,
        pcie_gen_current=_int(val("pcie_gen", "PCI", "GPU Link Info", "PCIe Generation", "Current")),
        pcie_gen_max=_int(val("pcie_gen_max", "PCI", "GPU Link Info", "PCIe Generation", "Max")),
        pcie_width_current=_int(val("pcie_width", "PCI", "GPU Link Info", "Link Width", "Current")),
        pcie_width_max=_int(val("pcie_width_max", "PCI", "GPU Link Info", "Link Width", "Max")),
        mig_current=_yes(val("mig", "MIG Mode", "Current")),
        mig_pending=_yes(val("mig_pending", "MIG Mode", "Pending")),
        processes=_q_processes(procs_sec) if procs_sec is not None else None,
        fabric_state=_present(val("fabric", "Fabric", "State")),
        fabric_status=_present(val("fabric_status", "Fabric", "Status")),
        field_errors=tuple(errs),
        node=doc.meta.get("node"),
        source="nvidia-smi -q",
        artifact=doc.artifact,
        line=doc.lineno(g.index),
        evidence=ev,
    )


def _present(text: str | None) -> str | None:
    return None if _missing(text) else text.strip()


def _q_ecc(doc: Document, sec: _Node, ev: dict) -> EccCounts:
    def counts(scope: str) -> tuple[int | None, int | None]:
        s = sec.child(scope)
        if s is None:
            return None, None
        single, double = s.child("Single Bit"), s.child("Double Bit")
        if single or double:  # before R470: per-location counters with a Total
            sbe = _int(single.child("Total").value) if single and single.child("Total") else None
            dbe_node = double.child("Total") if double else None
            if dbe_node is not None:
                ev.setdefault(f"ecc_{scope.lower()}", doc.evidence(dbe_node.index))
            return sbe, _int(dbe_node.value) if dbe_node is not None else None
        corr = [c for c in s.children if "correctable" in c.key.lower() and "uncorrectable" not in c.key.lower()]
        unc = [c for c in s.children if "uncorrectable" in c.key.lower()]
        if unc:
            worst = max(unc, key=lambda c: _int(c.value) or 0)
            ev.setdefault(f"ecc_{scope.lower()}", doc.evidence(worst.index))
        return _sum(c.value for c in corr), _sum(c.value for c in unc)

    vs, vd = counts("Volatile")
    as_, ad = counts("Aggregate")
    return EccCounts(volatile_sbe=vs, volatile_dbe=vd, aggregate_sbe=as_, aggregate_dbe=ad)


def _sum(values: Iterable[str | None]) -> int | None:
    nums = [n for n in (_int(v) for v in values) if n is not None]
    return sum(nums) if nums else None


def _q_processes(sec: _Node) -> tuple[GpuProcess, ...]:
    """Entries repeat the same keys; each starts at "GPU instance ID" (R450+) or "Process ID"."""
    if sec.value and sec.value.strip().lower() == "none":
        return ()
    entries: list[dict[str, str]] = []
    starter = "GPU instance ID" if any(c.key == "GPU instance ID" for c in sec.children) else "Process ID"
    for c in sec.children:
        if c.key == starter or not entries:
            entries.append({})
        entries[-1][c.key] = c.value or ""
        for cc in c.children:  # R450+ nests Type/Name/Used GPU Memory under Process ID
            entries[-1][cc.key] = cc.value or ""
    return tuple(
        GpuProcess(pid=_int(e.get("Process ID")), name=e.get("Name") or e.get("Process Name"), type=e.get("Type"),
                   used_memory_mib=_int(e.get("Used GPU Memory")), gpu_instance_id=_int(e.get("GPU instance ID")),
                   compute_instance_id=_int(e.get("Compute instance ID")))
        for e in entries if e.get("Process ID")
    )


# ---------------------------------------------------------------------------------------- -q -x


@parser("nvidia-smi.xml", "nvidia-smi -q -x: the full query as XML (nvsmi_device DTD v8-v12)", sniff=_sniff_xml)
def parse_xml(doc: Document) -> Iterable[NvidiaSmiReport]:
    text = doc.text
    if "<!ENTITY" in text:
        raise UnusableData("XML declares entities; nvidia-smi never does, so it is not read")
    import xml.etree.ElementTree as ET  # XML documents only

    truncated = False
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        root, truncated = _recover(doc, exc), True
    if root.tag != "nvidia_smi_log":
        raise UnusableData(f"XML root is <{root.tag}>, not <nvidia_smi_log>")
    gpu_lines = [i for i, ln in enumerate(doc.lines) if "<gpu id=" in ln or ln.strip() == "<gpu>"]
    driver = _present(root.findtext("driver_version"))
    cuda = _cuda(root.findtext("cuda_version"))
    gpus = []
    for n, g in enumerate(root.findall("gpu")):
        start = gpu_lines[n] if n < len(gpu_lines) else 0
        end = gpu_lines[n + 1] if n + 1 < len(gpu_lines) else len(doc.lines)
        gpus.append(_xml_gpu(doc, g, n, start, end, driver, cuda))
    attached = _int(root.findtext("attached_gpus"))
    yield NvidiaSmiReport(
        source="nvidia-smi -q -x", artifact=doc.artifact, driver_version=driver, cuda_version=cuda,
        node=doc.meta.get("node"), attached_gpus=attached, gpus=tuple(gpus), errors=tuple(_errors(doc)),
        truncated=truncated or (attached is not None and len(gpus) < attached),
        timestamp=_present(root.findtext("timestamp")), line=doc.first_line,
        evidence=doc.evidence(next((i for i, ln in enumerate(doc.lines) if "<driver_version>" in ln), 0)),
    )


def _recover(doc: Document, exc: ET.ParseError) -> ET.Element:
    """A cut-off document: keep every GPU that closed, drop the partial one."""
    import xml.etree.ElementTree as ET

    last = max((i for i, ln in enumerate(doc.lines) if ln.strip() == "</gpu>"), default=None)
    where = f"line {doc.lineno(exc.position[0] - 1)}" if getattr(exc, "position", None) else "unknown line"
    if last is None:
        raise UnusableData(f"XML is truncated or malformed ({where}) before the first complete <gpu>") from None
    start = next((i for i, ln in enumerate(doc.lines) if "<nvidia_smi_log" in ln), 0)
    try:
        return ET.fromstring("\n".join(doc.lines[start : last + 1]) + "\n</nvidia_smi_log>")
    except ET.ParseError as exc2:
        raise UnusableData(f"XML is malformed ({where}): {exc2}") from None


def _xml_gpu(doc: Document, g: ET.Element, ordinal: int, start: int, end: int, driver, cuda) -> GpuDevice:
    # Where each tag first appears inside this GPU's lines, for evidence (ElementTree keeps no lines).
    first_line: dict[str, int] = {}
    for i in range(start, end):
        for tag in _TAG.findall(doc.lines[i]):
            first_line.setdefault(tag, i)
    ev: dict[str, Evidence] = {"gpu": doc.evidence(start)}
    errs: list[tuple[str, str]] = []

    def val(name: str, *paths: str) -> str | None:
        for path in paths:
            el = g.find(path)
            if el is not None and el.text is not None and el.text.strip():
                tag = path.rsplit("/", 1)[-1]
                if tag in first_line:
                    ev.setdefault(name, doc.evidence(first_line[tag]))
                if _error_value(el.text):
                    errs.append((name, el.text.strip("[] \n\t")))
                return el.text.strip()
        return None

    power = ("gpu_power_readings", "power_readings")
    reasons, reason_lines = _xml_reasons(g, first_line)
    for key, line in reason_lines.items():
        ev[key] = doc.evidence(line)
    return GpuDevice(
        index=ordinal,
        name=val("name", "product_name"),
        uuid=val("uuid", "uuid"),
        pci_bus_id=normalise_pci(val("pci", "pci/pci_bus_id") or g.get("id")),
        driver_version=driver,
        cuda_version=cuda,
        memory_total_mib=_int(val("memory", "fb_memory_usage/total")),
        memory_used_mib=_int(val("memory_used", "fb_memory_usage/used")),
        temperature_c=_int(val("temperature", "temperature/gpu_temp")),
        temp_shutdown_c=_int(val("temp_shutdown", "temperature/gpu_temp_max_threshold")),
        temp_slowdown_c=_int(val("temp_slowdown", "temperature/gpu_temp_slow_threshold")),
        temp_max_operating_c=_int(val("temp_max_operating", "temperature/gpu_temp_max_gpu_threshold")),
        temp_tlimit_margin_c=_int(val("temperature_tlimit", "temperature/gpu_temp_tlimit")),
        temp_tlimit_slowdown_c=_int(val("temp_tlimit_slowdown", "temperature/gpu_temp_slow_tlimit_threshold")),
        temp_tlimit_shutdown_c=_int(val("temp_tlimit_shutdown", "temperature/gpu_temp_max_tlimit_threshold")),
        power_draw_w=_num(val("power", *(f"{p}/{t}" for p in power for t in ("power_draw", "average_power_draw", "instant_power_draw")))),
        power_limit_w=_num(val("power_limit", *(f"{p}/{t}" for p in power for t in ("current_power_limit", "enforced_power_limit", "power_limit")))),
        performance_state=val("performance_state", "performance_state"),
        utilization_gpu_pct=_int(val("utilization", "utilization/gpu_util")),
        persistence_mode=_yes(val("persistence_mode", "persistence_mode")),
        ecc_enabled=_yes(val("ecc_mode", "ecc_mode/current_ecc")),
        ecc_pending=_yes(val("ecc_pending", "ecc_mode/pending_ecc")),
        ecc=_xml_ecc(doc, g, first_line, ev),
        retired_pages_sbe=_int(val("retired_pages", "retired_pages/multiple_single_bit_retirement/retired_count")),
        retired_pages_dbe=_int(val("retired_pages_dbe", "retired_pages/double_bit_retirement/retired_count")),
        retired_pages_pending=_yes(val("retired_pages_pending", "retired_pages/pending_retirement", "retired_pages/pending_blacklist")),
        remap_correctable=_int(val("remap_correctable", "remapped_rows/remapped_row_corr")),
        remap_uncorrectable=_int(val("remap_uncorrectable", "remapped_rows/remapped_row_unc")),
        remap_pending=_yes(val("remap_pending", "remapped_rows/remapped_row_pending")),
        remap_failure=_yes(val("remap_failure", "remapped_rows/remapped_row_failure")),
        throttle_reasons=reasons,
        pcie_gen_current=_int(val("pcie_gen", "pci/pci_gpu_link_info/pcie_gen/current_link_gen")),
        pcie_gen_max=_int(val("pcie_gen_max", "pci/pci_gpu_link_info/pcie_gen/max_link_gen")),
        pcie_width_current=_int(val("pcie_width", "pci/pci_gpu_link_info/link_widths/current_link_width")),
        pcie_width_max=_int(val("pcie_width_max", "pci/pci_gpu_link_info/link_widths/max_link_width")),
        mig_current=_yes(val("mig", "mig_mode/current_mig")),
        mig_pending=_yes(val("mig_pending", "mig_mode/pending_mig")),
        mig_devices=tuple(_xml_migs(doc, g, ordinal, first_line)),
        processes=_xml_processes(g),
        fabric_state=_present(val("fabric", "fabric/state")),
        fabric_status=_present(val("fabric_status", "fabric/status")),
        field_errors=tuple(errs),
        node=doc.meta.get("node"),
        source="nvidia-smi -q -x",
        artifact=doc.artifact,
        line=doc.lineno(start),
        evidence=ev,
    )


def _xml_reasons(g: ET.Element, first_line: dict[str, int]) -> tuple[tuple[str, ...] | None, dict[str, int]]:
    """Active reason ids, and evidence lines: "throttle" (the first active, or the block) and "throttle:<id>"."""
    for block, prefix in (("clocks_event_reasons", "clocks_event_reason_"), ("clocks_throttle_reasons", "clocks_throttle_reason_")):
        el = g.find(block)
        if el is None:
            continue
        active = [c.tag for c in el if c.tag.startswith(prefix) and _yes(c.text)]
        ids = tuple(t[len(prefix):] for t in active if t[len(prefix):] in clock_reasons.by_id())
        lines = {f"throttle:{t[len(prefix):]}": first_line[t] for t in active if t in first_line}
        block_line = first_line.get(active[0]) if active else first_line.get(block)
        if block_line is not None:
            lines["throttle"] = block_line
        return ids, lines
    return None, {}


def _xml_ecc(doc: Document, g: ET.Element, first_line: dict[str, int], ev: dict) -> EccCounts:
    errors = g.find("ecc_errors")
    if errors is None:
        return EccCounts()

    def counts(scope: str) -> tuple[int | None, int | None]:
        s = errors.find(scope)
        if s is None:
            return None, None
        if s.find("single_bit") is not None or s.find("double_bit") is not None:  # before R470
            return _int(s.findtext("single_bit/total")), _int(s.findtext("double_bit/total"))
        corr = [c.text for c in s if c.tag.endswith("_correctable") and "uncorrectable" not in c.tag]
        unc = [c for c in s if "uncorrectable" in c.tag]
        bad = [c for c in unc if (_int(c.text) or 0) > 0]
        if bad and bad[0].tag in first_line:
            ev.setdefault(f"ecc_{scope}", doc.evidence(first_line[bad[0].tag]))
        return _sum(corr), _sum(c.text for c in unc)

    vs, vd = counts("volatile")
    as_, ad = counts("aggregate")
    return EccCounts(volatile_sbe=vs, volatile_dbe=vd, aggregate_sbe=as_, aggregate_dbe=ad)


def _xml_migs(doc: Document, g: ET.Element, gpu_index: int, first_line: dict[str, int]) -> Iterable[MigDevice]:
    line = first_line.get("mig_devices")
    for m in g.findall("mig_devices/mig_device"):
        yield MigDevice(
            gpu_index=gpu_index,
            gpu_instance_id=_int(m.findtext("gpu_instance_id")),
            compute_instance_id=_int(m.findtext("compute_instance_id")),
            index=_int(m.findtext("index")),
            memory_used_mib=_int(m.findtext("fb_memory_usage/used")),
            memory_total_mib=_int(m.findtext("fb_memory_usage/total")),
            sm_count=_int(m.findtext("device_attributes/shared/multiprocessor_count")),
            evidence=doc.evidence(line) if line is not None else None,
        )


def _xml_processes(g: ET.Element) -> tuple[GpuProcess, ...] | None:
    el = g.find("processes")
    if el is None:
        return None
    return tuple(
        GpuProcess(
            pid=_int(p.findtext("pid")), name=_present(p.findtext("process_name")), type=_present(p.findtext("type")),
            used_memory_mib=_int(p.findtext("used_memory")), gpu_instance_id=_int(p.findtext("gpu_instance_id")),
            compute_instance_id=_int(p.findtext("compute_instance_id")),
        )
        for p in el.findall("process_info")
    )


# ---------------------------------------------------------------------------------------- --query-gpu CSV

# `nvidia-smi --query-gpu=FIELDS --format=csv[,noheader][,nounits]`: the field names of `--help-query-gpu` (and their
# aliases), each to the GpuDevice attribute it fills and how its value reads. Values carry units unless `nounits`
# ("98 %", "21491 MiB", "692.73 W"), and say "[N/A]" or "[Not Supported]" where the GPU has no such value.
_HEX = lambda v: int(v, 16) if v and re.match(r"^\s*0x[0-9a-fA-F]+\s*$", v) else None  # noqa: E731
_CSV_FIELDS: dict[str, tuple[str, object]] = {
    "index": ("index", _int), "name": ("name", str), "gpu_name": ("name", str), "uuid": ("uuid", str), "gpu_uuid": ("uuid", str),
    "pci.bus_id": ("pci_bus_id", normalise_pci), "gpu_bus_id": ("pci_bus_id", normalise_pci),
    "driver_version": ("driver_version", str), "persistence_mode": ("persistence_mode", _yes),
    "temperature.gpu": ("temperature_c", _int), "utilization.gpu": ("utilization_gpu_pct", _int),
    "memory.total": ("memory_total_mib", _int), "memory.used": ("memory_used_mib", _int),
    "power.draw": ("power_draw_w", _num), "power.draw.instant": ("power_draw_w", _num), "power.draw.average": ("power_draw_w", _num),
    "power.limit": ("power_limit_w", _num), "enforced.power.limit": ("power_limit_w", _num), "pstate": ("performance_state", str),
    "ecc.mode.current": ("ecc_enabled", _yes), "ecc.mode.pending": ("ecc_pending", _yes),
    "ecc.errors.corrected.volatile.total": ("ecc:volatile_sbe", _int), "ecc.errors.uncorrected.volatile.total": ("ecc:volatile_dbe", _int),
    "ecc.errors.corrected.aggregate.total": ("ecc:aggregate_sbe", _int), "ecc.errors.uncorrected.aggregate.total": ("ecc:aggregate_dbe", _int),
    "retired_pages.single_bit_ecc.count": ("retired_pages_sbe", _int), "retired_pages.sbe": ("retired_pages_sbe", _int),
    "retired_pages.double_bit.count": ("retired_pages_dbe", _int), "retired_pages.dbe": ("retired_pages_dbe", _int),
    "retired_pages.pending": ("retired_pages_pending", _yes),
    "remapped_rows.correctable": ("remap_correctable", _int), "remapped_rows.uncorrectable": ("remap_uncorrectable", _int),
    "remapped_rows.pending": ("remap_pending", _yes), "remapped_rows.failure": ("remap_failure", _yes),
    "clocks_event_reasons.active": ("throttle_mask", _HEX), "clocks_throttle_reasons.active": ("throttle_mask", _HEX),
    "pcie.link.gen.current": ("pcie_gen_current", _int), "pcie.link.gen.gpucurrent": ("pcie_gen_current", _int),
    "pcie.link.gen.max": ("pcie_gen_max", _int), "pcie.link.gen.gpumax": ("pcie_gen_max", _int),
    "pcie.link.width.current": ("pcie_width_current", _int), "pcie.link.width.max": ("pcie_width_max", _int),
    "mig.mode.current": ("mig_current", _yes), "mig.mode.pending": ("mig_pending", _yes),
}
_QUERY_FLAG = re.compile(r"--query-gpu[= ](?P<fields>[\w.,]+)")
_UNIT = re.compile(r"\s*\[[^\]]*\]\s*$")  # "utilization.gpu [%]": the header names the unit the values are in


def _csv_header(line: str) -> list[str] | None:
    """The field names of a `--format=csv` header line, when at least two are nvidia-smi's and one is a dotted
    query name (pci.bus_id, memory.used) or they are index and uuid: `name, uuid` alone is any export."""
    names = [_UNIT.sub("", c).strip().lower() for c in line.split(",")]
    known = {n for n in names if n in _CSV_FIELDS}
    return names if len(known) >= 2 and (any("." in n for n in known) or {"index", "uuid"} <= known) else None


def _csv_fields(doc: Document) -> tuple[list[str] | None, int]:
    """(field names, index of the first data line): from the header, else from the command's --query-gpu."""
    for i, ln in enumerate(doc.lines[:5]):
        if ln.strip():
            if (names := _csv_header(ln)) is not None:
                return names, i + 1
            break
    m = _QUERY_FLAG.search(doc.command or "")
    return ([f.lower() for f in m.group("fields").split(",")] if m else None), 0


def _sniff_csv(doc: Document) -> int:
    if "--query-gpu" in (doc.command or ""):
        return SURE
    first = next((ln for ln in doc.head(5) if ln.strip()), "")
    return SURE if "," in first and _csv_header(first) is not None else NO


@parser("nvidia-smi.csv", "nvidia-smi --query-gpu=... --format=csv (with or without header and units)", sniff=_sniff_csv)
def parse_csv(doc: Document) -> Iterable[NvidiaSmiReport]:
    import csv

    names, start = _csv_fields(doc)
    if not names:
        raise UnusableData("no --query-gpu field names: neither a CSV header nor the command that printed it")
    gpus: list[GpuDevice] = []
    short = 0
    for i in range(start, len(doc.lines)):
        line = doc.lines[i]
        if not line.strip() or _error_line(line):
            continue
        cells = next(csv.reader([line], skipinitialspace=True))
        if len(cells) != len(names):
            short += 1  # a row cut short (or run on): not this GPU's values
            continue
        values: dict = {}
        ecc: dict = {}
        errs = []
        for name, cell in zip(names, cells):
            spec = _CSV_FIELDS.get(name)
            if spec is None or _missing(cell) or cell.strip().lower() == "[not supported]":
                continue
            if _error_value(cell):
                errs.append((spec[0], cell.strip("[] ")))
                continue
            attr, read = spec
            value = read(cell.strip())
            if value is None:
                continue
            if attr.startswith("ecc:"):
                ecc[attr[4:]] = value
            else:
                values[attr] = value
        if "throttle_mask" in values:
            values["throttle_reasons"] = clock_reasons.decode(values["throttle_mask"])
        ev = doc.evidence(i)
        gpus.append(GpuDevice(
            **{"index": len(gpus), **values}, ecc=EccCounts(**ecc), field_errors=tuple(errs), node=doc.meta.get("node"),
            source="nvidia-smi --query-gpu", artifact=doc.artifact, line=doc.lineno(i), evidence={"gpu": ev},
        ))
    if not gpus and not _errors(doc):
        raise UnusableData(f"no complete GPU row under the --query-gpu fields ({short} row(s) with another number of values: cut short?)"
                           if short else "a --query-gpu header without a GPU row")
    driver = next((g.driver_version for g in gpus if g.driver_version), None)
    yield NvidiaSmiReport(source="nvidia-smi --query-gpu", artifact=doc.artifact, driver_version=driver, node=doc.meta.get("node"),
                          attached_gpus=len(gpus) or None, gpus=tuple(gpus), errors=tuple(_errors(doc)), line=doc.first_line,
                          evidence=gpus[0].evidence["gpu"] if gpus else doc.evidence(0))
