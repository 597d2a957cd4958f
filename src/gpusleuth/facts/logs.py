"""All log lines together, and which known signatures (knowledge/signatures.toml) each one matches.

Signatures are RE2 patterns compiled into one re2.Set: every line is scanned once for all of them, in
linear time, so a hostile or huge log cannot make matching backtrack.

With the optional `hyperscan` wheel (`pip install 'gpusleuth[fast]'`), each log's messages are first scanned
as one block by hyperscan (also linear, no backtracking) to find the lines any signature can match; only those
lines then go through the re2.Set as above, so the result is the same line for line (tests/facts/
test_logs_hyperscan.py). Without the wheel, or for a log hyperscan cannot take as one block (a message holding
a newline, text that is not valid UTF-8), every line goes through the re2.Set.

A big log reaches this module already reduced to its kept lines: `kept_rows` (below) is the scan parsers/logs.py
runs over its raw text first, built from the same tables, so that only lines something here or in
facts/errors.py can match become LogLines.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from operator import attrgetter
from typing import Iterable, Iterator, Sequence

import re2

from gpusleuth import parallel
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.knowledge import table
from gpusleuth.knowledge.message_catalogue import catalogue, compiled
from gpusleuth.model.finding import Gap
from gpusleuth.model.logs import ContainerLog, LogLine
from gpusleuth.sources.text import ByteLines


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


@cache
def signature_pattern(sig_id: str) -> re.Pattern:
    """One signature's pattern, compiled for a check that reads its named groups (or matches it on a pod status)."""
    return re.compile(next(s.pattern for s in signatures()[0] if s.id == sig_id))


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
    logs = facts.present(ContainerLog, "no container or kernel logs in the artifacts")
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
    facts.gaps.extend(kept_gaps([log for log in logs if log.total_lines is not None]))
    return Logs(logs, dict(by_id), dict(by_tag))


KEPT_GAPS_APART = 10  # this many big logs are listed one by one (a node's worth); more are one gap with their totals


def kept_gaps(big: list[ContainerLog]) -> list[Gap]:
    """The report's word on the big logs: each one, or, for a fleet's worth of them, one line with the totals and
    the first few names (the report stays readable with 5,000 of them)."""
    if len(big) <= KEPT_GAPS_APART:
        return [kept_gap(log) for log in big]
    edges = " or ".join(str(e) for e in sorted({log.edges for log in big}, reverse=True))
    names = ", ".join(log.artifact for log in big[:3])
    return [Gap("big log", f"{len(big):,} big logs, {sum(log.total_lines for log in big):,} lines in all, "
                           f"{sum(len(log.lines) for log in big):,} kept ({_KEPT_WHAT} {edges}); the other lines were scanned "
                           f"and hold nothing gpusleuth looks for — {names} and {len(big) - 3:,} more")]


_KEPT_WHAT = "lines that match a known signature, error and warning lines, lines the views read, the first and last"


def kept_gap(log: ContainerLog) -> Gap:
    """What the report says of a big log read in kept-lines mode: how much was kept and what. It is not partial
    input: every line was scanned, and only lines nothing looks for were left as text."""
    return Gap("big log", f"{log.total_lines:,} lines, {len(log.lines):,} kept ({_KEPT_WHAT} {log.edges}); the other lines "
                          "were scanned and hold nothing gpusleuth looks for", log.artifact)


_SEEN_MAX = 100_000  # distinct messages remembered while matching; the memo is dropped and restarted past it


# ---- which lines of a big log are kept ---------------------------------------------------------------------------
#
# parsers/logs.py makes LogLines of a big log only for the lines found here, by scanning the file's text at C speed
# before any line becomes an object. The scan is a superset of what the views above and facts/errors.py look for
# in messages: the same table rows (signatures, attribution's error shapes, kernel errors, retries, success and
# health lines, the message catalogue's errors), with `^`/`$` dropped since a message sits inside its raw line,
# plus every level word, the phrases views read, and the first and last lines of the log.

EDGE_LINES = 200  # a big log's first and last lines are always kept: views show the last lines, and the first
# ones carry its banner, its container's start and the format the rest is in
# Phrases views read in lines that no table names, with how many lines after each belong to it.
VIEW_PHRASES: tuple[tuple[str, int], ...] = (
    ("NVRM", 0), ("nouveau", 0),  # facts/gpus.py: Xids, GPU UUIDs and other kernel messages of the driver
    ("Running with config:", 200),  # facts/plugin_config.py: the JSON block the plugin prints after it
    ("modprobe", 0),  # checks/kernel_driver.py: the `+ modprobe` trace above a failure
    ("torch", 0), ("PyTorch", 0), ("CUDA Version ", 0), ("Cuda compilation tools", 0), ("CUDA used to build", 0),  # checks/cuda_runtime.py
    ("CUDA driver version is insufficient", 0),
)
# Level words in any of the spellings parsers/logs.py reads (klog's `E1126`, logrus' `level=error` and `ERRO[`,
# JSON's "level":"e", a bare `ERROR:`), the CUDA error names checks/cuda_runtime.py looks for in info lines.
_LEVEL_WORDS = (r"(?i)\b(?:err|erro|error|fata|fatal|pani|panic|crit|critical|dpanic|warn|warning)\b",
                r"\b[EFW]\d{4} ", r'(?i)"(?:level|lvl|severity|levelname)"\s*:\s*"[ewf]"',
                r"(?i)cuda\w*error|cuda_error|\bcuda\b[^\n]*\berror|\berror\b[^\n]*\bcuda\b")


# Escapes that match a newline, and what they become: a message is one line (folded lines are joined by spaces),
# so no match of the original crosses one, and in the scan none may (a match's end must be in its start's line).
_NOT_NEWLINE = {"\\s": "[\\t\\x0b\\f\\r ]", "\\W": "[^\\w\\n]", "\\D": "[^\\d\\n]"}
_NOT_NEWLINE_IN_CLASS = {"\\s": "\\t\\x0b\\f\\r ", "\\W": None, "\\D": None}  # None: cannot be said in a class


def relaxed(pattern: str) -> str:
    """pattern with its `^` and `$` anchors dropped, its groups made non-capturing, a backslash allowed before
    each quote and nothing that matches a newline: it matches a raw log line wherever the original matches the
    line's message (which sits inside the raw line, after prefixes and stamps, with a logrus or JSON value's
    quotes escaped), within that line, and can be joined with others (no repeated group names)."""
    out: list[str] = []
    i, n, in_class, negated = 0, len(pattern), False, False
    while i < n:
        c = pattern[i]
        if c == "\\":
            esc = pattern[i:i + 2]
            if in_class and esc in _NOT_NEWLINE_IN_CLASS:
                esc = _NOT_NEWLINE_IN_CLASS[esc] or esc  # \W and \D in a class: the class's own newline rule below
            elif not in_class:
                esc = _NOT_NEWLINE.get(esc, esc)
            out.append(esc)
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
                if negated:
                    out.append("\\n")  # [^"]+ stops at the end of the line, as it does in a message
            out.append(c)
            i += 1
            continue
        if c == "[":
            negated = pattern[i + 1:i + 2] == "^"
            j = i + 1 + negated
            j += pattern[j:j + 1] == "]"  # a `]` first in a class is a character
            out.append(pattern[i:j])
            i, in_class = j, True
            continue
        if c in "^$":
            i += 1
            if c == "^" and pattern.startswith("(", i) and (j := _group_end(pattern, i)) < n and pattern[j] == "?":
                i = j + 1  # `^(?:prefix: )?`: unanchored, an optional prefix changes no line's match, and costs the
                # DFA states a counted repetition multiplies
            continue
        if c == '"':
            out.append('\\\\?"')  # logrus and JSON print a quote inside a value as \", the message holds it bare
            i += 1
            continue
        if c == "(" and pattern.startswith("(?P<", i):
            out.append("(?:")
            i = pattern.index(">", i) + 1
            continue
        if c == "(" and not pattern.startswith("(?", i):
            out.append("(?:")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


_UNANCHORED = re2._Anchor.UNANCHORED


def _group_end(pattern: str, i: int) -> int:
    """The index just after the group that opens at pattern[i]."""
    depth, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            i += 1 + (pattern[i + 1:i + 2] == "^")
            i += pattern[i:i + 1] == "]"
            continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


@dataclass(frozen=True)
class _KeepScan:
    regex: "re2._Regexp"  # every relaxed pattern as one alternation, over the UTF-8 bytes of the text
    after: tuple[tuple[bytes, int], ...]  # phrase -> lines after it that are kept too
    parts: tuple[str, ...]  # the alternation's patterns, one by one


@cache
def keep_scan() -> _KeepScan:
    from gpusleuth.facts.errors import _scoped, error_rows  # errors.py joins its table rows the same way

    rows = table("attribution")
    patterns = [s.pattern for s in signatures()[0]] + [r["pattern"] for r in error_rows()]
    patterns += [r["pattern"] for part in ("kernel", "retry", "success", "health") for r in rows.get(part, [])]
    runtimes = table("runtimes")
    patterns += [r["pattern"] for part in ("handler_error", "toolkit_failure") for r in runtimes.get(part, [])]
    parts = [_scoped(relaxed(p)) for p in patterns] + [_scoped(p) for p in _LEVEL_WORDS]
    parts += [re2.escape(p) for p, _ in VIEW_PHRASES]
    opts = re2.Options()
    opts.max_mem = 256 << 20
    return _KeepScan(re2.compile("|".join(parts), opts), tuple((p.encode(), k) for p, k in VIEW_PHRASES if k), tuple(parts))


@cache
def keep_database():
    """The keep scan's patterns and the catalogue's error messages in one hyperscan block-mode database, or None
    without the wheel or where a pattern does not compile there (the RE2 scan then runs)."""
    try:
        import hyperscan
    except ImportError:
        return None
    parts = list(keep_scan().parts)
    parts += [relaxed(m.pattern) for m in catalogue().messages if m.level in ("error", "fatal") and not m.benign]
    flags = hyperscan.HS_FLAG_UTF8
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        db.compile(expressions=[p.encode("utf-8") for p in parts], ids=list(range(len(parts))), elements=len(parts),
                   flags=[flags] * len(parts))
    except Exception:  # hyperscan.error: a construct it does not support
        return None
    return db


CHUNK_LINES = 20_000  # lines scanned as one block: the text of a block, not of the whole log, is what the scan holds


def kept_rows(lines: Sequence[str], edges: int | None = None) -> set[int] | None:
    """Indexes of the lines that a big log keeps: those any table row or view phrase can match, the lines after a
    phrase that takes them, and its first and last `edges` lines (None: EDGE_LINES); None when the text cannot be
    mapped to lines (a line holding a newline). Continuation lines are the parser's to add."""
    n = len(lines)
    fast = _keep_fast(n)
    edges = EDGE_LINES if edges is None else edges
    keep = set(range(min(edges, n)))
    if edges:
        keep.update(range(max(0, n - edges), n))
    if isinstance(lines, ByteLines):  # the text's bytes are there already: scanned as they are, never joined
        return keep if _scan_blocks(_byte_blocks(lines, fast), n, keep) else None
    return keep if _scan_blocks(_line_blocks(lines, fast), n, keep) else None


def _line_blocks(lines: Sequence[str], fast: bool) -> Iterator[tuple[bytes, int, bool] | None]:
    """The lines' blocks of CHUNK_LINES lines, joined and encoded one at a time; None for a block whose text cannot
    be mapped to lines (a line holding a newline)."""
    for base in range(0, len(lines), CHUNK_LINES):
        part = lines[base:base + CHUNK_LINES]
        text = "\n".join(part)
        try:
            data, valid = text.encode("utf-8"), True
        except UnicodeEncodeError:  # lone surrogates from undecodable bytes: RE2 takes them, hyperscan does not
            data, valid = text.encode("utf-8", "surrogatepass"), False
        del text
        yield (data, base, fast and valid) if data.count(b"\n") == len(part) - 1 else None


_keep_scanned = [0]  # lines the keep scan read so far in this process


def _keep_fast(n: int) -> bool:
    """Whether the keep scan of n lines takes the hyperscan path: with the wheel, on a log of HYPERSCAN_MIN_LINES
    lines, or once the big logs of the run (a huge file comes in pieces of at most 500,000 lines) passed that many
    together; compiling the database (~0.3 s) pays only from about there."""
    if not USE_HYPERSCAN:
        return False
    _keep_scanned[0] += n
    return n >= HYPERSCAN_MIN_LINES or _keep_scanned[0] >= HYPERSCAN_MIN_LINES


def _byte_blocks(lines: ByteLines, fast: bool) -> Iterator[tuple[bytes, int, bool]]:
    """The same blocks of CHUNK_LINES lines as _line_blocks, their bytes cut from the text's (a block whose lines hold
    a tab is its lines as they read, tabs expanded, joined and encoded)."""
    data, n = lines.data, len(lines)
    start = 0
    for base in range(0, n, CHUNK_LINES):
        stop = min(n, base + CHUNK_LINES)
        end = lines.offset(stop) - 1 if stop < n else lines.size
        block = data if not base and stop == n else data[start:end]  # one block: the bytes themselves, not a copy
        # (a last newline there is one more empty line, which no pattern matches)
        if lines.tabs and b"\t" in block:
            block = "\n".join(lines[base:stop]).encode("utf-8")
        yield block, base, fast
        start = end + 1


# Blocks of one text scanned at once by threads, one per core up to this: RE2 lets go of the interpreter lock while
# it searches, so the blocks of a big log are scanned side by side (a piece of a huge file has a few of them).
SCAN_THREADS = min(4, parallel.usable_cpus())
_pool: list = []  # the thread pool, made on the first text of several blocks


def _before_fork() -> None:
    """The pool's threads end before this process forks (a YAML List read in parts): a child has none of them, and
    a fork with threads alive can leave the child a lock some thread held. Each side makes a pool when it next
    needs one."""
    if _pool:
        _pool.pop().shutdown(wait=True)


os.register_at_fork(before=_before_fork)


def _scan_blocks(blocks: Iterator[tuple[bytes, int, bool] | None], n: int, keep: set[int]) -> bool:
    """_scan_block over each (bytes, first line index, fast) block, into keep; False at a block that is None (the
    text cannot be mapped to lines). The RE2 scan runs on SCAN_THREADS threads, that many blocks at a time (what
    the scan holds is that many blocks, not the text), each into a set of its own, merged: the same rows as one
    by one. The hyperscan scan (already faster than grep) stays on one thread: its scratch space is not shared."""
    batch: list[tuple[bytes, int, bool]] = []
    for block in blocks:
        if block is None:
            return False
        batch.append(block)
        if len(batch) == SCAN_THREADS:
            _scan_batch(batch, n, keep)
            batch = []
    _scan_batch(batch, n, keep)
    return True


def _scan_batch(batch: list[tuple[bytes, int, bool]], n: int, keep: set[int]) -> None:
    if len(batch) < 2 or any(fast for _, _, fast in batch) and keep_database() is not None:
        for data, base, fast in batch:
            _scan_block(data, base, n, keep, fast)
        return
    keep_scan(), catalogue()  # built once, before the threads ask for them
    if not _pool:
        from concurrent.futures import ThreadPoolExecutor
        _pool.append(ThreadPoolExecutor(SCAN_THREADS, thread_name_prefix="gpusleuth-scan"))

    def one(block: tuple[bytes, int, bool]) -> set[int]:
        rows: set[int] = set()
        _scan_block(block[0], block[1], n, rows, block[2])
        return rows

    for rows in _pool[0].map(one, batch):
        keep |= rows


def _scan_block(data: bytes, base: int, n: int, keep: set[int], fast: bool = False) -> None:
    """Adds to keep the indexes (from base) of the lines of data that the scan keeps. Matches are gathered as byte
    offsets first and turned into line indexes in one sweep, so that newlines are counted once per block.

    With the hyperscan wheel, one block scan of the database reports the end of every match of every pattern
    (the end of a match inside a line is in that line); without it, the RE2 alternation is searched once per
    matching line and the catalogue's RE2 set once per block."""
    scan = keep_scan()
    find = data.find
    at: list[int] = []  # offsets inside the lines that matched (no relaxed pattern matches a newline)
    db = keep_database() if fast else None  # data is valid UTF-8 (hyperscan's UTF-8 mode needs it)
    if db is not None:
        ends: list[int] = []
        db.scan(data, match_event_handler=lambda _id, _frm, to, _flags, _ctx: ends.append(to))
        at = [e - 1 for e in ends if e]
    else:
        match, size = scan.regex._regexp.Match, len(data)  # the wrapper's Match objects cost more than the search on
        # a line that matches: its spans are read directly
        pos = 0
        while pos < size:
            start = match(_UNANCHORED, data, pos, size)[0][0]
            if start < 0:
                break
            at.append(start)
            nl = find(b"\n", start)
            pos = size if nl < 0 else nl + 1  # one match is enough for a line
        for msg in catalogue().errors_in(data):  # the catalogue's error messages, as facts/errors.py finds them
            at.extend(m.start() for m in _relaxed_compiled(msg.pattern).finditer(data))
    after = []  # (offset, lines after it that are kept) of the phrases that take the lines after them
    for phrase, k in scan.after:
        pos = find(phrase)
        while pos >= 0:
            after.append((pos, k))
            pos = find(phrase, pos + len(phrase))
    marks = sorted([(o, 0) for o in at] + after)
    line, last, count = base, 0, data.count
    for offset, k in marks:
        line += count(b"\n", last, offset)
        last = offset
        keep.add(line)
        if k:
            keep.update(range(line + 1, min(n, line + k + 1)))


@cache
def _relaxed_compiled(pattern: str) -> "re2._Regexp":
    return compiled(relaxed(pattern))
