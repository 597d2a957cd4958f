"""Log lines from containers, the kernel and the journal, with the line they came from."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from datetime import datetime

from gpusleuth.model.evidence import Evidence


@dataclass(slots=True, unsafe_hash=True)
class LogLine:
    """One line (or one line with its continuation lines folded in) of a log. Treat it as immutable.

    Not frozen, unlike the other model classes, only for speed: a big log makes millions of them, and a frozen
    dataclass's __init__ (one object.__setattr__ per field) costs five times as much. Equality and hashing are
    those of a frozen one (unsafe_hash); nothing assigns to a LogLine after the parser made it."""

    artifact: str
    line: int
    raw: str  # as in the file, minus normalisation
    message: str  # prefixes (must-gather [pod/x/c], CRI, timestamps, levels) stripped
    time: datetime | None = None  # timezone-aware when the zone is known or inferred
    time_format: str | None = None  # id in the timestamp registry; None when the line had no time
    level: str | None = None  # info | warning | error | fatal | debug
    pod: str | None = None
    container: str | None = None
    elapsed: float | None = None  # seconds since boot (dmesg) or process start (logrus ERRO[0003]) when no wall time

    def evidence(self) -> Evidence:
        return Evidence(self.artifact, self.line, self.raw.strip()[:400])


@dataclass(frozen=True, slots=True)
class ContainerLog:
    """One artifact of log text. pod/container are per-line when the artifact mixes containers
    (must-gather's `--all-containers --prefix`); here they say what the artifact as a whole belongs to.

    A big log (parsers/logs.py KEEP_ALL_LINES) keeps only the lines that matter (facts/logs.py `kept_rows`):
    then `total_lines` is the number of lines the file had, and `lines` are the kept ones, in order."""

    artifact: str
    lines: tuple[LogLine, ...]
    pod: str | None = None
    namespace: str | None = None
    container: str | None = None
    node: str | None = None
    previous: bool = False  # `kubectl logs --previous`: the crashed instance
    kind: str = "container"  # container | kernel | journal | operator
    total_lines: int | None = None  # lines of the file when only some were kept; None: every line is in `lines`
    skipped: tuple[int, ...] = ()  # line numbers of the kept lines that come after lines left out, in order
    edges: int = 0  # of a big log: how many of its first and last lines are kept whatever they hold

    def position(self, i: int) -> int:
        """Where lines[i] stands in the log, counting each run of lines left out as one line: two kept lines are
        next to each other here only when they were in the file (a burst of error lines stays one)."""
        return i + bisect_right(self.skipped, self.lines[i].line) if self.skipped else i
