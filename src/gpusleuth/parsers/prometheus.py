"""A dcgm-exporter (or Prometheus federate) text scrape -> one ``GpuMetricSample`` per GPU / MIG instance.

Values are read with the official client's parser (``prometheus_client.parser``), which knows the
exposition format's escaping; line numbers for evidence come from a light index of the sample lines.
Lines the format does not allow (a scrape cut mid-line) are dropped and reported, the rest is read.
Only DCGM fields are kept: this is about GPUs, not about every exporter in a federate dump.
"""

from __future__ import annotations

import re
from typing import Iterable

from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.model.finding import Gap
from gpusleuth.model.gpu import GpuMetricSample, normalise_pci
from gpusleuth.parsers.base import NO, SURE, parser

_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>[-+]?(?:\d[\d.eE+-]*|Inf|NaN|inf|nan))(?:\s+-?\d+)?\s*$")
_COMMENT = re.compile(r"^#\s*(?:HELP|TYPE|EOF)?")
_LABEL = re.compile(r'(?P<k>[a-zA-Z_]\w*)="(?P<v>(?:[^"\\]|\\.)*)"')
_KEY_LABELS = ("gpu", "UUID", "GPU_I_ID")


def _sniff(doc: Document) -> int:
    head = doc.head(30)
    return SURE if any(ln.startswith(("# HELP DCGM_FI_", "# TYPE DCGM_FI_", "DCGM_FI_")) for ln in head) else NO


def _key(labels: dict) -> tuple:
    return tuple(labels.get(k) for k in _KEY_LABELS)


@parser("dcgm-exporter", "dcgm-exporter / Prometheus text scrape of DCGM_FI_* fields", sniff=_sniff)
def parse(doc: Document) -> Iterable[GpuMetricSample | Gap]:
    from prometheus_client.parser import text_string_to_metric_families

    kept: list[str] = []
    where: dict[tuple, int] = {}  # (field, gpu, UUID, GPU_I_ID) -> line index
    dropped = []
    for i, line in enumerate(doc.lines):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            if _COMMENT.match(s):
                kept.append(s)
            continue
        m = _SAMPLE.match(s)
        if not m:
            dropped.append(doc.lineno(i))
            continue
        kept.append(s)
        if m.group("name").startswith("DCGM_FI_"):
            labels = {lm.group("k"): lm.group("v") for lm in _LABEL.finditer(m.group("labels") or "")}
            where.setdefault((m.group("name"), *_key(labels)), i)
    try:
        families = list(text_string_to_metric_families("\n".join(kept) + "\n"))
    except ValueError as exc:
        raise UnusableData(f"not a valid Prometheus text scrape: {exc}") from None
    samples: dict[tuple, dict] = {}
    for fam in families:
        if not fam.name.startswith("DCGM_FI_"):
            continue
        for s in fam.samples:
            entry = samples.setdefault(_key(s.labels), {"labels": {}, "values": {}, "evidence": {}})
            entry["labels"].update({k: v for k, v in s.labels.items() if v})
            entry["values"][fam.name] = float(s.value)
            line = where.get((fam.name, *_key(s.labels)))
            if line is not None:
                entry["evidence"][fam.name] = doc.evidence(line)
    if not samples:
        raise UnusableData("scrape holds no DCGM_FI_* samples" + (f" (lines {dropped[:5]} malformed)" if dropped else ""))
    for entry in samples.values():
        lab = entry["labels"]
        yield GpuMetricSample(
            artifact=doc.artifact, gpu=lab.get("gpu"), uuid=lab.get("UUID"), pci_bus_id=normalise_pci(lab.get("pci_bus_id")),
            model=lab.get("modelName"), node=lab.get("Hostname"), driver_version=lab.get("DCGM_FI_DRIVER_VERSION"),
            mig_profile=lab.get("GPU_I_PROFILE"), gpu_instance_id=lab.get("GPU_I_ID"), pod=lab.get("pod"),
            namespace=lab.get("namespace"), container=lab.get("container"), values=entry["values"], evidence=entry["evidence"],
        )
    if dropped:
        shown = ", ".join(map(str, dropped[:5])) + (" ..." if len(dropped) > 5 else "")
        yield Gap("artifact", f"dcgm-exporter: {len(dropped)} malformed line(s) not read (line {shown}); a scrape cut short?", doc.artifact)
