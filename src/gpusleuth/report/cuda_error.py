"""`gpusleuth cuda-error CODE...`: what CUDA error codes mean and which layer to look at, from the catalogue.

Everything printed comes from knowledge/cuda_errors.toml; the wording here only arranges it. A CODE may be a
number (35), a runtime name (cudaErrorNoKernelImageForDevice), a driver name (CUDA_ERROR_NO_DEVICE) or the
message a log printed ("no kernel image is available for execution on the device").
"""

from __future__ import annotations

import json
import textwrap

from gpusleuth.knowledge import cuda_errors

_WIDTH = 100


def resolve(key: str) -> cuda_errors.CudaError | None:
    row = cuda_errors.lookup(key)
    if row is not None:
        return row
    found = cuda_errors.find_in(key) or cuda_errors.find_in(f"CUDA error: {key}")
    return found[0][0] if found else None


def _entry(key: str) -> dict:
    row = resolve(key)
    if row is None:
        return {"query": key, "known": False,
                "note": f"{key!r} is not a CUDA error code, name or message of CUDA {cuda_errors.source()['cuda']}."}
    return {
        "query": key, "known": True, "code": row.code, "runtime": row.runtime or None, "driver": row.driver or None,
        "message": row.message or None, "header": row.header, "deprecated": row.deprecated, "group": row.group,
        "layer": row.layer, "meaning": row.meaning,
        "causes": [{"layer": c.layer, "when": c.when, "confirm": c.confirm or None} for c in row.causes],
    }


def explain_json(keys: list[str]) -> str:
    src = cuda_errors.source()
    return json.dumps({"cuda": src["cuda"], "source": {k: src[k] for k in ("package", "headers", "messages")},
                       "errors": [_entry(k) for k in keys]}, indent=2) + "\n"


def _para(label: str, text: str) -> list[str]:
    return textwrap.wrap(text, _WIDTH, initial_indent=f"  {label:<18}", subsequent_indent=" " * 20) or [f"  {label}"]


def explain_text(keys: list[str]) -> str:
    out: list[str] = []
    for key in keys:
        e = _entry(key)
        if not e["known"]:
            out += [key, f"  {e['note']}", ""]
            continue
        names = " / ".join(n for n in (e["runtime"], e["driver"]) if n)
        out.append(f"CUDA error {e['code']}: {names}  [{e['group']} · {e['layer']}]" + ("  (deprecated)" if e["deprecated"] else ""))
        if e["message"]:
            out += _para("Prints", f"\"{e['message']}\"")
        out += _para("What it means", e["meaning"])
        out += _para("Header says", e["header"])
        for i, c in enumerate(e["causes"], 1):
            out += _para(f"Cause {i}", f"{c['when']} [look at: {c['layer']}]")
            if c["confirm"]:
                out.append(f"{' ' * 20}$ {c['confirm']}")
        out.append("")
    src = cuda_errors.source()
    out.append(f"Codes and messages from CUDA {src['cuda']} ({src['package']}: {', '.join(src['headers'])}).")
    return "\n".join(out) + "\n"
