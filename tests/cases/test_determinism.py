"""The same input gives the same report, whatever the interpreter's hash seed (set iteration order)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent.parent
INPUTS = ["example:peermem-race", "example:containerd-wrong-instance", "example:device-plugin-unregistered",
          str(ROOT / "tests" / "fixtures" / "kubectl"), str(ROOT / "tests" / "cases" / "incidents" / "xid79-one-of-eight" / "full")]


def _report(source: str, seed: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "gpusleuth", "diagnose", source, "--format", "json"], capture_output=True,
                         text=True, env={**os.environ, "PYTHONHASHSEED": seed}, timeout=120).stdout
    rep = json.loads(out)
    rep["source"].pop("analysed_at", None)
    return rep


@pytest.mark.parametrize("source", INPUTS, ids=lambda s: Path(s).parent.name if Path(s).name == "full" else Path(s).name)
def test_report_does_not_depend_on_the_hash_seed(source):
    assert _report(source, "1") == _report(source, "2")
