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


EXAMPLES = ("peermem-race", "containerd-wrong-instance", "device-plugin-unregistered")
VOLATILE = ("analysed_at",)  # source fields that depend on when the report was made, not on the input
RECORDED_ON = "2026-11-21"  # the day the golden files were recorded: end-of-life judgements are made as of it


def stable_report(spec: str) -> dict:
    """The JSON report with the fields that change from run to run removed (for byte-level golden files),
    made as of RECORDED_ON so that the files do not age."""
    import os

    from gpusleuth.facts.clock import ENV

    before = os.environ.get(ENV)
    os.environ[ENV] = RECORDED_ON
    try:
        rep = report(spec)
    finally:
        if before is None:
            del os.environ[ENV]
        else:
            os.environ[ENV] = before
    for key in VOLATILE:
        rep["source"].pop(key, None)
    return rep


def golden_path(name: str) -> Path:
    return Path(__file__).parent / "cases" / "golden" / f"{name}.json"
