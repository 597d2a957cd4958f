"""Record, on a GPU machine, every NVML call `gpusleuth node` makes and what the library answered, in the form
tests/node/replay_nvml.py replays (tests/node/h100/nvml-calls.json was made so):

    PYTHONPATH=src python tests/node/record_nvml.py OUT.json "what machine, driver, nvidia-ml-py"

Handles are recorded as "<handle>"; structures as their fields; a structure NVML fills in through a pointer
(the fabric info) as "fills". Nothing else is kept.
"""

from __future__ import annotations

import ctypes
import json
import sys

import pynvml

from gpusleuth.sources.nvml import read


def _plain(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, bytes):
        return v.decode(errors="replace")
    if isinstance(v, ctypes.Structure):
        return {"struct": type(v).__name__, **{f[0]: _plain(getattr(v, f[0])) for f in v._fields_}}
    if isinstance(v, (ctypes.Array, list, tuple)):
        return [_plain(x) for x in v]
    if hasattr(v, "_obj"):  # ctypes.byref(...)
        return _plain(v._obj)
    if isinstance(v, ctypes._Pointer):  # a device handle
        return "<handle>"
    if hasattr(v, "__dict__"):  # pynvml's friendly objects (process lists)
        return {"struct": type(v).__name__, **{k: _plain(x) for k, x in vars(v).items()}}
    return repr(v)


class Recorder:
    def __init__(self):
        self.calls: list[dict] = []

    def __getattr__(self, name: str):
        attr = getattr(pynvml, name)
        if not (callable(attr) and name.startswith("nvml")) or name.startswith("nvmlClocks"):
            return attr

        def call(*args):
            entry = {"fn": name, "args": [_plain(a) for a in args]}
            self.calls.append(entry)
            try:
                result = attr(*args)
            except pynvml.NVMLError as exc:
                entry["error"] = exc.value
                raise
            entry["result"] = _plain(result)
            filled = [a for a in args if hasattr(a, "_obj")]
            if filled:
                entry["fills"] = _plain(filled[0])
            return result

        call.__name__ = name
        return call


def main(out: str, what: str) -> None:
    rec = Recorder()
    read(rec)
    lines = [f'{{"recorded": {json.dumps(what)},', ' "calls": [']
    lines += ["  " + json.dumps(c) + ("," if i < len(rec.calls) - 1 else "") for i, c in enumerate(rec.calls)]
    with open(out, "w") as fh:
        fh.write("\n".join([*lines, " ]", "}"]) + "\n")
    print(f"recorded {len(rec.calls)} NVML calls to {out}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")
