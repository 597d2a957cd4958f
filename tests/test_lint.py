"""Pyflakes-level errors (undefined names, unused or shadowed imports, dead assignments) fail the build:
merges of parallel work are where they creep in."""

import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).parent.parent / "src" / "gpusleuth"


def test_no_pyflakes_errors_in_the_package():
    pytest.importorskip("ruff")
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "F", str(SRC)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
