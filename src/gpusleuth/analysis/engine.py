"""Run every parser and check in isolation: one broken unit never stops the others."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Iterator

from gpusleuth.checks import Check, all_checks
from gpusleuth.checks.accounting import Explained
from gpusleuth.errors import NotApplicable, UnusableData
from gpusleuth.facts import Facts, Recognised
from gpusleuth.model.document import CONTINUED, CONTINUES, KEPT_AFTER_BUDGET, Document
from gpusleuth.model.finding import Finding, Fix, Gap
from gpusleuth.model.logs import ContainerLog
from gpusleuth.model.report import CheckOutcome
from gpusleuth.parsers import PARSERS
from gpusleuth.parsers.base import WEAK, Parser
from gpusleuth.parsers.dispatch import BEATEN_BY_STAMPED_LOGS, RUN_ON_STAMPED_LOGS, forget_skipped, stamped_kind
from gpusleuth.parsers import prose
from gpusleuth.parsers.logs import KEEP_ALL_LINES, KEPT_AFTER_BUDGET_LINES, parse_text
from gpusleuth.sources.text import ByteLines

_BUG = "internal error in gpusleuth (please report it)"


def sniff(doc: Document) -> tuple[int, Parser | None]:
    best, chosen = 0, None
    parsers = PARSERS
    if kind := stamped_kind(doc):
        parsers = _STAMPED_LOG_PARSERS if kind == 1 else _PLAIN_STAMPED_LOG_PARSERS
        forget_skipped()
    for p in parsers:
        try:
            score = p.sniff(doc)
        except Exception:  # a sniffer bug must not hide the document from the others
            score = 0
        if score > best:
            best, chosen = score, p
    return best, chosen


# On a `kubectl logs` document of stamped lines, the sniffers that can outbid the log sniffer (parsers/dispatch.py)
_STAMPED_LOG_PARSERS = tuple(p for p in PARSERS if p.kind not in BEATEN_BY_STAMPED_LOGS)
# ... and on one that holds none of the words the others need to (parsers/dispatch.py NAMED_IN_STAMPED_LOGS)
_PLAIN_STAMPED_LOG_PARSERS = tuple(p for p in PARSERS if p.kind in RUN_ON_STAMPED_LOGS)


def ingest(documents: Iterable[Document], facts: Facts, progress: Callable[[str], None] | None = None) -> Facts:
    """Parse each Document as it comes (a source produces them file by file; none is kept here once parsed);
    progress("reading") after each (a terminal's progress note, cli.py).

    A huge file comes in pieces of whole lines (sources/loose.py PIECE_BYTES): a log's pieces are parsed one by
    one and joined into one log of the artifact, so that the views see one log, and the artifacts list one
    range; pieces of anything else (a YAML or JSON dump) are joined and parsed whole, since such a parser needs
    the whole text."""
    state = _Stream(facts)
    it = iter(documents)
    while (doc := next(it, None)) is not None:
        state.take(doc)
        del doc  # before the next is read: a loop variable would hold this one (a whole piece) meanwhile
        if progress is not None:
            progress("reading")
    state.finish()
    return facts


# Memory the logs read in full may take in all (~256 bytes a LogLine plus its text twice: raw and message). Past
# it, every further log of more than a few hundred lines keeps only the lines that matter, as a big log does
# (parsers/logs.py KEPT_AFTER_BUDGET): a gigabyte of logs each under KEEP_ALL_LINES stays bounded too. A
# must-gather of a few hundred GPU nodes is far below it, so its logs are read whole.
LOG_BYTES_IN_FULL = 96 << 20
_LINE_COST = 256


class _Stream:
    """ingest's state between Documents: the pieces of a structured document being joined, or of a log being
    parsed piece by piece, and what the logs read in full cost so far."""

    def __init__(self, facts: Facts):
        self.facts = facts
        self.joining: list[Document] | None = None
        self.carry: _Pieces | None = None
        self.in_full = 0  # estimated bytes of the logs read whole
        self.budget_gap = False

    def take(self, doc: Document) -> None:
        facts = self.facts
        if self.joining is not None:
            if doc.meta.get(CONTINUES) and doc.artifact == self.joining[0].artifact:
                self.joining.append(doc)
                if doc.meta.get(CONTINUED):
                    return
                doc, self.joining = _joined(self.joining), None
            else:  # the file ended at a piece's end: what was joined is whole
                _ingest_one(_joined(self.joining), facts)
                self.joining = None
        if self.carry is not None:
            if doc.meta.get(CONTINUES) and doc.artifact == self.carry.artifact:
                self.carry.add(doc, facts)
                if not doc.meta.get(CONTINUED):
                    self.carry, _ = None, self.carry.flush(facts)
                return
            self.carry, _ = None, self.carry.flush(facts)
        if doc.meta.get(CONTINUED):
            score, p = sniff(doc)
            if p is not None and score >= WEAK and p.kind != "logs":
                self.joining = [doc]
                return
            self.carry = _Pieces(doc.artifact, (score, p))
            self.carry.add(doc, facts)
            return
        after = self.in_full > LOG_BYTES_IN_FULL
        if after and len(doc.lines) > KEPT_AFTER_BUDGET_LINES:  # a marked copy: the meta dict may be a manifest record or
            # shared by a file's documents; only where the mark can matter (parse_log keeps a log of more lines than
            # that in part): a fleet's small logs past the budget skip a dataclasses.replace each
            doc = replace(doc, meta={**doc.meta, KEPT_AFTER_BUDGET: True})
        for log in _ingest_one(doc, facts):
            if not isinstance(log, ContainerLog):
                continue
            if log.total_lines is None:  # read whole, whatever the reason: what the budget counts
                self.in_full += _LINE_COST * len(doc.lines) + 2 * sum(map(len, doc.lines))
            elif after and len(doc.lines) <= KEEP_ALL_LINES and not self.budget_gap:  # kept in part for the budget alone
                self.budget_gap = True
                facts.gaps.append(Gap("big log", f"the logs read in full passed {LOG_BYTES_IN_FULL >> 20} MiB of parsed lines; "
                                      f"from this log on, a log of more than {KEPT_AFTER_BUDGET_LINES:,} lines keeps only the "
                                      "lines that matter (listed under big logs)", doc.artifact))

    def finish(self) -> None:
        if self.joining:
            _ingest_one(_joined(self.joining), self.facts)
        if self.carry is not None:
            self.carry.flush(self.facts)


def whole_documents(documents: Iterable[Document]) -> Iterator[Document]:
    """Documents with the pieces of a huge file joined back into the one Document they were cut from, for a
    reader that needs whole artifacts and can afford them (serve)."""
    pieces: list[Document] = []
    for doc in documents:
        if pieces and not (doc.meta.get(CONTINUES) and doc.artifact == pieces[0].artifact):
            yield _joined(pieces)
            pieces = []
        if doc.meta.get(CONTINUED) or pieces:
            pieces.append(doc)
            if doc.meta.get(CONTINUED):
                continue
            yield _joined(pieces)
            pieces = []
            continue
        yield doc
    if pieces:
        yield _joined(pieces)


def _joined(pieces: list[Document]) -> Document:
    """Pieces of one structured document as the one Document they were cut from."""
    first = pieces[0]
    meta = {k: v for k, v in first.meta.items() if k not in (CONTINUED, CONTINUES)}
    return replace(first, lines=tuple(ln for d in pieces for ln in d.lines), meta=meta)


class _Pieces:
    """The pieces of one huge log: each parsed on its own with the parser the first was given, their logs joined
    into one ContainerLog of the artifact, their ranges into one entry of the artifacts list."""

    def __init__(self, artifact: str, chosen: tuple[int, Parser | None]):
        self.artifact, self.chosen = artifact, chosen
        self.logs: list[ContainerLog] = []
        self.sizes: list[int] = []  # lines of each piece a log came from
        self.recognised: dict[str, int] = {}  # kind -> its index in facts.recognised
        self.gaps: set[tuple[str, str]] = set()

    def add(self, doc: Document, facts: Facts) -> None:
        part = Facts(facts.description, capture_time=facts.capture_time)
        _ingest_one(doc, part, self.chosen)
        facts.errors.extend(part.errors)
        for g in part.gaps:  # the same reason once per artifact, not once per piece
            if (g.what, g.why) not in self.gaps:
                self.gaps.add((g.what, g.why))
                facts.gaps.append(g)
        for r in part.recognised:
            at = self.recognised.get(r.kind)
            if at is None:
                self.recognised[r.kind] = len(facts.recognised)
                facts.recognised.append(r)
            else:
                first = facts.recognised[at]
                facts.recognised[at] = replace(first, last_line=r.last_line, objects=max(first.objects, r.objects))
        for objs in part._by_type.values():  # noqa: SLF001 - a Facts of one piece, merged into the run's
            for obj in objs:
                if isinstance(obj, ContainerLog):
                    self.logs.append(obj)
                    self.sizes.append(len(doc.lines))
                else:
                    facts.add(obj)

    def flush(self, facts: Facts) -> None:
        if self.logs:
            facts.add(join_logs(self.logs, self.sizes))
            self.logs, self.sizes = [], []


def join_logs(pieces: list[ContainerLog], sizes: list[int]) -> ContainerLog:
    """One log of an artifact read in pieces (``sizes``: each piece's lines): the first piece's provenance, the
    lines of all in order. When any piece kept only some of its lines (a big log), the whole keeps what each
    kept: its `total_lines` is the file's, its `skipped` every piece's (line numbers are the file's already;
    each piece keeps its first and last lines, so no lines are left out where two pieces meet)."""
    if len(pieces) == 1:
        return pieces[0]
    lines = tuple(ln for log in pieces for ln in log.lines)
    if all(log.total_lines is None for log in pieces):
        return replace(pieces[0], lines=lines)
    return replace(pieces[0], lines=lines, total_lines=sum(sizes), skipped=tuple(n for log in pieces for n in log.skipped),
                   edges=max(log.edges for log in pieces))


def _ingest_one(doc: Document, facts: Facts, chosen: tuple[int, Parser | None] | None = None) -> list:
    """Parse one Document into facts; the objects a parser made of it (none when no parser took it)."""
    score, p = chosen if chosen is not None else sniff(doc)
    where = doc.artifact if doc.first_line == 1 else f"{doc.artifact}:{doc.first_line}"
    if p is None or score < WEAK:
        _read_as_text(doc, facts, where)
        return []
    if p.kind != "logs" and isinstance(doc.lines, ByteLines):  # held as bytes for the log parser's scan; the other
        doc = replace(doc, lines=tuple(doc.lines))  # parsers index lines one by one, which a tuple does at C speed
    try:
        objs = list(p.parse(doc))
    except UnusableData as exc:  # looked like p's input but is not: what it says is still read, as text
        _read_as_text(doc, facts, where, f"{p.kind}: {exc}; read as prose instead")
        return []
    except Exception as exc:  # noqa: BLE001 - the exception model: a parser bug is a gap, not a crash
        facts.errors.append(f"parser {p.kind} on {where}: {type(exc).__name__}: {exc}")
        facts.gaps.append(Gap("artifact", f"{p.kind}: {_BUG}: {type(exc).__name__}", where))
        return []
    gaps = [o for o in objs if isinstance(o, Gap)]  # what a parser could not read (a paste cut short)
    facts.gaps.extend(gaps)
    made = [o for o in objs if not isinstance(o, Gap)]
    for obj in made:
        facts.add(obj)
    facts.recognised.append(Recognised(doc.artifact, doc.first_line, doc.first_line + len(doc.lines) - 1, p.kind, len(objs) - len(gaps)))
    if score <= WEAK or doc.artifact.lower().endswith((".md", ".markdown")):
        _read_prose_lines(doc, facts, weak=score <= WEAK)
    return made


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


def _read_as_text(doc: Document, facts: Facts, where: str, why: str | None = None) -> None:
    """Open world: a document nothing recognises, or that its parser found unusable (`why`), is prose. Its
    sentences can state versions, the platform and symptoms (parsers/prose.py), and its lines can still hold the
    one error line that matters (parse_text). It counts as recognised, of kind "prose", so that only empty or
    binary input reads as nothing at all."""
    what = f"output of `{doc.command}`" if doc.command else "content"
    facts.gaps.append(Gap("artifact", why or f"{what} not recognised as any known artifact; read as prose only (stated facts and "
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


# A name the reporter masked before pasting (`node/*****`, `xxxxx`): a command that holds one names nothing that exists.
_MASKED = re.compile(r"\*{3,}|(?<![\w-])[xX]{4,}(?![\w-])")


def _unmasked(fixes: tuple[Fix, ...]) -> tuple[Fix, ...]:
    """Every check's fixes without the commands filled from a masked name: left out, and the fix says so."""
    if not any(_MASKED.search(c) for f in fixes for c in f.commands):
        return fixes
    out = []
    for f in fixes:
        kept = tuple(c for c in f.commands if not _MASKED.search(c))
        if len(kept) < len(f.commands):
            f = replace(f, commands=kept, description=f"{f.description} (A command is left out: a name it needs is masked in the "
                                                      "artifacts; fill it in.)")
        out.append(f)
    return tuple(out)


@dataclass(frozen=True)
class Selection:
    """Codes (or layer prefixes like "KD") the user selected or ignored; empty select means all."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def wants(self, c: Check) -> bool:
        from gpusleuth.checks import resolve

        def hit(pats: tuple[str, ...]) -> bool:
            return any(c.code.startswith(resolve(p).upper()) or c.name == p.lower() or c.layer.value == p.lower() for p in pats)

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
        inputs, needed = {}, None  # needed: the required input being fetched, whose absence is then the reason
        try:
            for pname, needed in c.requires:
                inputs[pname] = facts.get(needed)
            needed = None  # from here on a NotApplicable is the check's own
            for pname, typ in c.optional:
                try:
                    inputs[pname] = facts.get(typ)
                except NotApplicable:
                    inputs[pname] = None
            hits = list(c(**inputs))
        except NotApplicable as exc:
            outcomes.append(CheckOutcome(c.code, "skipped", str(exc), needed.__name__ if needed is not None else None))
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
                    fixes=_unmasked(h.fixes),
                    caused_by=h.caused_by,
                    confidence=h.confidence,
                    facts=h.facts,
                )
            )
        outcomes.append(CheckOutcome(c.code, "fired" if hits else "passed"))
    return findings, outcomes
