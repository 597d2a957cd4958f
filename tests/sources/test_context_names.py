"""Which must-gather files are read first (sources/mustgather.py is_context), told by their ends, as the patterns say."""

from __future__ import annotations

import fnmatch
import random

from gpusleuth.sources import mustgather


def test_is_context_is_the_patterns():
    rnd = random.Random(2)
    parts = ["gpu", "_operator_pod", "_operand_pods", ".yaml", ".status", ".yml", "/", "x", "must-gather.log",
             "must-gather.stderr.log", "version", "_", "nvidia-gpu-operator"]
    hits = 0
    for _ in range(20000):
        name = "".join(rnd.choice(parts) for _ in range(rnd.randint(1, 5)))
        b = name.rsplit("/", 1)[-1]
        want = b in mustgather.METADATA[:2] or any(fnmatch.fnmatchcase(b, p) for p in mustgather.CONTEXT)
        assert mustgather.is_context(name) == want, name
        hits += want
    assert hits > 500
