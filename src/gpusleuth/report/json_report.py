"""The JSON report (schema gpusleuth/report/v1): the contract other tools build on."""

from __future__ import annotations

import json

from gpusleuth.model.report import Report


def render(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False, default=str) + "\n"
