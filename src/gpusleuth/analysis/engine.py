"""Run every parser and check in isolation: one broken unit never stops the others."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from gpusleuth.checks import Check, all_checks
from gpusleuth.checks.accounting import Explained
from gpusleuth.errors import NotApplicable, UnusableData
from gpusleuth.facts import Facts, Recognised
from gpusleuth.model.document import Document
from gpusleuth.model.finding import Finding, Gap
from gpusleuth.model.report import CheckOutcome
from gpusleuth.parsers import PARSERS
from gpusleuth.parsers.base import WEAK, Parser
from gpusleuth.parsers.dispatch import BEATEN_BY_STAMPED_LOGS, stamped_log
from gpusleuth.parsers import prose
from gpusleuth.parsers.logs import parse_text

_BUG = "internal error in gpusleuth (please report it)"


def sniff(doc: Document) -> tuple[int, Parser | None]:
    best, chosen = 0, None
    for p in _STAMPED_LOG_PARSERS if stamped_log(doc) else PARSERS:
        try:
            score = p.sniff(doc)
        except Exception:  # a sniffer bug must not hide the document from the others
            score = 0
        if score > best:
            best, chosen = score, p
    return best, chosen


# On a `kubectl logs` document of stamped lines, the sniffers that can outbid the log sniffer (parsers/dispatch.py)
_STAMPED_LOG_PARSERS = tuple(p for p in PARSERS if p.kind not in BEATEN_BY_STAMPED_LOGS)


def ingest(documents: Iterable[Document], facts: Facts) -> Facts:
    for doc in documents:
        score, p = sniff(doc)
        where = doc.artifact if doc.first_line == 1 else f"{doc.artifact}:{doc.first_line}"
        if p is None or score < WEAK:
            _read_as_text(doc, facts, where)
            continue
        try:
            objs = list(p.parse(doc))
        except UnusableData as exc:
            facts.gaps.append(Gap("artifact", f"{p.kind}: {exc}", where))
            continue
        except Exception as exc:  # noqa: BLE001 - the exception model: a parser bug is a gap, not a crash
            facts.errors.append(f"parser {p.kind} on {where}: {type(exc).__name__}: {exc}")
            facts.gaps.append(Gap("artifact", f"{p.kind}: {_BUG}: {type(exc).__name__}", where))
            continue
        gaps = [o for o in objs if isinstance(o, Gap)]  # what a parser could not read (a paste cut short)
        facts.gaps.extend(gaps)
        for obj in objs:
            if not isinstance(obj, Gap):
                facts.add(obj)
        facts.recognised.append(Recognised(doc.artifact, doc.first_line, doc.first_line + len(doc.lines) - 1, p.kind, len(objs) - len(gaps)))
        if score <= WEAK or doc.artifact.lower().endswith((".md", ".markdown")):
            _read_prose_lines(doc, facts, weak=score <= WEAK)
    return facts


def _read_prose_lines(doc: Document, facts: Facts, weak: bool) -> None:
    """A Markdown issue body a parser claimed still has sentences around its code blocks; a paragraph of prose
    that a parser took only on a loose pattern (a sentence quoting a log line) is read as prose as a whole."""
    try:
        mostly = weak and prose.mostly_prose(doc)
        if weak and not mostly and not doc.artifact.lower().endswith((".md", ".markdown")):
            return
        text = prose.read(doc, only_prose=not mostly)
    except Exception as exc:  # noqa: BLE001
        facts.errors.append(f"parser prose on {doc.artifact}: {type(exc).__name__}: {exc}")
        return
    if mostly:  # what the weak claim read is a ticket's sentences: say so in the artifacts list and the gaps
        last = facts.recognised[-1]
        facts.recognised[-1] = replace(last, kind="prose", objects=last.objects + len(text.stated) + len(text.described))
        where = doc.artifact if doc.first_line == 1 else f"{doc.artifact}:{doc.first_line}"
        facts.gaps.append(Gap("artifact", "content read as prose only (stated facts and symptoms, error lines and known messages)", where))
        _read_fragments(doc, facts)
    if text.stated or text.described:
        facts.add(text)


def _read_as_text(doc: Document, facts: Facts, where: str) -> None:
    """Open world: a document nothing recognises is prose. Its sentences can state versions, the platform and
    symptoms (parsers/prose.py), and its lines can still hold the one error line that matters (parse_text).
    It counts as recognised, of kind "prose", so that only empty or binary input reads as nothing at all."""
    what = f"output of `{doc.command}`" if doc.command else "content"
    facts.gaps.append(Gap("artifact", f"{what} not recognised as any known artifact; read as prose only (stated facts and "
                                      "symptoms, error lines and known messages)", where))
    try:
        log = parse_text(doc)
    except Exception as exc:  # noqa: BLE001 - the exception model: a parser bug is a gap, not a crash
        facts.errors.append(f"parser text on {doc.artifact}: {type(exc).__name__}: {exc}")
        log = None
    if log is not None and log.lines:
        facts.add(log)
    try:
        text = prose.read(doc)
    except Exception as exc:  # noqa: BLE001
        facts.errors.append(f"parser prose on {doc.artifact}: {type(exc).__name__}: {exc}")
        return
    if not text.sentences:
        return
    facts.add(text)
    last = doc.first_line + len(doc.lines) - 1
    facts.recognised.append(Recognised(doc.artifact, doc.first_line, last, "prose", len(text.stated) + len(text.described)))
    _read_fragments(doc, facts)


def _read_fragments(doc: Document, facts: Facts) -> None:
    """The blocks between a ticket's sentences that a parser recognises on their own (a Helm values fragment at any
    indentation, `helm install --set ...`, `lspci -k`, a listing): read them with that parser. Logs are left to
    the text reading of the whole document, which already has their lines."""
    for block in prose.fragments(doc):
        score, p = sniff(block)
        if p is None or score <= WEAK or p.kind == "logs":  # the block is known not to be sentences: a loose pattern will do
            continue
        where = f"{block.artifact}:{block.first_line}"
        try:
            objs = [o for o in p.parse(block) if not isinstance(o, Gap)]
        except UnusableData:
            continue  # a fragment that does not parse stays prose
        except Exception as exc:  # noqa: BLE001 - the exception model: a parser bug is recorded, the fragment stays prose
            facts.errors.append(f"parser {p.kind} on fragment {where}: {type(exc).__name__}: {exc}")
            continue
        for obj in objs:
            facts.add(obj)
        facts.recognised.append(Recognised(block.artifact, block.first_line, block.first_line + len(block.lines) - 1, p.kind, len(objs)))


@dataclass(frozen=True)
class Selection:
    """Codes (or layer prefixes like "KD") the user selected or ignored; empty select means all."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def wants(self, c: Check) -> bool:
        def hit(pats: tuple[str, ...]) -> bool:
            return any(c.code.startswith(p.upper()) or c.name == p.lower() or c.layer.value == p.lower() for p in pats)

        return (not self.select or hit(self.select)) and not hit(self.ignore)


def run_checks(
    facts: Facts, selection: Selection = Selection(), checks: Iterable[Check] | None = None
) -> tuple[list[Finding], list[CheckOutcome]]:
    """Every selected check, in two passes: the accounting checks (they need `Explained`) run after the others,
    over what those found."""
    findings: list[Finding] = []
    outcomes: list[CheckOutcome] = []
    chosen = [c for c in (all_checks() if checks is None else checks) if selection.wants(c)]
    late = [c for c in chosen if any(t is Explained for _, t in (*c.requires, *c.optional))]
    for c in [c for c in chosen if c not in late] + late:
        if c is (late[0] if late else None):
            facts.add(Explained.from_findings(findings))
        inputs = {}
        try:
            for pname, typ in c.requires:
                inputs[pname] = facts.get(typ)
            for pname, typ in c.optional:
                try:
                    inputs[pname] = facts.get(typ)
                except NotApplicable:
                    inputs[pname] = None
            hits = list(c(**inputs))
        except NotApplicable as exc:
            outcomes.append(CheckOutcome(c.code, "skipped", str(exc)))
            continue
        except UnusableData as exc:
            outcomes.append(CheckOutcome(c.code, "skipped", f"data unusable: {exc}"))
            continue
        except Exception as exc:  # noqa: BLE001 - isolate the bug to this check
            facts.errors.append(f"check {c.code} ({c.name}): {type(exc).__name__}: {exc}")
            outcomes.append(CheckOutcome(c.code, "error", f"{type(exc).__name__}: {exc}"))
            continue
        for h in hits:
            findings.append(
                Finding(
                    code=c.code,
                    name=c.name,
                    title=h.title,
                    layer=h.layer or c.layer,
                    severity=h.severity,
                    role=h.role,
                    explanation=h.explanation,
                    node=h.node,
                    component=h.component,
                    evidence=h.evidence,
                    fixes=h.fixes,
                    caused_by=h.caused_by,
                    confidence=h.confidence,
                    facts=h.facts,
                )
            )
        outcomes.append(CheckOutcome(c.code, "fired" if hits else "passed"))
    return findings, outcomes
