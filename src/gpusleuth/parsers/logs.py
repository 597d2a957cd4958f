"""Container, kernel and journal logs -> one ``ContainerLog`` of ``LogLine``s per document.

Reads what people actually have: must-gather's per-pod files (every line prefixed `[pod/<pod>/<container>] `
by `kubectl logs --all-containers --prefix`), `kubectl logs` with or without `--timestamps`, CRI log files
(`… stderr F …`, partial `P` lines joined), klog, logrus (quoted, unquoted, `ERRO[0003]`), Go's log package,
JSON lines, the MOFED entrypoint's `[21-Nov-25_11:51:13]`, `set -x` traces, installer paragraphs whose
indented continuation lines belong to the line above, `dmesg` (uptime and `-T`), journald and syslog.

Times come from the one registry in parsers/timestamps.py. A line whose stamp is malformed keeps its text and
loses only its time. Year-less and zone-less times are left as the registry gives them (placeholder year,
naive datetime); facts/timeline.py infers both from the other sources and states how.

Who wrote the log (pod, namespace, container, previous instance) comes from the lines themselves, the
command that printed them, and, as hints only, the file name. The node is the one a bundle's record names
(`doc.meta["node"]`: the pod's node, or the probed node), else the host name journald/syslog lines carry.
"""

from __future__ import annotations

import bisect
import gc
import heapq
import json
from dataclasses import replace
from datetime import datetime
import re
from collections import Counter
from functools import lru_cache
from operator import attrgetter
from typing import Iterator

from gpusleuth.gcpause import gc_paused
from gpusleuth.model.document import KEPT_AFTER_BUDGET, Document
from gpusleuth.model.logs import ContainerLog, LogLine
from gpusleuth.parsers import shellwords
from gpusleuth.parsers.base import LIKELY, NO, SURE, WEAK, parser
from gpusleuth.parsers.timestamps import BY_ID, FORMATS, TimeFormat, candidates, iso_stamp
from gpusleuth.sources.text import ByteLines

MAX_FOLDED_LINES = 40  # continuation lines folded into one LogLine; the rest start new LogLines
MAX_FOLDED_CHARS = 4000
# A continuation line is indented at least this much: nvidia-installer aligns its paragraphs under the text
# after "WARNING: "; compiler output ("  CC [M] ...") and YAML use two spaces and are lines of their own.
_INDENT = "    "

# A kernel subsystem's prefix (`NVRM: `, `nvidia-nvlink: `) that printk repeats on a message's wrapped lines.
_SUBSYSTEM = re.compile(r"[A-Za-z][\w-]{0,31}: ")
_OUTER = frozenset(("cri", "rfc3339", "journal", "syslog"))  # prefixes that wrap another program's line
_HOST_LINES = frozenset(("journal", "syslog"))
_KERNEL_FORMATS = frozenset(("dmesg", "dmesg-T"))
_DMESG = BY_ID["dmesg"]

_LEVELS = {
    "i": "info", "info": "info", "information": "info", "notice": "info",
    "w": "warning", "warn": "warning", "warning": "warning",
    "e": "error", "erro": "error", "err": "error", "error": "error",
    "f": "fatal", "fata": "fatal", "fatal": "fatal", "pani": "fatal", "panic": "fatal", "crit": "fatal", "critical": "fatal", "dpanic": "fatal",
    "d": "debug", "debu": "debug", "debug": "debug", "trac": "debug", "trace": "debug",
}
_LEVEL_OF = {w: lv for k, lv in _LEVELS.items() for w in (k, k.upper(), k.capitalize())}  # the usual spellings, no lower()
# Plain-text severity words at the start of a message, possibly after the program's name ("modprobe: ERROR:").
_LEVEL_WORD = re.compile(r"^(?:[\w.\-]{1,40}: )?(ERROR|Error|error|FATAL|Fatal|fatal|WARNING|Warning|WARN)\b")
_QUOTED = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"')  # a quoted value with escapes, unrolled: runs, not a choice per character

# Name and command hints (never decisive on their own; content wins).
_MG_OPERAND = re.compile(r"(?:^|/)(?:gpu|network)_operand_pod_(?P<pod>[^/]+?)(?P<prev>\.previous)?\.log$")
_MG_OPERATOR = re.compile(r"(?:^|/)(?:gpu|network)_operator_pod(?P<prev>\.previous)?\.log$")
_OCP_MG = re.compile(r"(?:^|/)namespaces/(?P<ns>[^/]+)/pods/(?P<pod>[^/]+)/(?P<ctr>[^/]+)/[^/]+/logs/(?P<which>current|previous)(?:\.insecure)?\.log$")
_POD_DIR = re.compile(r"(?:^|/)pods/(?P<ns>[a-z0-9-]+)_(?P<pod>[a-z0-9][a-z0-9.-]*)_[0-9a-f-]{8,}/(?P<ctr>[a-z0-9-]+)/\d+\.log(?:\.\d+)?$")
_CONTAINERS_DIR = re.compile(r"(?:^|/)(?P<pod>[a-z0-9][a-z0-9.-]*)_(?P<ns>[a-z0-9-]+)_(?P<ctr>[a-z0-9-]+)-[0-9a-f]{64}\.log$")
_KERNEL_NAME = re.compile(r"(?:^|/|_|-)(?:dmesg|kern(?:el)?|journal(?:ctl)?-?k|messages|syslog)[^/]*$", re.I)
_KERNEL_WORDS = ("dmesg", "kern", "journal", "messages", "syslog")  # one is in any name _KERNEL_NAME matches (casefolded,
# as re.I matches the Kelvin sign and the long s)
_LOG_NAME = re.compile(r"\.log(?:\.\d+)?$", re.I)
_DEFAULTED = re.compile(r'^Defaulted container "(?P<ctr>[^"]+)" out of:')
_LOG_PROGRAMS = {"kubectl", "k", "oc", "microk8s.kubectl"}
_VALUE_OPTIONS = {
    "--tail", "--since", "--since-time", "--limit-bytes", "-l", "--selector", "--context", "--kubeconfig",
    "--max-log-requests", "--pod-running-timeout", "--cluster", "--user", "-s", "--server", "--request-timeout",
}


def _level(word: str | None) -> str | None:
    return _LEVEL_OF.get(word) or _LEVELS.get(word.lower()) if word else None


def _level_in(text: str) -> str | None:
    """The level a severity word at the start of text says ("ERROR: ...", "modprobe: ERROR: ..."), or None."""
    if text[:1] in "EeFfW" or ": " in text[:43]:  # where _LEVEL_WORD can match at all; most lines skip the regex
        w = _LEVEL_WORD.match(text)
        if w is not None:
            return _LEVELS.get(w.group(1).lower())
    return None


def _plan(last: TimeFormat | None, c: str) -> tuple:
    """(format, bound match) pairs to try on a text starting with c after a line in format last: last first, as
    logs rarely switch, then the other candidates. On a printable ASCII character, last is left out where it
    cannot match (candidates() lists every row a character can start); on any other character only last can."""
    if not " " <= c <= "~":
        return ((last, last.regex.match),) if last is not None else ()
    cands = candidates(c)
    order = ((last,) if last in cands else ()) + tuple(f for f in cands if f is not last)
    return tuple((f, f.regex.match) for f in order)


_ASCII = tuple(map(chr, range(32, 127)))
_PLANS = {f.id if f else None: {c: _plan(f, c) for c in _ASCII} for f in (None, *FORMATS)}  # last's id -> first char -> plan
_OTHER = {f.id if f else None: _plan(f, "\x00") for f in (None, *FORMATS)}  # plan for a first character outside _ASCII
# What the parser does with a line in a format: read its message, count it as a kernel line, or read the line
# that format wraps (CRI, journal, syslog, RFC 3339 prefixes).
_READS, _KERNEL, _WRAPS = "reads", "kernel", "wraps"
_NEXT = {f.id if f else None: (_PLANS[f.id if f else None], _OTHER[f.id if f else None],
                               _WRAPS if f and f.id in _OUTER else _KERNEL if f and f.id in _KERNEL_FORMATS else _READS)
         for f in (None, *FORMATS)}  # last's id -> (plans, plan for other characters, role of last)


def _match(text: str, last: TimeFormat | None):
    """(format, match) of the stamp text starts with, trying the previous line's format first."""
    key = last.id if last is not None else None
    for f, match in _PLANS[key].get(text[:1], _OTHER[key]):
        m = match(text)
        if m is not None:
            return f, m
    return None, None


def _convert(fmt, m):
    try:
        return fmt.convert(m)
    except (ValueError, OverflowError, KeyError):
        return None  # the shape without a real time: keep the line, drop its time


@lru_cache(maxsize=4096)
def _logrus_message(rest: str) -> str:
    """The msg value after `msg=` (quoted or not) plus the fields that follow it. Remembered per text: a logrus
    line's text after its time and level repeats (a component's polling loop, a fleet's nodes), and unquoting it
    costs several times the lookup."""
    if rest.startswith('"'):
        q = _QUOTED.match(rest)
        if q:
            value = q.group(1)
            if "\\" in value:  # every escape starts with one
                value = value.replace('\\"', '"').replace("\\n", " ").replace("\\t", " ").replace("\\\\", "\\")
            tail = rest[q.end():].strip()
            return f"{value} {tail}" if tail else value
    return rest


def _json_loads(line: str):
    """json.loads(line), raising the same ValueError, without its per-call wrapping (half its cost on a short
    line): the default decoder's scanner, between the whitespace it allows."""
    if line.startswith("\ufeff"):
        raise ValueError("Unexpected UTF-8 BOM")
    try:
        obj, end = _JSON_SCAN(line, _JSON_SPACE(line, 0).end())
    except StopIteration:
        raise ValueError("Expecting value") from None
    if _JSON_SPACE(line, end).end() != len(line):
        raise ValueError("Extra data")
    return obj


_JSON_SCAN = json.JSONDecoder().scan_once
_JSON_SPACE = json.decoder.WHITESPACE.match


def _json_message(line: str) -> tuple[str, str | None]:
    try:
        obj = _json_loads(line)
    except ValueError:
        return line, None
    if not isinstance(obj, dict):
        return line, None
    msg = _first_str(obj, _JSON_MSG)
    level = _level(_first_str(obj, _JSON_LEVEL))
    if msg is None:
        return line, level
    if "error" not in obj and "err" not in obj:
        return msg, level
    extra = " ".join(f"{k}={obj[k]}" for k in ("error", "err") if k in obj)
    return (f"{msg} {extra}" if extra else msg), level


_JSON_MSG = ("msg", "message", "MESSAGE", "log")
_JSON_LEVEL = ("level", "lvl", "severity", "levelname")


def _first_str(obj: dict, keys: tuple[str, ...]) -> str | None:
    for k in keys:
        v = obj.get(k)
        if isinstance(v, str):
            return v
    return None


def _body(fmt, m, text: str) -> tuple[str, str | None]:
    """Message and level of a line whose stamp fmt matched as m."""
    fid = fmt.id
    if fid == "logrus":
        return _logrus_message(text[m.end():]), _level(m.group("level"))
    if fid == "json":
        return _json_message(text)
    if fid in ("klog", "logrus-tty"):
        return text[m.end():], _level(m.group("level"))
    if fid == "date" and m.end() == len(text):  # a bare `date` line: keep it as the message, it reads as what it is
        return text, None
    return text[m.end():], None


def _hints(doc: Document) -> dict:
    """pod / namespace / container / previous / kind from the command and the artifact's name."""
    h: dict = {}
    for name in filter(None, (doc.artifact, doc.path_hint)):
        # each pattern only where the text it cannot match without is in the name: a search per pattern over every
        # log's name cost ~6 µs a log
        if "_operand_pod_" in name and (m := _MG_OPERAND.search(name)):
            h.update(pod=m.group("pod"), previous=bool(m.group("prev")), kind="container")
        elif "_operator_pod" in name and (m := _MG_OPERATOR.search(name)):
            h.update(previous=bool(m.group("prev")), kind="container")
        elif "/pods/" in name and (m := _OCP_MG.search(name)):
            h.update(pod=m.group("pod"), namespace=m.group("ns"), container=m.group("ctr"), previous=m.group("which") == "previous",
                     kind="container")
        elif m := ("pods/" in name and _POD_DIR.search(name)) or ("_" in name and _CONTAINERS_DIR.search(name)):
            h.update(pod=m.group("pod"), namespace=m.group("ns"), container=m.group("ctr"), kind="container")
        elif any(map(name.casefold().__contains__, _KERNEL_WORDS)) and _KERNEL_NAME.search(name):
            h.setdefault("kind", "kernel")
    if doc.command:
        h.update(_command_hints(doc.command))
    return h


def _command_hints(cmd: str) -> dict:
    return dict(_hints_of_command(cmd))


def _namespace_flag(argv: list[str]) -> str | None:
    """kubectl's -n/--namespace, up to `--` (after it, the flags are the remote command's)."""
    for i, a in enumerate(argv):
        if a == "--":
            return None
        key, eq, val = a.partition("=")
        if key in ("-n", "--namespace"):
            return val if eq else (argv[i + 1] if i + 1 < len(argv) else None)
        if a.startswith("-n") and len(a) > 2 and not a.startswith("--"):
            return a[2:]
    return None


@lru_cache(maxsize=1024)
def _hints_of_command(cmd: str) -> dict:
    """_command_hints, worked out once per command (the sniffer and the parser both ask); never changed."""
    try:
        argv = list(shellwords.split(cmd))
    except ValueError:
        argv = cmd.split()
    if not argv:
        return {}
    prog = argv[0].rsplit("/", 1)[-1]
    if prog in ("dmesg",) or (prog == "journalctl" and ("-k" in argv or "--dmesg" in argv)):
        return {"kind": "kernel"}
    if prog == "journalctl":
        return {"kind": "journal"}
    if prog not in _LOG_PROGRAMS:
        return {}
    if "logs" not in argv:  # kubectl create/apply/get -n NS: what it prints is about that namespace
        return {"namespace": ns} if (ns := _namespace_flag(argv)) else {}
    h: dict = {"kind": "container"}
    positional: list[str] = []
    args = argv[argv.index("logs") + 1:]
    i = 0
    while i < len(args):
        a = args[i]
        key, eq, val = a.partition("=")
        if key in ("-n", "--namespace", "-c", "--container"):
            if not eq:
                i += 1
                val = args[i] if i < len(args) else ""
            h["namespace" if key in ("-n", "--namespace") else "container"] = val
        elif a.startswith("-n") and len(a) > 2 and not a.startswith("--"):
            h["namespace"] = a[2:]
        elif key in ("-p", "--previous"):
            h["previous"] = val.lower() != "false" if eq else True
        elif key in _VALUE_OPTIONS:
            i += 0 if eq else 1
        elif not a.startswith("-"):
            positional.append(a)
        i += 1
    if positional:
        kind, _, name = positional[0].rpartition("/")
        if kind in ("", "pod", "pods", "po"):
            h["pod"] = name
        if len(positional) > 1 and "container" not in h:
            h["container"] = positional[1]
    return h


# Logs of more lines than this keep only the lines that matter (facts/logs.py kept_rows); smaller ones keep every
# line. Below it the whole parse costs under ~0.1 s and ~10 MB, and every bundled example and test log is far
# under it (docs/performance.md "Big logs: kept lines").
KEEP_ALL_LINES = 20_000
_NEIGHBOURS = 2000  # lines searched above and below an untimed kept line for the timed lines its interval rests on
# (a compiler's or installer's output can run for hundreds of untimed lines between two stamped ones)


# A log read after the run's budget of logs read in full was passed (analysis/engine.py LOG_BYTES_IN_FULL; the
# engine marks it KEPT_AFTER_BUDGET in the Document's meta) keeps only the lines that matter when it has more lines
# than this: below it, the first and last EDGE_LINES (facts/logs.py) are most of the log and the scan would save
# nothing. Such a log keeps fewer first and last lines than a big log read before the budget was passed: with long
# lines the edges are most of what a kept log costs, and the views read the last few dozen (why a container stopped).
KEPT_AFTER_BUDGET_LINES = 1_000
EDGES_AFTER_BUDGET = 50


def parse_log(doc: Document, whole: bool = False) -> ContainerLog:
    """whole: every line, however big the log (serve hands the log itself to `kubectl logs`, not a diagnosis of it).
    A piece of a huge file (sources/loose.py PIECE_BYTES, marked in its meta) is a big log whatever its lines, and
    so is a log of more than KEPT_AFTER_BUDGET_LINES read after the run's budget of lines in full."""
    n = len(doc.lines)
    after = KEPT_AFTER_BUDGET in doc.meta and n > KEPT_AFTER_BUDGET_LINES
    big = n > KEEP_ALL_LINES or doc.piece or after
    if not gc.isenabled():  # paused already (a diagnosis pauses it for the whole run): no context manager per log
        return _parse_kept(doc, EDGES_AFTER_BUDGET if after else None) if big and not whole else _parse_log(doc)
    with gc_paused():  # millions of acyclic objects: the cycle collector would rescan them over and over
        return _parse_kept(doc, EDGES_AFTER_BUDGET if after else None) if big and not whole else _parse_log(doc)


DENSE = 0.25  # a big log of which the scan would keep more than this share is read whole (as fast, see _parse_kept)
_SAMPLE = 4000  # lines from the middle of a big log on which that share is measured
# A pod has a few containers; a log mixing more (a whole namespace's, line by line) keeps only its own first and
# last lines: finding every container's costs a pass over the text per container.
_MAX_CONTAINERS = 8
_CRI_PARTIAL = re.compile(r"\S+ (?:stdout|stderr) P ")


def _folds(lines: tuple[str, ...], i: int) -> bool:
    """Whether line i may be folded into the line above it: indented text (after must-gather's prefix), or the
    line after a CRI partial (`P`) line."""
    text = lines[i]
    if text.startswith("[pod/"):
        text = text.partition("] ")[2]
    if text.startswith(_INDENT) or text[:1] == "\t":
        return True
    above = lines[i - 1] if i > 0 else ""
    if above.startswith("[pod/"):
        above = above.partition("] ")[2]
    return _CRI_PARTIAL.match(above) is not None or (bool(text.strip()) and _bare_stamp(above))


def _bare_stamp(text: str) -> bool:
    """A stamp (and level) with no message, as logrus prints `ERRO[0003]` before a multi-line message: the message
    is the line below, which the parser folds in whatever its indent."""
    fmt, m = _match(text, None)
    if fmt is None:
        return False
    if fmt.id in _OUTER:
        rest = text[m.end():]
        inner, im = _match(rest, None)
        return not rest.strip() if inner is None or inner.id in _OUTER else not _body(inner, im, rest)[0].strip()
    return not _body(fmt, m, text)[0].strip()


def _whole(lines: tuple[str, ...], rows: set[int]) -> set[int]:
    """rows with the lines they fold with: back to the line each continues, on through the lines that continue
    it, so that a kept line reads as it would in the whole log."""
    out, n = set(rows), len(lines)
    for i in rows:
        j = i
        while j > 0 and i - j < MAX_FOLDED_LINES and _folds(lines, j):
            j -= 1
            out.add(j)
        j = i + 1
        while j < n and j - i <= MAX_FOLDED_LINES and j not in out and _folds(lines, j):
            out.add(j)
            j += 1
    return out


def _parse_kept(doc: Document, edges: int | None = None) -> ContainerLog:
    """A big log: its text is scanned first, and only the lines that matter become LogLines (facts/logs.py
    kept_rows), with the lines they fold with and, for a kept line without a time, the timed lines of its container
    just above and below it, which its interval in the timeline rests on.

    Scanning costs little per line but a few microseconds per line that matches, as parsing does: a log where
    more than DENSE of a sample of lines would be kept is read whole, which is as fast and keeps every line."""
    from gpusleuth.facts.logs import EDGE_LINES, kept_rows

    edges = EDGE_LINES if edges is None else edges
    lines = doc.lines
    n = len(lines)
    mid = max(0, n // 2 - _SAMPLE // 2)
    sample = kept_rows(lines[mid:mid + _SAMPLE], edges=0)
    if sample is None or len(sample) > DENSE * _SAMPLE:
        return _parse_log(doc)
    rows = kept_rows(lines, edges)
    if rows is None:
        return _parse_log(doc)
    prefixes = {raw[:raw.index("] ") + 2] for raw in map(lines.__getitem__, rows) if raw.startswith("[pod/") and "] " in raw}
    if 1 < len(prefixes) <= _MAX_CONTAINERS:  # a pod's log of several containers: each one's first and last lines
        rows |= _container_edges(lines, prefixes, edges)
    rows = _whole(lines, rows)
    log = _parse_log(doc, sorted(rows))
    first, more = doc.first_line, set()
    timed = {ln.line - first: ln.time is not None or ln.elapsed is not None for ln in log.lines}
    found: dict[tuple, dict[int, int | None]] = {}  # (step, (pod, container)) -> line -> the timed line a search reached
    block_of = lines.block if isinstance(lines, ByteLines) else lambda _i: (0, n, lines)
    blo, bhi, block = 0, 0, ()  # the lines read last: a ByteLines block, or all of them
    budget = 4 * len(log.lines) + 50_000  # lines looked at in all: a log with few times costs no more than this
    if not any(timed.values()) and not any(_stamped(raw, *_who(raw)) for raw in lines[::max(1, n // 400)]):
        budget = 0  # no time in the kept lines nor in 400 lines spread over the log: nothing to look for
    for ln in log.lines:
        if ln.time is not None or ln.elapsed is not None:
            continue
        i = ln.line - first
        who = (ln.pod, ln.container)
        # a line with another container's prefix is never stamped for this one: told without _stamped's split
        own = f"[pod/{ln.pod}/{ln.container}] " if ln.pod is not None and ln.container is not None else None
        lo, hi = max(0, i - _NEIGHBOURS), min(n - 1, i + _NEIGHBOURS)  # the lines a search may reach
        for step in (-1, 1):
            memo = found.setdefault((step, who), {})
            start = at = i + step
            while True:  # at: the line looked at; reached: the timed line this search reaches (None: none)
                if not lo <= at <= hi or budget <= 0:
                    reached = None
                    break
                if timed.get(at):  # a kept line with a time
                    reached = at
                    break
                if at in memo:  # a search from a line further on already went this way
                    reached = memo[at]
                    break
                budget -= 1
                if at not in timed:
                    if not blo <= at < bhi:
                        blo, bhi, block = block_of(at)
                    raw = block[at - blo]
                    if (not raw.startswith("[pod/") or (own is not None and raw.startswith(own)) or "] " not in raw) and _stamped(raw, *who):
                        more.add(at)
                        reached = at
                        at += step  # this line was walked too
                        break
                at += step
            for k in range(start, at, step):  # an untimed run is walked once per direction, whatever number of kept lines it holds
                memo[k] = reached
    if more:  # stamped lines start LogLines of their own: parsed apart, they read as they would with the rest
        extra = _parse_log(doc, sorted(_whole(lines, more) - rows))
        log = replace(log, lines=tuple(heapq.merge(log.lines, extra.lines, key=_LINE)))
    if not _all_prefixes_kept(lines, log.lines):  # a container only left-out lines name: the log names no single one
        hints = _hints(doc)
        log = replace(log, pod=hints.get("pod"), container=hints.get("container"))
    return replace(log, total_lines=n, skipped=_skipped(lines, log.lines, first, sorted(rows | more)), edges=edges)


def _container_edges(lines: tuple[str, ...], prefixes: set[str], k: int) -> set[int]:
    """Indexes of the first and last k lines of each container (must-gather prefix), found with str.find over
    blocks of the text: views read a container's first lines (its start, the zone its times are in) and its
    last (whether it stopped), wherever they are in a log that mixes containers."""
    if isinstance(lines, ByteLines):
        return _container_edges_bytes(lines.data, prefixes, k)
    out: set[int] = set()
    n, step = len(lines), 20_000
    for forward in (True, False):
        need = dict.fromkeys(prefixes, k)
        for base in range(0, n, step) if forward else reversed(range(0, n, step)):
            if not any(need.values()):
                break
            text = "\n" + "\n".join(lines[base:base + step])  # a line starting with p follows "\n" + p
            for p, left in need.items():
                key, j, at = "\n" + p, base, 0  # line index j of offset at
                pos = text.find(key) if forward else text.rfind(key)
                found = []
                while pos >= 0 and left:
                    found.append(pos)
                    left -= 1
                    pos = text.find(key, pos + 1) if forward else text.rfind(key, 0, pos)
                need[p] = left
                for pos in sorted(found):
                    j += text.count("\n", at, pos)
                    at = pos
                    out.add(j)
    return out


def _container_edges_bytes(data: bytes, prefixes: set[str], k: int) -> set[int]:
    """_container_edges over ByteLines' bytes: the offsets of each prefix's first and last k line starts, found
    with bytes.find and rfind, then counted into line indexes in one sweep."""
    starts: set[int] = set()
    for p in prefixes:
        key = ("\n" + p).encode("utf-8")
        first = data.startswith(key[1:])
        found = [0] if first and k > 0 else []
        pos = data.find(key)
        while pos >= 0 and len(found) < k:
            found.append(pos + 1)
            pos = data.find(key, pos + 1)
        starts.update(found)
        found = []
        pos = data.rfind(key)
        while pos >= 0 and len(found) < k:
            found.append(pos + 1)
            pos = data.rfind(key, 0, pos)
        if first and len(found) < k:
            found.append(0)
        starts.update(found)
    out, line, at = set(), 0, 0
    for pos in sorted(starts):
        line += data.count(b"\n", at, pos)
        at = pos
        out.add(line)
    return out


def _all_prefixes_kept(lines: tuple[str, ...], kept: tuple[LogLine, ...]) -> bool:
    """Whether every must-gather `[pod/P/C] ` prefix of the log is one a kept line has (counted at C speed), so that
    the pod and container the kept lines name are all the log's."""
    known = {ln.raw[:ln.raw.index("] ") + 2] for ln in kept if ln.raw.startswith("[pod/") and "] " in ln.raw}
    if len({ln.pod for ln in kept}) > 1 and len({ln.container for ln in kept}) > 1:
        return True  # several pods and containers already: more of them would change nothing
    if isinstance(lines, ByteLines):  # line starts counted in the text's bytes
        data = lines.data

        def starting(p: str) -> int:
            b = p.encode("utf-8")
            return data.count(b"\n" + b) + data.startswith(b)

        return starting("[pod/") == sum(starting(p) for p in known)
    for base in range(0, len(lines), 20_000):
        text = "\n" + "\n".join(lines[base:base + 20_000])
        if text.count("\n[pod/") != sum(text.count("\n" + p) for p in known):
            return False
    return True


def _skipped(lines: tuple[str, ...], kept: tuple[LogLine, ...], first: int, rows: list[int]) -> tuple[int, ...]:
    """Line numbers of the kept LogLines that come after lines left out (blank lines do not count: they make no
    LogLine in a whole log either)."""
    out = []
    prev = -1
    for ln in kept:
        i = ln.line - first
        if i > prev + 1:
            missing = i - prev - 1 - (bisect.bisect_left(rows, i) - bisect.bisect_right(rows, prev))
            if missing and (missing > 8 or any(lines[j].strip() for j in range(prev + 1, i) if not _in(rows, j))):
                out.append(ln.line)
        prev = max(prev, i)
    return tuple(out)


def _in(rows: list[int], j: int) -> bool:
    k = bisect.bisect_left(rows, j)
    return k < len(rows) and rows[k] == j


_LINE = attrgetter("line")


def _who(raw: str) -> tuple[str | None, str | None]:
    """(pod, container) of a must-gather prefix, for _stamped."""
    if raw.startswith("[pod/"):
        parts = raw.partition("] ")[0][5:].split("/")
        if len(parts) == 2:
            return parts[0], parts[1]
    return None, None


def _stamped(raw: str, pod: str | None, ctr: str | None) -> bool:
    """Whether raw carries a time and belongs to the container (pod, ctr) as far as its own prefix says: the
    cheap test for an untimed line's timed neighbours."""
    text = raw
    if raw.startswith("[pod/"):
        head, sep, text = raw.partition("] ")
        if sep and head[5:].split("/") != [pod, ctr]:
            return False
    fmt, m = _match(text, None)
    return fmt is not None and _convert(fmt, m) is not None


# `kubectl logs --timestamps`: every line an RFC 3339 stamp, then the container's own line. Such a document (every
# pod log a bundle or a fleet collection holds) is read with one regex over its whole text, and what follows the
# stamp is read once per distinct text: a container repeats its lines (polling loops), and a fleet's nodes print
# the same ones. The result is what the line-by-line loop below makes of the same lines (tests/parsers/
# test_stamped_logs.py compares both on a generated fleet's logs, on lines made for each case, and on every example
# and incident file, none of which is such a document).
_RFC3339 = BY_ID["rfc3339"]
_STAMPED = re.compile(_RFC3339.pattern + r"(.*)$", re.M)  # groups: the stamp (ts) and the rest of the line
_DIGITS = frozenset("0123456789")
_REST_MAX = 50_000  # distinct texts remembered (their message, level and inner time); dropped and restarted past it
_REST_CHARS = 500  # longer texts are not remembered (so the memo holds 25 MB at most; a long line seldom repeats)
_rests: dict[str, tuple] = {}
STAMPED_FAST = True  # the tests turn it off to compare with the line-by-line loop


def _rest_of(rest: str) -> tuple:
    """(message, level, inner time) of the text after an RFC 3339 stamp, as the loop in _parse_log reads it: a line
    of its own format (klog, logrus, JSON) inside, or plain text with perhaps a severity word."""
    inner, im = _match(rest, None)
    if inner is not None and inner.id not in _OUTER:
        msg, level = _body(inner, im, rest)
        t = _convert(inner, im)
    else:
        msg, level, t = rest, None, None
    return msg, level if level is not None else _level_in(msg), t


def _stamped_lines(doc: Document, pod: str | None, ctr: str | None) -> list[LogLine] | None:
    """Every line of doc as a LogLine when each one is an RFC 3339 stamp and text (no blank line, no must-gather
    prefix), or None: the loop reads it then."""
    lines = doc.lines
    if not lines or lines[0][:1] not in _DIGITS or lines[-1][:1] not in _DIGITS:
        return None
    text = "\n".join(lines)
    if text.count("\n") != len(lines) - 1:  # a line holding a newline (no source makes one): matches would not be lines
        return None
    found = _STAMPED.findall(text)
    if len(found) != len(lines) or _match(lines[0], None)[0] is not _RFC3339:  # the first line: CRI and journal
        return None  # rows come before RFC 3339 in the loop; after an RFC 3339 line it is tried first
    rests, artifact, first, fromiso = _rests, doc.artifact, doc.first_line, datetime.fromisoformat
    out: list[LogLine] = []
    append = out.append
    for number, raw, (ts, rest) in zip(range(first, first + len(lines)), lines, found):
        try:
            t = fromiso(ts)  # what iso_stamp gives where this reads the stamp (a comma or `UTC` needs iso_stamp)
        except (ValueError, OverflowError, KeyError):
            try:
                t = iso_stamp(ts)
            except (ValueError, OverflowError, KeyError):
                t = None
        hit = rests.get(rest)
        if hit is None:
            hit = _rest_of(rest)
            if hit[2] is None and len(rest) <= _REST_CHARS:  # a line with its own inner time is seldom seen twice
                if len(rests) >= _REST_MAX:
                    rests.clear()
                rests[rest] = hit
        msg, level, inner = hit
        elapsed = None
        if t is None and inner is not None:
            if inner.__class__ is float:
                elapsed = inner
            else:
                t = inner
        append(LogLine(artifact, number, raw, msg, t, "rfc3339", level, pod, ctr, elapsed))
    return out


def _parse_log(doc: Document, rows: list[int] | None = None) -> ContainerLog:
    """The log's lines as LogLines: every line, or the lines whose indexes rows lists (in order)."""
    hints = _hints(doc)
    pod0, ctr0 = hints.get("pod"), hints.get("container")
    artifact, first = doc.artifact, doc.first_line
    if rows is None and STAMPED_FAST and (stamped := _stamped_lines(doc, pod0, ctr0)) is not None:
        kind = "container"  # every line a container's (the counts below would say so)
        return ContainerLog(artifact=artifact, lines=tuple(stamped), pod=pod0, namespace=hints.get("namespace"), container=ctr0,
                            node=doc.meta.get("node") or None, previous=bool(hints.get("previous")), kind=kind)
    out: list[LogLine] = []
    append = out.append
    n_kernel = n_journal = n_container = 0
    hosts: Counter = Counter()
    pods: set = set()
    ctrs: set = set()
    prefixes: dict[str, tuple[str, str, str] | None] = {}  # `[pod/P/C` -> (P, C, `[pod/P/C] `); None: not a prefix
    same, same_who = None, None  # the last `[pod/P/C] ` seen and its (P, C, prefix)
    plan, other, role = _NEXT[None]  # what to try after the previous line's format (see _plan), and its role
    last = None
    prev_i = -2  # source index of the line out[-1] ends on: a continuation must follow it directly
    partial = False  # out[-1] is a CRI `P` line waiting for the rest of its text
    folded = 0  # continuation lines folded into out[-1]
    level_in = _level_in

    src = doc.lines
    for i, raw in enumerate(src) if rows is None else ((i, src[i]) for i in rows):
        if not raw or raw.isspace():
            continue
        text, pod, ctr = raw, pod0, ctr0
        if same is not None and raw.startswith(same):  # the previous prefixed line's container, most often
            pod, ctr, _ = same_who
            text = raw[len(same):]
            if not text or text.isspace():
                continue
        elif raw.startswith("[pod/"):
            head, sep, rest = raw.partition("] ")
            if sep and len(head) > 5:
                who = prefixes.get(head, False)
                if who is False:
                    parts = head[5:].split("/")
                    who = prefixes[head] = (parts[0], parts[1], head + "] ") if len(parts) == 2 else None
                    if who is not None:
                        pods.add(who[0])
                        ctrs.add(who[1])
                if who is not None:
                    same, same_who = who[2], who  # its "] " is the first in any line it starts
                    pod, ctr, _ = who
                    text = rest
                    if not text or text.isspace():
                        continue
        if i == 0 and ctr is None and (d := _DEFAULTED.match(text)):
            ctr0 = ctr = d.group("ctr")
        fmt = None  # the stamp text starts with (_match, inlined)
        for f, match in plan.get(text[:1], other):
            m = match(text)
            if m is not None:
                fmt = f
                break
        if fmt is None:
            # set -x traces, installer text and continuation lines: no stamp of their own
            if prev_i == i - 1 and not partial and folded < MAX_FOLDED_LINES and (
                    text.startswith(_INDENT) or text[0] == "\t" or (not folded and not out[-1].message.strip())):
                head = out[-1]
                if head.pod == pod and head.container == ctr and len(head.message) < MAX_FOLDED_CHARS and not head.message.startswith("+"):
                    more = text.strip()
                    if (sub := _SUBSYSTEM.match(head.message)) and more.startswith(sub.group()):
                        more = more[sub.end():]  # the kernel repeats `NVRM: ` on each wrapped line; the message is one sentence
                    if head.message.strip():
                        out[-1] = LogLine(artifact, head.line, head.raw, f"{head.message.rstrip()} {more}", head.time,
                                          head.time_format, head.level, pod, ctr, head.elapsed)
                    else:  # a bare stamp: its record reads, and is cited, with the message it was printed with
                        out[-1] = LogLine(artifact, head.line, f"{head.raw.rstrip()} {more}", more, head.time,
                                          head.time_format, head.level, pod, ctr, head.elapsed)
                    prev_i, folded = i, folded + 1
                    continue
            append(LogLine(artifact, first + i, raw, text, None, None, level_in(text), pod, ctr))
            prev_i, partial, folded = i, False, 0
            continue
        if fmt is not last:
            last = fmt
            plan, other, role = _NEXT[fmt.id]
        fid = fmt.id
        try:
            t = fmt.convert(m)
        except (ValueError, OverflowError, KeyError):
            t = None  # the shape without a real time: keep the line, drop its time
        elapsed = None
        if role is _WRAPS:
            rest = text[m.end():]
            if fid == "cri":
                if partial and prev_i == i - 1 and out[-1].pod == pod and out[-1].container == ctr:
                    head = out[-1]
                    msg = head.message + rest
                    out[-1] = LogLine(artifact, head.line, head.raw, msg, head.time, head.time_format,
                                      head.level if head.level is not None else level_in(msg), pod, ctr, head.elapsed)
                    prev_i, partial = i, m.group("tag") == "P"
                    continue
                partial = m.group("tag") == "P"
            else:
                partial = False
            if fid in _HOST_LINES:
                hosts[m.group("host")] += 1
                level = None
                if m.group("ident") == "kernel":
                    n_kernel += 1
                    dm = _DMESG.regex.match(rest)
                    if dm is not None:
                        elapsed, rest = float(dm.group("secs")), rest[dm.end():]
                    msg = rest
                else:
                    n_journal += 1
                    # a daemon's own line inside the journal's (containerd's logrus, kubelet's klog): its level counts
                    inner, im = _match(rest, None)
                    if inner is not None and inner.id not in _OUTER and inner.id not in _KERNEL_FORMATS:
                        msg, level = _body(inner, im, rest)
                    else:
                        msg = rest
            else:
                n_container += 1
                inner, im = _match(rest, None)
                if inner is not None and inner.id not in _OUTER:
                    msg, level = _body(inner, im, rest)
                    if t is None:
                        t = _convert(inner, im)
                else:
                    msg, level = rest, None
        else:
            partial = False
            msg, level = _body(fmt, m, text)
            if role is _KERNEL:
                n_kernel += 1
            else:
                n_container += 1
        if t.__class__ is float:
            elapsed, t = t, None
        if level is None:
            level = level_in(msg)
        append(LogLine(artifact, first + i, raw, msg, t, fid, level, pod, ctr, elapsed))
        prev_i, folded = i, 0

    counts = {"kernel": n_kernel, "journal": n_journal, "container": n_container}
    if hints.get("kind") == "container" or pods:
        kind = "container"  # a pod's log that quotes kernel lines (the installer prints dmesg) is still the pod's log
    else:
        # no stamped line and nothing that names a container: text whose origin is unknown (a paste, a ticket)
        kind = max(counts, key=counts.get) if any(counts.values()) else hints.get("kind", "container" if pod0 or ctr0 or doc.command else "text")
    pod = pod0 if pod0 else (next(iter(pods)) if len(pods) == 1 else None)
    ctr = ctr0 if ctr0 else (next(iter(ctrs)) if len(ctrs) == 1 else None)
    return ContainerLog(
        artifact=artifact, lines=tuple(_with_quotes(out)) if kind == "text" else tuple(out), pod=pod, namespace=hints.get("namespace"), container=ctr,
        node=doc.meta.get("node") or (hosts.most_common(1)[0][0] if hosts else None), previous=bool(hints.get("previous")), kind=kind,
    )


# ---- sniffing -------------------------------------------------------------------------------------------------

_SHELL_TRACE = re.compile(r"^\++ \S")


def _sample(lines: tuple[str, ...], n: int = 60) -> list[str]:
    """The first n non-blank lines and n more spread over the rest: a log's head is often a banner."""
    head = [ln for ln in lines[: n * 3] if ln.strip()][:n]
    step = max(1, len(lines) // n)
    spread = [ln for ln in lines[n * 3 :: step] if ln.strip()][:n]
    return head + spread


def _shaped(line: str) -> bool:
    if line.startswith("[pod/") and "] " in line:
        line = line[line.find("] ") + 2:]
        if not line.strip():
            return True
    if _SHELL_TRACE.match(line):
        return True
    fmt, _m = _match(line, None)
    return fmt is not None


def _signature_hits(lines: list[str]) -> int:
    try:
        from gpusleuth.facts.logs import signatures

        _sigs, matcher = signatures()
    except (OSError, KeyError, ValueError):  # no signature table yet: no signature evidence
        return 0
    return sum(1 for ln in lines if matcher.Match(ln))


def sniff(doc: Document) -> int:
    """LIKELY when most lines have a log shape; higher when a `kubectl logs` command or must-gather's prefix
    says so; WEAK for free text with known signatures or a log-like name. Tables, describe output and configs
    have no log shape, so their own parsers win on them."""
    if doc.command and "kind" in _command_hints(doc.command):  # a command that prints logs (a namespace alone says nothing)
        return SURE - 10
    sample = _sample(doc.lines)
    if not sample:
        return NO
    if sum(1 for ln in sample if ln.startswith("[pod/")) * 2 >= len(sample):
        return LIKELY + 15
    shaped = sum(1 for ln in sample if _shaped(ln))
    if shaped * 2 >= len(sample):
        return LIKELY
    name_hint = bool(_LOG_NAME.search(doc.artifact) or _hints(doc))
    if shaped >= 3 or _signature_hits(sample):
        return WEAK + 10 if name_hint else WEAK
    return WEAK if name_hint else NO


def parse_text(doc: Document) -> ContainerLog:
    """A document no parser claims, read line by line: its error lines and known messages still count. Its kind
    is "text" (where it was printed is unknown) unless its lines or its command say more."""
    log = parse_log(doc)
    if log.kind == "container" and not log.pod and not _hints(doc):
        return replace(log, kind="text", lines=tuple(_with_quotes(log.lines)))
    return log


# A message quoted inside a sentence: `...` or "..." long enough to be a machine-printed line, not a word.
_INLINE_QUOTE = re.compile(r"`([^`]{16,})`|\"([^\"]{16,})\"")


_OPENS = re.compile(r'(?:^|(?<=[\s(\[:]))"(?=\w)')  # a double quote that can only open: after a space, before a word
_CLOSES = re.compile(r'(?<=\S)"(?=[\s.,;:!?)\]]|$)')  # one that can only close: after text, before a space or a stop


def _nested_quotes(text: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of each outermost double quote that holds quotes of its own, as a reporter quotes a message
    that quotes names: `fails with "The Job "x" is invalid: ...: Invalid value: "1": must be ..."`. The flat reading
    pairs the first two marks and cuts the message. A mark that can both open and close is left alone."""
    if text.count('"') < 4:
        return
    probe = text.replace('""', "\x00\x00")  # an empty quote (namespace "") neither opens nor closes
    marks = sorted([(m.start(), 1) for m in _OPENS.finditer(probe)] + [(m.start(), -1) for m in _CLOSES.finditer(probe)])
    depth, start, inner = 0, 0, False
    for at, step in marks:
        if step > 0:
            if depth == 0:
                start, inner = at, False
            else:
                inner = True
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0 and inner and at - start > 16:
                yield start, text[start + 1:at].strip()


def _with_quotes(lines: tuple[LogLine, ...]) -> Iterator[LogLine]:
    """Each line, followed by the messages it quotes (prose that says: the pod fails with `Failed to ...`). The
    quoted text is a line of its own for matching and error levels; it cites the line the quote opens on. A
    ticket wraps its paragraphs, so a quote may go on over the next lines of the paragraph: it is read whole."""
    para: list[LogLine] = []  # consecutive non-blank lines
    for ln in lines:
        blank = not ln.message.strip()
        if para and (blank or ln.line != para[-1].line + 1):
            yield from _paragraph_quotes(para)
            para = []
        if blank:
            yield ln
        else:
            para.append(ln)
    yield from _paragraph_quotes(para)


def _paragraph_quotes(para: list[LogLine]) -> Iterator[LogLine]:
    if not any("`" in ln.message or '"' in ln.message for ln in para):
        yield from para
        return
    text, starts = "", []
    for ln in para:
        starts.append(len(text))
        text += ln.message.strip() + " "
    quotes: dict[int, list[str]] = {}
    spans = [(m.start(), (m.group(1) or m.group(2)).strip()) for m in _INLINE_QUOTE.finditer(text)]
    for start, quoted in [*spans, *_nested_quotes(text)]:
        at = bisect.bisect_right(starts, start) - 1
        if quoted != para[at].message.strip() and quoted not in quotes.get(at, ()):
            quotes.setdefault(at, []).append(quoted)
    for i, ln in enumerate(para):
        yield ln
        for quoted in quotes.get(i, ()):
            yield LogLine(ln.artifact, ln.line, ln.raw, quoted, None, None, _level_in(quoted), ln.pod, ln.container)


@parser("logs", "container, kernel and journal logs (must-gather, kubectl logs, CRI files, klog, logrus, JSON, MOFED, dmesg, journald)", sniff=sniff)
def parse(doc: Document) -> Iterator[ContainerLog]:
    yield parse_log(doc)
