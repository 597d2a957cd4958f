"""Build log model objects from pasted text for check tests (one LogLine per line, numbered like the file),
and Facts from model objects; the real signature table matches them through the Logs combiner."""

from __future__ import annotations

from datetime import datetime

from gpusleuth.facts import Facts
from gpusleuth.model.logs import ContainerLog, LogLine


def container_log(artifact: str, text: str, *, pod=None, namespace=None, container=None, node=None, previous=False,
                  kind="container", first=1, times: dict[int, datetime] | None = None) -> ContainerLog:
    """times: line number -> time, for the lines whose stamp matters to a test."""
    lines = []
    for i, raw in enumerate(text.splitlines()):
        n = first + i
        if not raw.strip():
            continue
        level = "error" if ("ERROR" in raw or "level=error" in raw) else None
        lines.append(LogLine(artifact, n, raw, raw.strip(), (times or {}).get(n), None, level, None, container))
    return ContainerLog(artifact, tuple(lines), pod=pod, namespace=namespace, container=container, node=node,
                        previous=previous, kind=kind)


def facts_with(*objs) -> Facts:
    f = Facts("test")
    for o in objs:
        f.add(o)
    return f
