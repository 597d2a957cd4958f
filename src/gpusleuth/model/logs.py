"""Log lines from containers, the kernel and the journal, with the line they came from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gpusleuth.model.evidence import Evidence


@dataclass(frozen=True, slots=True)
class LogLine:
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
    (must-gather's `--all-containers --prefix`); here they say what the artifact as a whole belongs to."""

    artifact: str
    lines: tuple[LogLine, ...]
    pod: str | None = None
    namespace: str | None = None
    container: str | None = None
    node: str | None = None
    previous: bool = False  # `kubectl logs --previous`: the crashed instance
    kind: str = "container"  # container | kernel | journal | operator
