"""The JSON report (schema gpusleuth/report/v1): the contract other tools build on."""

from __future__ import annotations

from gpusleuth.gcpause import gc_paused
from gpusleuth.model.report import Report
from gpusleuth.report import jsonenc


def render(report: Report) -> str:
    with gc_paused():  # the report's tree holds no cycle (see write)
        return jsonenc.dumps(as_dict(report), indent=2, end="\n")  # json.dumps(..., indent=2, ensure_ascii=False, default=str) + "\n"


def write(report: Report, fh) -> None:
    """render(report), written to the text file fh as it is encoded (a fleet's report is 100 MB and more). The
    cycle collector is paused meanwhile: the report's tree (hundreds of thousands of dicts at a few thousand nodes)
    holds no cycle, and it is freed by reference counting when the text is written."""
    with gc_paused():
        jsonenc.write(as_dict(report), fh, indent=2, end="\n")


def as_dict(report: Report) -> dict:
    """The report's contract, with `seen_before`: the public incidents whose lines match (docs/report.md)."""
    from gpusleuth.analysis.seen_before import seen_before

    out = report.to_dict()
    matches, _ = seen_before(report)
    out["seen_before"] = [m.to_dict() for m in matches]
    return out
