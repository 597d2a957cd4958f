"""``Prose``: what people wrote, apart from what programs printed.

Every ``ProseText`` (parsers/prose.py) joined: the facts stated in sentences (versions, platform, OS, kernel, GPU,
what changed), the symptoms described, and which artifacts contributed nothing but prose. A stated fact is a
claim: checks that use one say "stated", cite the sentence, lower their confidence, and name the command whose
output would confirm it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.parsers.prose import Described, ProseText, Stated, phrases

# Confidence of a finding that rests on a sentence alone: below rank.FALLBACK, so any machine-read cause on
# the same scope explains it first, and accounting never mistakes it for a specific cause.
STATED_CONFIDENCE = 0.35


@dataclass
class Prose:
    texts: list[ProseText] = field(default_factory=list)

    @property
    def stated(self) -> list[Stated]:
        seen: dict[tuple[str, str], Stated] = {}
        for t in self.texts:
            for s in t.stated:
                seen.setdefault((s.kind, (s.detail or s.value).lower()), s)
        return list(seen.values())

    def stated_of(self, kind: str) -> list[Stated]:
        return [s for s in self.stated if s.kind == kind]

    def first(self, kind: str) -> Stated | None:
        found = self.stated_of(kind)
        return found[0] if found else None

    @property
    def described(self) -> list[Described]:
        seen: dict[tuple[str, str | None], Described] = {}
        for t in self.texts:
            for d in t.described:
                seen.setdefault((d.id, d.event), d)
        return list(seen.values())

    def described_in(self, layer: str) -> list[Described]:
        return [d for d in self.described if d.layer == layer]

    @property
    def prose_only_artifacts(self) -> list[str]:
        """Artifacts whose every document was read only as prose (no parser recognised any part of them)."""
        only = {t.artifact for t in self.texts if t.only_prose}
        claimed = {t.artifact for t in self.texts if not t.only_prose}
        return sorted(only - claimed)


def symptom_row(symptom_id: str) -> dict:
    return next(r for r in phrases()["symptom"] if r["id"] == symptom_id)


def event_row(event_id: str) -> dict | None:
    return next((r for r in phrases()["event"] if r["id"] == event_id), None)


@combiner(Prose)
def build_prose(facts: Facts) -> Prose:
    texts = [t for t in facts.all(ProseText) if t.stated or t.described]
    if not texts:
        raise NotApplicable("no sentences stating versions, a platform or symptoms in the artifacts")
    return Prose(texts)
