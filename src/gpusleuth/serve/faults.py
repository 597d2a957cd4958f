"""Injected faults for `gpusleuth serve`: the API server misbehaving the way real ones do.

A fault matches requests by method, a regex on the path and a substring of the query string, and then
answers with an HTTP status (403, 429 with Retry-After, 500, 410 for an expired continue token), answers
late (delay), or drops the connection without an answer. ``times`` limits how often it fires (after
``skip`` matching requests passed), so "429 once, then fine" and "always 403" are both one line.

YAML (``gpusleuth serve BUNDLE --faults faults.yaml``)::

    faults:
      - path: "^/api/v1/namespaces/[^/]+/secrets$"   # 403 on Secrets, forever
        status: 403
      - path: "/log$"
        query: "previous=true"
        status: 500                                   # every previous log fails
      - path: "^/api/v1/pods$"
        status: 429
        retry_after: 1
        times: 2
      - path: "^/api/v1/nodes$"
        delay: 3.0                                    # slow
      - path: "/log$"
        drop: true                                    # connection closed, no response
        times: 1
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

_REASONS = {400: "BadRequest", 403: "Forbidden", 404: "NotFound", 409: "Conflict", 410: "Expired", 429: "TooManyRequests",
            500: "InternalError", 502: "BadGateway", 503: "ServiceUnavailable", 504: "Timeout"}


MAX_SECONDS = 3600  # a delay or Retry-After longer than an hour is a typo


class FaultError(ValueError):
    """One field of one fault is wrong; ``field`` names it."""

    def __init__(self, field_name: str, problem: str):
        super().__init__(f"{field_name}: {problem}")
        self.field = field_name


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) and math.isfinite(value)


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass
class Fault:
    path: str = ""  # regex searched in the URL path
    method: str | None = None
    query: str | None = None  # substring of the raw query string
    status: int | None = None
    message: str | None = None
    retry_after: float | None = None
    delay: float = 0.0
    drop: bool = False
    times: int | None = None  # fire at most this often; None: always
    skip: int = 0  # let this many matching requests through first
    seen: int = field(default=0, compare=False)
    fired: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        """Every field checked once, here: a bad value refuses to start instead of failing each request."""
        for name in ("path", "method", "query", "message"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise FaultError(name, f"must be text, not {_shown(value)}")
        if self.path is None:
            raise FaultError("path", "must be text, not null")
        try:
            self._re = re.compile(self.path)
        except re.error as exc:
            raise FaultError("path", f"not a regular expression: {exc}") from None
        if self.status is not None and not (_is_int(self.status) and 100 <= self.status <= 599):
            raise FaultError("status", f"must be an HTTP status from 100 to 599, not {_shown(self.status)}")
        if self.retry_after is not None and not (_is_number(self.retry_after) and 0 <= self.retry_after <= MAX_SECONDS):
            raise FaultError("retry_after", f"must be a number of seconds from 0 to {MAX_SECONDS}, not {_shown(self.retry_after)}")
        if not (_is_number(self.delay) and 0 <= self.delay <= MAX_SECONDS):
            raise FaultError("delay", f"must be a number of seconds from 0 to {MAX_SECONDS}, not {_shown(self.delay)}")
        if not isinstance(self.drop, bool):
            raise FaultError("drop", f"must be true or false, not {_shown(self.drop)}")
        if self.times is not None and not (_is_int(self.times) and self.times >= 0):
            raise FaultError("times", f"must be a whole number of at least 0, not {_shown(self.times)}")
        if not (_is_int(self.skip) and self.skip >= 0):
            raise FaultError("skip", f"must be a whole number of at least 0, not {_shown(self.skip)}")

    @property
    def reason(self) -> str:
        return _REASONS.get(self.status or 500, "InternalError")


_FIELDS = {"path", "method", "query", "status", "message", "retry_after", "delay", "drop", "times", "skip"}


class Faults:
    """Thread-safe: the server answers requests concurrently."""

    def __init__(self, faults: list[Fault] | None = None):
        self.faults = list(faults or [])
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path) -> "Faults":
        """Faults from a YAML file; every problem is a ValueError of one line naming the file (and the fault
        and field)."""
        import yaml

        from gpusleuth.parsers.yamlsafe import AliasBomb, safe_load

        if Path(path).exists() and not Path(path).is_file():
            raise ValueError(f"{path}: not a regular file (a FIFO or device?); refused")
        try:
            text = Path(path).read_bytes().decode("utf-8")
        except OSError as exc:
            raise ValueError(f"{path}: cannot read faults: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise ValueError(f"{path}: not a YAML faults file (binary, not UTF-8 text)") from None
        if "\x00" in text:
            raise ValueError(f"{path}: not a YAML faults file (binary, NUL bytes)")
        try:
            doc = safe_load(text) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ValueError(f"{path}: not valid YAML{where}: {problem}") from None
        except AliasBomb as exc:
            raise ValueError(f"{path}: {exc}") from None
        rows = doc.get("faults", []) if isinstance(doc, dict) else None
        if not isinstance(rows, list):
            raise ValueError(f"{path}: expected a mapping with a `faults:` list")
        faults = []
        for i, row in enumerate(rows, 1):
            if not isinstance(row, dict):
                raise ValueError(f"{path}: bad fault {i}: must be a mapping of fields, not {_shown(row)}")
            unknown = sorted(str(k) for k in row if str(k) not in _FIELDS)
            if unknown:
                raise ValueError(f"{path}: bad fault {i}: unknown field {unknown[0]!r} (known: {', '.join(sorted(_FIELDS))})")
            try:
                faults.append(Fault(**{str(k): v for k, v in row.items()}))
            except FaultError as exc:
                raise ValueError(f"{path}: bad fault {i}: {exc}") from None
        return cls(faults)

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self.faults.append(fault)
        return fault

    def match(self, method: str, path: str, query: str) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if f.method and f.method.upper() != method:
                    continue
                if not f._re.search(path) or (f.query and f.query not in query):
                    continue
                f.seen += 1
                if f.seen <= f.skip or (f.times is not None and f.fired >= f.times):
                    continue
                f.fired += 1
                return f
        return None
