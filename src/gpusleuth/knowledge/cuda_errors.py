"""The CUDA error catalogue (knowledge/cuda_errors.toml) as typed rows, and the ways a log names a code.

A CUDA error reaches a log in one of a few shapes: the runtime's message ("CUDA error: no kernel image is
available for execution on the device"), the runtime name (cudaErrorNoKernelImageForDevice), the driver
name (CUDA_ERROR_NO_BINARY_FOR_GPU), or a number ("error code 35", "Error 802:", "CUDA error 700",
"cudaError 209", "returned 100"). `find_in` reads one line and returns the codes it names, most specific
shape first, so every check reads them the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from gpusleuth.knowledge import table


@dataclass(frozen=True, slots=True)
class Cause:
    layer: str
    when: str
    confirm: str = ""


@dataclass(frozen=True, slots=True)
class CudaError:
    code: int
    runtime: str  # cudaError_t name, "" when the runtime has none
    driver: str  # CUresult name, "" when the driver has none
    message: str  # cudaGetErrorString text
    header: str
    group: str
    layer: str
    meaning: str
    causes: tuple[Cause, ...] = ()
    deprecated: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n in (self.runtime, self.driver) if n)

    @property
    def label(self) -> str:
        return f"{self.code} ({' / '.join(self.names)})"


@cache
def catalog() -> dict[int, CudaError]:
    out = {}
    for row in table("cuda_errors")["code"]:
        out[row["code"]] = CudaError(
            code=row["code"], runtime=row.get("runtime", ""), driver=row.get("driver", ""), message=row.get("message", ""),
            header=row.get("header", ""), group=row["group"], layer=row["layer"], meaning=row["meaning"],
            causes=tuple(Cause(c["layer"], c["when"], c.get("confirm", "")) for c in row.get("cause", ())),
            deprecated=row.get("deprecated", False),
        )
    return out


def source() -> dict:
    """Which CUDA release and files the codes were read from."""
    return table("cuda_errors")["source"]


@cache
def _by_name() -> dict[str, CudaError]:
    return {n.lower(): e for e in catalog().values() for n in e.names}


def lookup(key: str | int) -> CudaError | None:
    """A code by number ("35", 35), runtime name (cudaErrorNoDevice) or driver name (CUDA_ERROR_NO_DEVICE), any case."""
    if isinstance(key, int):
        return catalog().get(key)
    k = key.strip()
    if k.isdigit():
        return catalog().get(int(k))
    return _by_name().get(k.lower())


# A number counts only where CUDA put it: after "error code", "Error", "cudaError", "CUresult", "CUDA error",
# "returned"; a bare number in a line is never read as a code.
_NUMBER = re.compile(r"(?i)(?:cuda(?:[ _]?error)?|cuResult|error code|error|returned|code)[ =:(]+(?:cuda)?(?:error)?[ =:]*(?P<n>\d{1,3})\b(?!\.\d)")
_NAME = re.compile(r"\b(?P<name>cudaError[A-Z]\w+|CUDA_ERROR_[A-Z_]+)\b")


@cache
def _messages() -> tuple[tuple[str, CudaError], ...]:
    """(message, row), longest message first, only messages specific enough to find in free text."""
    rows = [(e.message, e) for e in catalog().values() if e.message and len(e.message) >= 14 and e.message not in _VAGUE]
    return tuple(sorted(rows, key=lambda r: -len(r[0])))


# Runtime messages too common in ordinary prose to mean a CUDA error on their own: they count only after
# "CUDA error:" (or with a name or number in the line).
_VAGUE = {"invalid argument", "out of memory", "initialization error", "file not found", "device not ready", "unknown error",
          "operation not permitted", "operation not supported", "wait operation timed out", "named symbol not found",
          "invalid resource handle", "driver shutting down", "hardware stack error", "misaligned address",
          "context is destroyed", "invalid program counter", "invalid device ordinal", "invalid device context",
          "invalid device pointer", "invalid host pointer", "invalid device symbol", "invalid pitch argument"}
_AFTER_CUDA_ERROR = re.compile(r"(?i)CUDA (?:error|failure)[^:]{0,40}:\s*(?P<m>[a-z][^.\n]{3,120}?)(?:\s*$|[.\n(]|\s+CUDA kernel)")


def find_in(line: str) -> list[tuple[CudaError, str]]:
    """The CUDA error codes a log line names, with the text that named each (name, message, "CUDA error: <msg>"
    or a number in CUDA's wording). Empty when the line names none."""
    found: dict[int, str] = {}
    for m in _NAME.finditer(line):
        e = lookup(m.group("name"))
        if e:
            found.setdefault(e.code, m.group("name"))
    if "CUDA" in line or "cuda" in line or "error" in line.lower():
        for msg, e in _messages():
            if msg in line:
                found.setdefault(e.code, msg)
        m = _AFTER_CUDA_ERROR.search(line)
        if m:
            text = m.group("m").strip().lower()
            e = next((e for e in catalog().values() if e.message and e.message.lower().rstrip(".") == text), None)
            if e:
                found.setdefault(e.code, m.group(0).strip())
        if not found and re.search(r"(?i)cuda|cu[A-Z][a-z]+\(", line):
            for m in _NUMBER.finditer(line):
                e = catalog().get(int(m.group("n")))
                if e:
                    found.setdefault(e.code, m.group(0).strip())
    return [(catalog()[c], how) for c, how in found.items()]


@dataclass(frozen=True, slots=True)
class Capability:
    cc: str  # "8.6"
    arch: str

    @property
    def sm(self) -> str:
        return "sm_" + self.cc.replace(".", "")


@cache
def _capabilities() -> tuple[tuple[re.Pattern, Capability], ...]:
    return tuple((re.compile(r["match"], re.I), Capability(r["cc"], r["arch"])) for r in table("compute_capability")["gpu"])


def capability_of(product: str | None) -> Capability | None:
    """The compute capability of a GPU model (knowledge/compute_capability.toml), None for a model it lacks."""
    if not product:
        return None
    name = product.replace("-", " ")
    return next((c for rx, c in _capabilities() if rx.search(product) or rx.search(name)), None)
