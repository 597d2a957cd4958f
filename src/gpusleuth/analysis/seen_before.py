"""Seen before: the public incidents (knowledge/incidents/) whose lines and conditions match a source.

The query is every error line the artifacts hold (facts/errors.py ErrorLines: logs, kernel, events, pod
status, tools), normalised as the accounting checks normalise them, with the versions, platform, runtime and
GPU products in use (facts/inuse.py). Each incident scores by its identifying lines found among the query's
lines (rapidfuzz's partial alignment of one normalised line inside the other, so a prefix or a longer message
does not hide it), by the words that name it, and by its conditions: one that holds raises the score a
little, one that the artifacts contradict lowers it and is named ("near match: platform k3s, the artifacts
show rke2"). The ranking is deterministic: the same source gives the same list.

A match is a pointer to a thread where the same lines were printed, ranked as such; it never becomes a root
cause. `link_findings` joins the report's findings to the incidents their class's references name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Iterable, Iterator

_NOT_LOADED = object()
fuzz = _NOT_LOADED  # rapidfuzz's fuzz module, imported on the first comparison (None where it is not installed)


def _fuzz():
    """Pinned in pyproject.toml; without it (a bare checkout) lines are compared word by word, see token_dice.
    Imported on first use, so that a diagnosis that compares no lines (and every other command) never loads it."""
    global fuzz
    if fuzz is _NOT_LOADED:
        try:
            from rapidfuzz import fuzz as loaded
        except ImportError:  # pragma: no cover - exercised only where the dependency is missing
            loaded = None
        fuzz = loaded
    return fuzz

from gpusleuth.checks.accounting import normalise
from gpusleuth.errors import NotApplicable
from gpusleuth.facts import inuse as _inuse  # noqa: F401 - registers the VersionsInUse combiner
from gpusleuth.facts.errors import ErrorLines
from gpusleuth.facts.inuse import VersionsInUse
from gpusleuth.facts.logs import Logs
from gpusleuth.knowledge.incidents import PLATFORMS, Incident, incidents
from gpusleuth.knowledge.versions import vtuple
from gpusleuth.model.evidence import Evidence

if TYPE_CHECKING:
    from gpusleuth.model.logs import LogLine

MAX_SHOWN = 5
MIN_SCORE = 0.5  # below this an incident is not shown
LINE_MATCH = 0.8  # a line counts as found at this similarity
MAX_QUERY_LINES = 4000
FULL_INFO = 8.0  # matched lines whose rare-word weight sums to this are fully specific
# Words that say where or what but not which failure: they count beside printed lines, never alone.
GENERIC_TERMS = frozenset([*PLATFORMS, "crashloopbackoff", "init:crashloopbackoff", "nvidia.com/gpu", "allocatable", "reboot",
                           "notready", "terminating", "unhealthy", "xid", "mig", "oomkilled", "gpu-operator", "nvidia-device-plugin",
                           "nvidia-driver-daemonset", "labels", "a100", "h100", "a10", "a30", "t4", "v100", "dgx", "okd", "vgpu",
                           "nvkind", "mps", "passthrough", "precompiled", "time-slicing"])
_WORD = re.compile(r"[a-z][a-z0-9_.\-]{2,}")
_STOP = frozenset("the and for with from this that not was are has have failed error errors unable could cannot "
                  "level msg info warning warn time err fatal".split())


def tokens(text: str) -> frozenset[str]:
    return frozenset(w.strip(".-_") for w in _WORD.findall(text.lower()) if w not in _STOP and len(w.strip(".-_")) > 2)


def line_shape(message: str) -> str:
    """A line as the corpus stores it: `normalise`d; a structured log line whose words are all quoted (klog's
    `"Failed to prepare dynamic resources" err="..."`) keeps them, quotes dropped, so that it still says something."""
    norm = normalise(message)
    if len(tokens(norm)) >= 2 or '"' not in message:
        return norm
    return normalise(message.replace('"', " "))


@dataclass(frozen=True, slots=True)
class QueryLine:
    text: str  # normalised, lower case
    evidence: Evidence | None
    words: frozenset[str]


@dataclass(frozen=True)
class Query:
    lines: tuple[QueryLine, ...]
    versions: VersionsInUse | None = None
    text: str = ""  # every query line joined: where terms are looked for

    @classmethod
    def from_lines(cls, raw: Iterable[tuple[str, Evidence | None]], versions: VersionsInUse | None = None) -> "Query":
        seen: dict[str, QueryLine] = {}
        done: set[str] = set()
        for message, ev in raw:
            if message in done:  # the same message again (a retry loop, the same log on many nodes)
                continue
            done.add(message)
            norm = line_shape(message).lower()
            if norm and norm not in seen and len(seen) < MAX_QUERY_LINES:
                if ev is not None and not isinstance(ev, Evidence):  # a log line: cite it only when kept
                    ev = Evidence(ev.artifact, ev.line, ev.raw)
                seen[norm] = QueryLine(norm, ev, tokens(norm))
        lines = tuple(seen.values())
        return cls(lines, versions, "\n".join(q.text for q in lines))


@dataclass(frozen=True)
class Match:
    incident: Incident
    score: float
    lines: tuple[tuple[str, QueryLine, float], ...]  # (incident line, the line of the source, similarity)
    terms: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    not_held: tuple[str, ...] = ()
    fixed: tuple[dict, ...] = ()
    findings: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict:
        i = self.incident
        return {
            "id": i.id, "link": i.link, "project": i.project, "title": i.title, "layer": i.layer.value,
            "score": round(self.score, 3),
            "lines": [{"known": known, "seen": q.evidence.text if q.evidence else q.text,
                       "artifact": q.evidence.artifact if q.evidence else None, "line": q.evidence.line if q.evidence else None,
                       "similarity": round(sim, 3)} for known, q, sim in self.lines],
            "terms": list(self.terms), "cause": i.cause, "fix": i.fix, "conditions": i.conditions(),
            "conditions_held": list(self.held), "conditions_not_held": list(self.not_held),
            "fixed_in": list(self.fixed), "findings": list(self.findings),
        }


# ------------------------------------------------------------------------------------------- the corpus index


@dataclass(frozen=True)
class _Index:
    items: tuple[Incident, ...]
    lines: tuple[tuple[int, str, frozenset[str]], ...]  # (incident index, normalised lower line, words)
    postings: dict  # word -> tuple of line indexes
    rare: dict  # word -> weight (rarer words weigh more)
    of_incident: tuple[tuple[int, ...], ...]  # incident index -> its line indexes
    terms: tuple[tuple[tuple[str, str], ...], ...] = ()  # incident index -> (term, its lower case)
    weights: tuple[float, ...] = ()  # line index -> the rarity of its words, summed


@cache
def index(corpus: tuple[Incident, ...] | None = None) -> _Index:
    items = corpus if corpus is not None else incidents().incidents
    lines = []
    postings: dict[str, list[int]] = {}
    for n, inc in enumerate(items):
        for ln in inc.lines:
            low = ln.lower()
            words = tokens(low)
            for w in words:
                postings.setdefault(w, []).append(len(lines))
            lines.append((n, low, words))
    total = max(len(lines), 1)
    rare = {w: 1.0 / (1 + len(p) / total * 20) for w, p in postings.items()}
    of_incident: list[list[int]] = [[] for _ in items]
    for li, (n, _, _) in enumerate(lines):
        of_incident[n].append(li)
    terms = tuple(tuple((t, t.lower()) for t in inc.terms) for inc in items)
    weights = tuple(sum(rare[w] for w in words) for _, _, words in lines)
    return _Index(items, tuple(lines), {w: tuple(p) for w, p in postings.items()}, rare, tuple(map(tuple, of_incident)), terms,
                  weights)


@cache
def _whole_word(term: str) -> re.Pattern:
    """A term as a whole word, compiled when a query first holds its text (800 terms, few of them in any source)."""
    return re.compile(r"(?<![\w-])" + re.escape(term) + r"(?![\w-])")


def _strength(sim: float) -> float:
    """A line similarity as evidence: 0.6 (a shared phrase) is worth nothing, 1.0 (the same message) all."""
    return max(0.0, (sim - 0.6) / 0.4)


def similarity(known: str, seen: str) -> float:
    """How well the incident's line is found in the source's line, 0..1: the best alignment of the shorter
    inside the longer, discounted when the source's line is only a fragment of the incident's."""
    if not known or not seen:
        return 0.0
    fuzz = _fuzz()
    if fuzz is None:
        return token_dice(known, seen)
    if len(known) <= len(seen):
        return fuzz.partial_ratio(known, seen) / 100.0
    return fuzz.partial_ratio(seen, known) / 100.0 * (len(seen) / len(known)) ** 0.5


def token_dice(known: str, seen: str) -> float:
    """The few lines of our own that rapidfuzz was measured against (bench/seen_before.py): the share of the
    incident line's words found in the source's line, Dice-weighted. Word-level only: a renamed word or a typo
    costs the whole word, where rapidfuzz's alignment loses only the characters that differ."""
    a, b = tokens(known), tokens(seen)
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return max(2 * shared / (len(a) + len(b)), shared / len(a) * (1.0 if len(a) <= len(b) else (len(b) / len(a)) ** 0.5))


# ------------------------------------------------------------------------------------------------- matching


def match(query: Query, corpus: tuple[Incident, ...] | None = None, limit: int = MAX_SHOWN, minimum: float = MIN_SCORE,
          scorer=None) -> list[Match]:
    """The incidents whose lines (and words, and conditions) match the query, best first. `corpus` replaces the
    bundled one (a leave-one-out run passes the corpus without the incident under test); `scorer` replaces the
    line similarity (bench/seen_before.py compares them)."""
    idx = index(corpus)
    scorer = scorer or similarity
    best: dict[int, dict[int, tuple[float, QueryLine]]] = {}  # incident -> line index -> (similarity, query line)
    for q in query.lines:
        overlap: dict[int, float] = {}
        for w in q.words:
            weight = idx.rare.get(w)
            if weight is None:
                continue
            for li in idx.postings[w]:
                overlap[li] = overlap.get(li, 0.0) + weight
        for li, shared in overlap.items():
            n, known, _ = idx.lines[li]
            if shared < min(1.5, 0.35 * idx.weights[li]):
                continue
            sim = scorer(known, q.text)
            if sim >= LINE_MATCH and sim > best.setdefault(n, {}).get(li, (0.0, None))[0]:
                best[n][li] = (sim, q)
    out = []
    candidates = set(best)
    found_terms: dict[int, tuple[str, ...]] = {}
    if query.text:
        for n, pats in enumerate(idx.terms):
            hit = tuple(t for t, low in pats if low in query.text and _whole_word(low).search(query.text))
            if hit:
                found_terms[n] = hit
        candidates.update(found_terms)
    for n in candidates:
        inc = idx.items[n]
        found = _one_line_each(best.get(n, {}))
        line_ids = idx.of_incident[n] if found else ()
        sims = [_strength(found.get(li, (0.0, None))[0]) for li in line_ids]
        line_score = 0.6 * max(sims) + 0.4 * sum(sims) / len(sims) if sims else 0.0
        line_score += min(0.1, 0.05 * (sum(1 for s in sims if s > 0) - 1)) if sims else 0.0
        # what the matched lines say: a long specific message is stronger evidence than a short common one
        info = sum(s * idx.weights[li] for li, s in zip(line_ids, sims))
        line_score *= 0.7 + 0.3 * min(1.0, info / FULL_INFO)
        terms = found_terms.get(n, ())
        term_score = len(terms) / len(inc.terms) if inc.terms else 0.0
        if not inc.lines or not found:
            # words alone are a weak hint: two specific ones at least, never as strong as a printed line
            specific = [t for t in terms if t.lower() not in GENERIC_TERMS]
            score = min(0.6, 0.4 + 0.1 * len(specific)) if len(specific) >= 2 else 0.3
        else:
            score = min(1.0, line_score + 0.1 * term_score)  # words add to lines, their absence takes nothing
        held, not_held = conditions(inc, query.versions)
        score = max(0.0, min(1.0, score * (1 + 0.04 * len(held)) - 0.2 * len(not_held)))
        if score < minimum:
            continue
        matched = tuple((idx.lines[li][1], q, sim) for li, (sim, q) in sorted(found.items()))
        out.append(Match(inc, score, matched, terms, tuple(held), tuple(not_held), tuple(fixed_against(inc, query.versions))))
    out.sort(key=lambda m: (-m.score, m.incident.link))
    return out[:limit] if limit else out


def _one_line_each(found: dict) -> dict:
    """One line of the source counts for one line of an incident (its best): a single message cannot stand in
    for two different ones."""
    by_query: dict[int, tuple[int, float]] = {}
    for li, (sim, q) in found.items():
        key = id(q)
        if key not in by_query or sim > by_query[key][1]:
            by_query[key] = (li, sim)
    keep = {li for li, _ in by_query.values()}
    return {li: v for li, v in found.items() if li in keep}


def conditions(inc: Incident, versions: VersionsInUse | None) -> tuple[list[str], list[str]]:
    """The incident's conditions the artifacts show to hold, and those they show not to hold; a condition
    the artifacts say nothing of is neither."""
    held, not_held = [], []
    if versions is None:
        return held, not_held
    for kind, wanted in (("platforms", inc.platform), ("runtimes", inc.runtime)):
        seen = versions.names(kind)
        if wanted and seen:
            label = kind[:-1]
            if seen & {w.lower() for w in wanted}:
                held.append(f"{label} {'/'.join(wanted)}")
            else:
                not_held.append(f"{label} {'/'.join(wanted)}, the artifacts show {', '.join(sorted(seen))}")
    if inc.gpu and versions.gpus:
        products = [p for p, _ in versions.gpus]
        if any(g.lower() in p.lower() for g in inc.gpu for p in products):
            held.append(f"GPU {'/'.join(inc.gpu)}")
        else:
            not_held.append(f"GPU {'/'.join(inc.gpu)}, the artifacts show {', '.join(sorted(products)[:3])}")
    for comp, rng in inc.versions.items():
        used = sorted({v.version for v in versions.of(comp)}, key=vtuple)
        if not used:
            continue
        if any(rng.holds(v) for v in used):
            held.append(f"{comp} {rng.text} (in use: {', '.join(used)})")
        else:
            not_held.append(f"{comp} {rng.text}, in use: {', '.join(used)}")
    return held, not_held


def fixed_against(inc: Incident, versions: VersionsInUse | None) -> list[dict]:
    """Each fixed-in version against the version in use: whether the fix is already there."""
    out = []
    for comp, fixed in inc.fixed.items():
        used = sorted({v.version for v in versions.of(comp)}, key=vtuple) if versions is not None else []
        if not used:
            state = "version in use unknown"
        elif all(vtuple(v) >= vtuple(fixed) for v in used):
            state = "in use has the fix"
        else:
            state = "in use is older than the fix"
        out.append({"component": comp, "fixed_in": fixed, "in_use": used, "state": state})
    return out


# ------------------------------------------------------------------------------------------------ the view


_LOUD = frozenset(("warning", "error", "fatal"))
WHOLE_LOG = 300  # a log this short is read whole; of a longer one, its warnings, errors and last lines
LAST_LINES = 40


def query_of(facts) -> Query:
    """Every error line, and of each log the lines an incident may be told by: all of a short log, else its
    warnings and errors and its last lines (where a container says why it stopped)."""
    try:
        errors = facts.get(ErrorLines).lines
    except NotApplicable:
        errors = []
    try:
        logs = facts.get(Logs).logs
    except NotApplicable:
        logs = []

    def raw() -> Iterator[tuple[str, Evidence | LogLine | None]]:  # read once, in order: no list of every line of a fleet
        for e in errors:
            yield e.message, e.evidence
        for log in logs:
            lines = log.lines
            n = len(lines)
            start = 0 if (log.total_lines or n) <= WHOLE_LOG else n - LAST_LINES  # a big log keeps its last lines
            for i, ln in enumerate(lines):
                if i >= start or ln.level in _LOUD:
                    yield ln.message, ln

    try:
        versions = facts.get(VersionsInUse)
    except NotApplicable:
        versions = None
    return Query.from_lines(raw(), versions)


def seen_before_view(facts) -> dict:
    """The report view: the best matches and how many incidents and lines were compared."""
    query = query_of(facts)
    found = match(query)
    return {"seen_before": found, "seen_before_searched": {"incidents": len(index().items), "lines": len(query.lines)}}


@cache
def _class_references() -> dict[str, frozenset[str]]:
    from gpusleuth.checks import all_checks

    return {c.code: frozenset(c.references) for c in all_checks() if c.references}


def link_findings(matches: list[Match], findings) -> list[Match]:
    """Add to each match the findings whose class names the same thread, and the incidents a finding's class
    names that the lines did not bring (score 0: listed as the class's known threads, not as a match)."""
    refs = _class_references()
    by_link: dict[str, list[str]] = {}
    for f in findings:
        for ref in refs.get(f.code, ()):
            by_link.setdefault(ref.rstrip("/"), []).append(f.code)
    corpus = incidents()
    for inc in corpus.incidents:
        if inc.klass:
            for f in findings:
                if f.code == inc.klass:
                    by_link.setdefault(inc.link, []).append(f.code)
    out = []
    shown = set()
    for m in matches:
        codes = tuple(sorted(set(by_link.get(m.incident.link, ()))))
        out.append(Match(m.incident, m.score, m.lines, m.terms, m.held, m.not_held, m.fixed, codes) if codes else m)
        shown.add(m.incident.link)
    linked = corpus.by_link()
    for link, codes in sorted(by_link.items()):
        if link in linked and link not in shown and len(out) < MAX_SHOWN * 2:
            out.append(Match(linked[link], 0.0, (), (), (), (), (), tuple(sorted(set(codes)))))
    return out


def seen_before(report) -> tuple[list[Match], dict]:
    """What every renderer shows: the matches with their findings linked, and what was searched."""
    matches = report.extras.get("seen_before")
    if matches is None:
        return [], {}
    return link_findings(list(matches), report.findings), report.extras.get("seen_before_searched", {})


# ------------------------------------------------------------------------------------------- for renderers


def fixed_words(d: dict) -> str:
    """"device-plugin 0.17.0 (in use 0.15.0: older than the fix)"."""
    used = ", ".join(d["in_use"]) or "?"
    state = {"in use has the fix": "has the fix", "in use is older than the fix": "older than the fix"}.get(d["state"], "not seen")
    return f"{d['component']} {d['fixed_in']} (in use {used}: {state})"


def summary_line(matches: list[Match], searched: dict) -> str:
    shown = [m for m in matches if m.score > 0]
    lines, total = searched.get("lines", 0), searched.get("incidents", 0)
    if not shown:
        return (f"No incident seen before matches the {lines} line(s) read ({total} public incidents searched)."
                if lines else f"No error lines to compare with the {total} public incidents.")
    return (f"{len(shown)} of {total} public incidents match ({lines} line(s) read). A match points to a thread "
            "where the same lines were printed; it is not evidence by itself.")
