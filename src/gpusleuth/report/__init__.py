"""Renderers: render(report) -> str, one module per format."""

from __future__ import annotations

from typing import Callable

from gpusleuth.model.report import Report


def renderer(fmt: str) -> Callable[[Report], str]:
    if fmt == "json":
        from gpusleuth.report.json_report import render
    elif fmt == "markdown":
        from gpusleuth.report.markdown import render
    elif fmt == "sarif":
        from gpusleuth.report.sarif import render
    elif fmt == "junit":
        from gpusleuth.report.junit import render
    elif fmt == "html":
        from gpusleuth.report.html import render
    else:
        from gpusleuth.report.text import render
    return render
