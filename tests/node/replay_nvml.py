"""NVML as one real GPU answered it: each call the node probe made on an H100 (tests/node/h100/nvml-calls.json,
recorded through nvidia-ml-py on the machine) is answered with what the library returned there, in the same
order. Constants, structures and ``NVMLError`` classes are the real ``pynvml``'s.

A call the recording does not hold fails the test: when the probe starts asking NVML something new, record
again on a GPU (docs/node.md says how) rather than inventing the answer.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from pathlib import Path
from types import SimpleNamespace

import pynvml

RECORDING = Path(__file__).parent / "h100" / "nvml-calls.json"


def _value(v):
    if isinstance(v, dict) and "struct" in v:
        return SimpleNamespace(**{k: _value(x) for k, x in v.items() if k != "struct"})
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v


class ReplayNvml:
    def __init__(self, path: Path = RECORDING):
        self._answers: dict[str, deque] = defaultdict(deque)
        for call in json.loads(path.read_text())["calls"]:
            self._answers[call["fn"]].append(call)

    def __getattr__(self, name: str):
        if not name.startswith("nvml") or name.startswith("nvmlClocks"):
            return getattr(pynvml, name)
        answers = self._answers

        def call(*args):
            if not answers[name]:
                raise AssertionError(f"the recording holds no (further) answer to {name}; record again on a GPU")
            rec = answers[name].popleft()
            if "error" in rec:
                raise pynvml.NVMLError(rec["error"])
            for arg in args:  # a structure passed by reference is filled in, as the C library does
                target = getattr(arg, "_obj", None)
                if target is not None and "fills" in rec:
                    for key, value in rec["fills"].items():
                        if key != "struct" and not isinstance(value, list):
                            setattr(target, key, value)
            return _value(rec["result"])

        call.__name__ = name
        return call
