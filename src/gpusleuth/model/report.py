"""The report: the JSON contract (schema gpusleuth/report/v1) as frozen data."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from gpusleuth.model.finding import Component, Finding, Gap

SCHEMA = "gpusleuth/report/v1"


# The verdicts, as the JSON report writes them -> as a person reads them (docs/report.md, "Verdicts").
VERDICTS = {
    "broken": "BROKEN",
    "failing": "FAILING (cause not identified)",
    "degraded": "DEGRADED",
    "healthy": "HEALTHY",
    "no-verdict": "NO VERDICT",
}


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    time: datetime | None  # exact (or inferred) wall-clock time, timezone-aware
    text: str
    artifact: str
    line: int | None
    tag: str | None = None  # from knowledge/signatures.toml
    source: str | None = None  # lane: operator/component, e.g. "network-operator/mofed"
    node: str | None = None
    signature: str | None = None  # the signatures.toml row (or status/event kind) that made the line meaningful
    container: str | None = None
    earliest: datetime | None = None  # for lines with no timestamp: the interval their neighbours allow
    latest: datetime | None = None
    approximate: bool = False
    note: str | None = None  # how the time was inferred

    def to_dict(self) -> dict:
        iso = lambda t: t.isoformat() if t else None  # noqa: E731
        return {
            "time": iso(self.time),
            "earliest": iso(self.earliest),
            "latest": iso(self.latest),
            "approximate": self.approximate,
            "source": self.source,
            "node": self.node,
            "artifact": self.artifact,
            "line": self.line,
            "text": self.text,
            "tag": self.tag,
            "signature": self.signature,
            "container": self.container,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    code: str
    status: str  # fired | passed | skipped | error
    reason: str | None = None
    missing: str | None = None  # skipped for want of this input (the required type's name)


@dataclass(frozen=True)
class Report:
    source: dict
    verdict: str  # broken | failing | degraded | healthy | no-verdict (analysis/rank.py VERDICTS)
    headline: str
    root_causes: tuple[Finding, ...]
    findings: tuple[Finding, ...]
    components: tuple[Component, ...] = ()
    timeline: tuple[TimelineEntry, ...] = ()
    gaps: tuple[Gap, ...] = ()
    checks: tuple[CheckOutcome, ...] = ()
    artifacts: tuple[dict, ...] = ()  # what each document was recognised as
    extras: dict = field(default_factory=dict)  # richer views for renderers (ordering results, ...)

    def worst(self) -> int:
        return max((f.severity.weight for f in self.findings), default=-1)

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "source": self.source,
            "verdict": self.verdict,
            "headline": self.headline,
            "root_causes": [f.to_dict() for f in self.root_causes],
            "findings": [f.to_dict() for f in self.findings],
            "components": [c.to_dict() for c in self.components],
            "timeline": [t.to_dict() for t in self.timeline],
            "gaps": [str(g) for g in self.gaps],
            "checks": [{"code": c.code, "status": c.status, "reason": c.reason} for c in self.checks],
            "artifacts": list(self.artifacts),
            "health": list(self.extras.get("health", [])),
        }
