"""Helpers for the golden tests: run a bundled example (or a disguised copy of it) and read its report as
the JSON contract a user gets, so assertions are about semantics, never about rendered text."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.report.json_report import render
from gpusleuth.sources import examples_root, open_source


def example_dir(name: str) -> Path:
    return examples_root() / name


def report(spec: str) -> dict:
    import json

    return json.loads(render(diagnose(open_source(spec))))


def disguised(name: str, tmp: Path, quote: bool = False) -> Path:
    """The example's artifacts under meaningless names (and, with quote, pasted as Markdown quotes)."""
    out = tmp / "paste"
    out.mkdir(parents=True)
    files = sorted(p for p in example_dir(name).rglob("*") if p.is_file() and p.name != "example.toml")
    for i, p in enumerate(files):
        target = out / f"file{i:02d}.txt"
        if quote:
            text = p.read_text(encoding="utf-8")
            target.write_text("".join("> " + ln for ln in text.splitlines(keepends=True)), encoding="utf-8")
        else:
            shutil.copy(p, target)
    return out


def line_of(name: str, artifact: str, line: int) -> str:
    """The text of an artifact's line in the bundled example, to prove a citation points at it."""
    lines = (example_dir(name) / artifact).read_text(encoding="utf-8").splitlines()
    return lines[line - 1]


MODPROBE = re.compile(r"modprobe.*nvidia_peermem.*Invalid argument")
