"""The incident corpus as tests read it: bench/accuracy.py, which knows the incidents and which third is held out of
tuning, loaded once for every test module that needs it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load_accuracy():
    spec = importlib.util.spec_from_file_location("accuracy", ROOT / "bench" / "accuracy.py")
    module = sys.modules.setdefault("accuracy", importlib.util.module_from_spec(spec))  # dataclasses look their module up
    if not hasattr(module, "held_out"):
        spec.loader.exec_module(module)
    return module


accuracy = _load_accuracy()

# The incidents a test may tune on (never the held-out third), in name order.
TUNED = sorted(p for p in (ROOT / "tests" / "cases" / "incidents").iterdir() if p.is_dir() and not accuracy.held_out(p.name))

# A klog line no signature or view reads: the filler of a made big log.
INFO = "I1121 11:5{m}:{s:02d}.000000       1 reconcile.go:88] labels of node gpu-node-07 are up to date (pass {i})"
