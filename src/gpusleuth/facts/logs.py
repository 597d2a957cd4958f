"""All log lines together, and which known signatures (knowledge/signatures.toml) each one matches.

Signatures are RE2 patterns compiled into one re2.Set: every line is scanned once for all of them, in
linear time, so a hostile or huge log cannot make matching backtrack.
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

    def signatures_at(self) -> dict[tuple[str, int], list[Signature]]:
        """(artifact, line) -> the signatures that line matches, in all_matches() order. Built once and shared
        (the timeline and the operand graph both index by it): read it, never change it."""
        if self._at is None:
            at: dict[tuple[str, int], list[Signature]] = defaultdict(list)
            for m in self.all_matches():
                at[(m.line.artifact, m.line.line)].append(m.signature)
            self._at = dict(at)
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
    for log in logs:
        for ln in log.lines:
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
