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

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

_REASONS = {400: "BadRequest", 403: "Forbidden", 404: "NotFound", 409: "Conflict", 410: "Expired", 429: "TooManyRequests",
            500: "InternalError", 502: "BadGateway", 503: "ServiceUnavailable", 504: "Timeout"}


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
        self._re = re.compile(self.path)

    @property
    def reason(self) -> str:
        return _REASONS.get(self.status or 500, "InternalError")


class Faults:
    """Thread-safe: the server answers requests concurrently."""

    def __init__(self, faults: list[Fault] | None = None):
        self.faults = list(faults or [])
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path) -> "Faults":
        import yaml

        try:
            doc = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ValueError(f"{path}: cannot read faults: {exc}") from None
        rows = doc.get("faults", []) if isinstance(doc, dict) else None
        if not isinstance(rows, list):
            raise ValueError(f"{path}: expected a mapping with a `faults:` list")
        try:
            return cls([Fault(**row) for row in rows])
        except (TypeError, re.error) as exc:
            raise ValueError(f"{path}: bad fault: {exc}") from None

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
