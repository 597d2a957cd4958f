"""All log lines together, and which known signatures (knowledge/signatures.toml) each one matches.

Signatures are RE2 patterns compiled into one re2.Set: every line is scanned once for all of them, in
linear time, so a hostile or huge log cannot make matching backtrack.

With the optional `hyperscan` wheel (`pip install 'gpusleuth[fast]'`), each log's messages are first scanned
as one block by hyperscan (also linear, no backtracking) to find the lines any signature can match; only those
lines then go through the re2.Set as above, so the result is the same line for line (tests/facts/
test_logs_hyperscan.py). Without the wheel, or for a log hyperscan cannot take as one block (a message holding
a newline, text that is not valid UTF-8), every line goes through the re2.Set.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from operator import attrgetter
from typing import Iterable

import re2

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.knowledge import table
from gpusleuth.model.logs import ContainerLog, LogLine


@dataclass(frozen=True, slots=True)
class Signature:
    id: str
    tag: str
    layer: str
    severity: str
    pattern: str
    component: str | None = None
    marker: str | None = None
    note: str = ""  # what the line means, in the table's words


@dataclass(slots=True, unsafe_hash=True)  # not frozen, for speed as LogLine: one per recognised line; never assigned to
class Match:
    line: LogLine
    signature: Signature
    log: ContainerLog


@cache
def signatures() -> tuple[tuple[Signature, ...], "re2.Set"]:
    sigs = tuple(
        Signature(
            id=row["id"], tag=row["tag"], layer=row.get("layer", ""), severity=row.get("severity", "info"),
            pattern=row["pattern"], component=row.get("component"), marker=row.get("marker"), note=row.get("note", ""),
        )
        for row in table("signatures").get("signature", [])
    )
    opts = re2.Options()
    opts.max_mem = 64 << 20
    matcher = re2.Set.SearchSet(opts)
    for s in sigs:
        matcher.Add(s.pattern)
    matcher.Compile()
    return sigs, matcher


USE_HYPERSCAN = True  # when the wheel is installed; bench/bench_scan.py and the tests turn it off to compare
# Compiling the hyperscan database costs ~0.1-0.2 s a run; on bench/bench_scan.py's 1.6 M-line log the path saved
# ~0.2 s of build_logs' 1.1 s (most of what is left is reading the messages of a million LogLines), so it pays
# only on logs of about a million lines and more; below that, re2 reads every line as it always did.
HYPERSCAN_MIN_LINES = 1_000_000


@cache
def hyperscan_database():
    """Every signature in one hyperscan block-mode database (multi-line: ^ and $ also match at the newlines
    between messages), or None without the wheel or where a pattern does not compile there."""
    try:
        import hyperscan
    except ImportError:
        return None
    sigs, _ = signatures()
    flags = hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_UTF8
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        db.compile(expressions=[s.pattern.encode("utf-8") for s in sigs], ids=list(range(len(sigs))),
                   elements=len(sigs), flags=[flags] * len(sigs))
    except Exception:  # hyperscan.error: a pattern it does not support, or one that matches the empty string
        # (it would report a match at every offset); the re2 path then reads every line
        return None
    return db


def _candidates(db, log: ContainerLog) -> list[int] | None:
    """Indexes of the log's lines where hyperscan finds some signature's match ending, in order; a superset of
    the lines the re2.Set matches (a match inside one message is a match inside the joined messages, and
    multi-line anchors match at the joins), so confirming each with the re2.Set gives its result exactly.
    None where the log cannot be scanned as one block."""
    n = len(log.lines)
    text = messages_text(log)
    if text.count("\n") != n - 1:  # a message holding a newline: indexes would not map to lines
        return None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from undecodable bytes: not valid UTF-8 for hyperscan
        return None
    ends: list[int] = []
    db.scan(data, match_event_handler=lambda _id, _frm, to, _flags, _ctx: ends.append(to))
    if not ends:
        return []
    out: list[int] = []
    line, pos = 0, 0
    for end in sorted(set(ends)):  # matches arrive by end offset; the count of newlines before each gives its line
        line += data.count(b"\n", pos, end)
        pos = end
        if not out or out[-1] != line:  # a match ending at a line's newline counts for that line, not the next
            out.append(line)
    return out


@dataclass
class Logs:
    logs: list[ContainerLog]
    _by_id: dict[str, list[Match]] = field(default_factory=dict)
    _by_tag: dict[str, list[Match]] = field(default_factory=dict)
    _at: dict[tuple[str, int], list[Signature]] | None = field(default=None, repr=False)
    _pods: tuple | None = field(default=None, repr=False, compare=False)  # ((id, len) of logs, pod -> its logs)

    def lines(self):
        for log in self.logs:
            for ln in log.lines:
                yield log, ln

    def matches(self, signature_id: str) -> list[Match]:
        return self._by_id.get(signature_id, [])

    def all_matches(self) -> list[Match]:
        return [m for ms in self._by_id.values() for m in ms]

    def signatures_at(self) -> dict[tuple[str, int], tuple[Signature, ...]]:
        """(artifact, line) -> the signatures that line matches, in all_matches() order. Built once and shared
        (the timeline and the operand graph both index by it): read it, never change it."""
        if self._at is None:
            # values are tuples: a line matching one signature shares the one 1-tuple of it (most lines; the same
            # signatures on every node), a line matching several gets its own
            at: dict[tuple[str, int], tuple[Signature, ...]] = {}
            one: dict[int, tuple[Signature]] = {}
            for m in self.all_matches():
                key, sig = (m.line.artifact, m.line.line), m.signature
                prev = at.get(key)
                if prev is None:
                    t = one.get(id(sig))
                    if t is None:
                        t = one[id(sig)] = (sig,)
                    at[key] = t
                else:
                    at[key] = prev + (sig,)
            self._at = at
        return self._at

    def for_pod(self, pod: str) -> list[ContainerLog]:
        """The logs of this pod (by the log's pod, or its first line's), in log order; indexed once, since
        checks ask per pod and a scan per call made fleet-size inputs quadratic."""
        stamp = (id(self.logs), len(self.logs))
        if self._pods is None or self._pods[0] != stamp:
            index: dict = {}
            for log in self.logs:
                keys = {log.pod}
                keys.update(ln.pod for ln in log.lines[:1])
                for k in keys:
                    index.setdefault(k, []).append(log)
            self._pods = (stamp, index)
        return list(self._pods[1].get(pod, ()))

    def grep(self, needle: str, pod: str | None = None) -> list[tuple[ContainerLog, LogLine]]:
        """Plain substring search, for checks that need one exact phrase and no signature row."""
        return self.grep_many((needle,), pod)[needle]

    def grep_many(self, needles: Iterable[str], pod: str | None = None) -> dict[str, list[tuple[ContainerLog, LogLine]]]:
        """grep for several phrases at once: each log's messages are joined once, and only the logs whose text
        holds a phrase are read line by line."""
        out: dict[str, list[tuple[ContainerLog, LogLine]]] = {n: [] for n in needles}
        for log in self.logs:
            text = messages_text(log)
            for needle, found in out.items():
                if needle in text:
                    found.extend((log, ln) for ln in log.lines if needle in ln.message and (pod is None or ln.pod == pod or log.pod == pod))
        return out


_MESSAGE = attrgetter("message")


def messages_text(log: ContainerLog) -> str:
    """A log's messages, one per line, joined at C speed: a substring test on it tells whether any line of the
    log can hold a phrase, before a Python loop reads them."""
    return "\n".join(map(_MESSAGE, log.lines))


@combiner(Logs)
def build_logs(facts: Facts) -> Logs:
    logs = facts.all(ContainerLog)
    if not logs:
        raise NotApplicable("no container or kernel logs in the artifacts")
    sigs, matcher = signatures()
    by_id: dict[str, list[Match]] = defaultdict(list)
    by_tag: dict[str, list[Match]] = defaultdict(list)
    seen: dict[str, tuple[int, ...]] = {}  # message -> signatures it matches: logs repeat their lines (polling loops)
    db = hyperscan_database() if USE_HYPERSCAN and sum(len(log.lines) for log in logs) >= HYPERSCAN_MIN_LINES else None
    for log in logs:
        lines = log.lines
        if db is not None and (found := _candidates(db, log)) is not None:
            lines = [log.lines[i] for i in found]
        for ln in lines:
            hits = seen.get(ln.message)
            if hits is None:
                if len(seen) >= _SEEN_MAX:
                    seen.clear()
                hits = seen[ln.message] = tuple(matcher.Match(ln.message) or ())
            for i in hits:
                m = Match(ln, sigs[i], log)
                by_id[sigs[i].id].append(m)
                by_tag[sigs[i].tag].append(m)
    return Logs(logs, dict(by_id), dict(by_tag))


_SEEN_MAX = 100_000  # distinct messages remembered while matching; the memo is dropped and restarted past it
