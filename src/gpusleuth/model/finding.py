"""What checks conclude, and the report that carries it (the JSON contract in docs/report.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from gpusleuth.model.evidence import Evidence
from gpusleuth.model.layers import Layer


class Severity(str, Enum):
    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def weight(self) -> int:
        return {"critical": 3, "error": 2, "warning": 1, "info": 0}[self.value]


class Role(str, Enum):
    ROOT_CAUSE = "root-cause"
    CONTRIBUTING = "contributing"
    SYMPTOM = "symptom"
    BLOCKED = "blocked"
    INFO = "info"


class FixKind(str, Enum):
    IMMEDIATE = "immediate"
    WORKAROUND = "workaround"
    PERMANENT = "permanent"


@dataclass(frozen=True, slots=True)
class Fix:
    kind: FixKind
    description: str
    commands: tuple[str, ...] = ()
    snippet: str | None = None  # a ready file fragment (values.yaml, config.toml) to paste
    snippet_language: str | None = None

    def to_dict(self) -> dict:
        d = {"kind": self.kind.value, "description": self.description, "commands": list(self.commands)}
        if self.snippet:
            d["snippet"] = self.snippet
            d["snippet_language"] = self.snippet_language
        return d


@dataclass(frozen=True, slots=True)
class Hit:
    """What a check returns; the engine stamps it with the check's code, name and layer into a Finding."""

    title: str
    explanation: str
    severity: Severity = Severity.ERROR
    role: Role = Role.ROOT_CAUSE
    evidence: tuple[Evidence, ...] = ()
    fixes: tuple[Fix, ...] = ()
    node: str | None = None
    component: str | None = None
    confidence: float = 0.8
    layer: Layer | None = None  # only when a generic check learns the layer from the data
    caused_by: tuple[str, ...] = ()
    facts: dict = field(default_factory=dict, hash=False)  # measured values (gap seconds, counts) for JSON users


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    name: str
    title: str
    layer: Layer
    severity: Severity
    role: Role
    explanation: str
    node: str | None = None
    component: str | None = None
    evidence: tuple[Evidence, ...] = ()
    fixes: tuple[Fix, ...] = ()
    caused_by: tuple[str, ...] = ()
    confidence: float = 0.8
    facts: dict = field(default_factory=dict, hash=False)

    @property
    def id(self) -> str:
        """Unique within a report: a code can fire once per node or component."""
        parts = [self.code]
        if self.node:
            parts.append(self.node)
        if self.component:
            parts.append(self.component)
        return "/".join(parts)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "code": self.code,
            "name": self.name,
            "title": self.title,
            "layer": self.layer.value,
            "severity": self.severity.value,
            "role": self.role.value,
            "node": self.node,
            "component": self.component,
            "explanation": self.explanation,
            "evidence": [e.to_dict() for e in self.evidence],
            "fixes": [f.to_dict() for f in self.fixes],
            "caused_by": list(self.caused_by),
            "confidence": round(self.confidence, 2),
            "facts": self.facts,
        }


class ComponentState(str, Enum):
    FAILED = "failed"
    BLOCKED = "blocked"
    DEGRADED = "degraded"
    OK = "ok"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Component:
    name: str  # canonical operand name from knowledge/operands.toml
    node: str | None
    layer: Layer
    state: ComponentState
    pod: str | None = None
    namespace: str | None = None
    status: str | None = None  # the STATUS kubectl showed
    blocked_by: str | None = None
    waiting_on: str | None = None  # the marker file it waits for
    reason: str | None = None
    evidence: tuple[Evidence, ...] = ()

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "node": self.node,
            "layer": self.layer.value,
            "state": self.state.value,
            "pod": self.pod,
            "namespace": self.namespace,
            "status": self.status,
            "blocked_by": self.blocked_by,
            "waiting_on": self.waiting_on,
            "reason": self.reason,
            "evidence": [e.to_dict() for e in self.evidence],
        }


@dataclass(frozen=True, slots=True)
class Gap:
    """Something that could not be seen, so that nobody mistakes silence for health."""

    what: str
    why: str
    artifact: str | None = None

    def __str__(self) -> str:
        return f"{self.artifact}: {self.why}" if self.artifact else f"{self.what}: {self.why}"

    def to_dict(self) -> dict:
        return {"what": self.what, "why": self.why, "artifact": self.artifact}
