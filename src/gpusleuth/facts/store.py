"""The fact store: what parsers produced, by type, and combined views computed once on demand."""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from gpusleuth.errors import NotApplicable
from gpusleuth.model.finding import Gap

T = TypeVar("T")

# Combined views: type -> function(Facts) -> instance. Filled by @combiner in facts/*.py modules.
COMBINERS: dict[type, Callable[["Facts"], Any]] = {}


def combiner(produces: type):
    """Register the one function that builds a combined view (Cluster, Logs, ...) from the store."""

    def wrap(func):
        if produces in COMBINERS:
            raise RuntimeError(f"two combiners for {produces.__name__}")
        COMBINERS[produces] = func
        return func

    return wrap


@dataclass(frozen=True, slots=True)
class Recognised:
    artifact: str
    first_line: int
    last_line: int
    kind: str
    objects: int


def _detached(exc: Exception) -> Exception:
    """The same failure, never raised: a kept exception that had been raised would hold the frames it passed
    through, and with them this Facts, in a cycle that only the cycle collector frees; the documents and every
    parsed line of a diagnosis would then outlive it until a collection ran. So a copy is kept, and a copy of it
    raised each time (an exception that cannot be rebuilt from its args is kept as it is)."""
    try:
        dup = copy.copy(exc)
        same = type(dup) is type(exc) and dup.args == exc.args
    except Exception:  # noqa: BLE001 - an exception class whose constructor does not take its own args
        return exc
    return dup if same else exc


class Facts:
    def __init__(self, description: str = "", capture_time=None):
        self.description = description
        self.capture_time = capture_time  # datetime when the artifacts were captured, if known
        self.gaps: list[Gap] = []
        self.recognised: list[Recognised] = []
        self.errors: list[str] = []  # bugs caught in parsers/combiners/checks, one line each
        self._by_type: dict[type, list] = defaultdict(list)
        self._combined: dict[type, Any] = {}
        self._failed: dict[type, Exception] = {}

    def add(self, obj: Any) -> None:
        self._by_type[type(obj)].append(obj)

    def all(self, cls: type[T]) -> list[T]:
        """Every parsed object of this type (or a subclass), in document order."""
        out: list = []
        for t, objs in self._by_type.items():
            if issubclass(t, cls):
                out.extend(objs)
        return out

    def present(self, cls: type[T], missing: str) -> list[T]:
        """Every parsed object of this type, for a combiner that has nothing to combine without them: NotApplicable
        with `missing` (the gap the report lists) when there is none."""
        objs = self.all(cls)
        if not objs:
            raise NotApplicable(missing)
        return objs

    def get(self, cls: type[T]) -> T:
        """A combined view; raises NotApplicable when there is nothing to combine."""
        if cls in self._combined:
            return self._combined[cls]
        if cls in self._failed:
            raise _detached(self._failed[cls])
        build = COMBINERS.get(cls)
        if build is None:
            objs = self.all(cls)
            if not objs:
                raise NotApplicable(f"no {cls.__name__} in the artifacts")
            return objs[0]
        try:
            value = build(self)
        except Exception as exc:  # cached so that each check sees the same failure once
            self._failed[cls] = _detached(exc)
            raise
        self._combined[cls] = value
        return value

    def has(self, cls: type) -> bool:
        try:
            self.get(cls)
            return True
        except Exception:
            return False
