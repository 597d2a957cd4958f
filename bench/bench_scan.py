"""The signature scan of logs against GNU grep with the same signatures, measured in the same run.

    PYTHONPATH=src python bench/bench_scan.py [--mb 200] [--errors 1000] [--quiet] [--keep] [--src PATH]

Writes a container log of --mb megabytes as a must-gather holds one (`[pod/P/C] ` before each line): lines of the
bundled examples' container logs and of bench_logs.py's must-gather shapes that no signature matches (the
background, with their seconds varied), and --errors lines, spread at random, that the bundled examples hold and a
signature matches (the known error lines); --distinct of the background lines have their digits redrawn, as ids and
counters vary in real logs. Lines a shell prompt starts are left out (a log holds none; a paste is split at them).
Then times, one after the other, in the same run:

* `LC_ALL=C grep -E -c -f patterns.txt LOG`: the signatures of knowledge/signatures.toml rewritten as POSIX
  extended regexes (named and non-capturing groups become plain groups, `\\d` a bracket, lazy quantifiers
  greedy, which changes no line's match or not). Signatures that cannot be rewritten faithfully are left out
  of grep's list and named; grep's count is checked against RE2 with the same subset on the first 16 MB.
* the same signatures as one RE2 alternation over the file's bytes (multi-line, as grep reads lines), and, with
  the `hyperscan` wheel installed (`pip install 'gpusleuth[fast]'`), as one hyperscan block scan: the scan alone,
  with the same signatures as grep.
* gpusleuth as a diagnosis reads the log, end to end: the file in a folder, opened as `gpusleuth diagnose FOLDER`
  opens it (sources/loose.py: read in pieces of 16 MiB, decoded, held as bytes or split into lines), every piece
  sniffed and parsed (analysis/engine.py ingest: a big log's keep scan, facts/logs.py kept_rows, then only the
  kept lines become LogLines), then build_logs (the signature matches). The keep scan is a superset of the
  signatures (error shapes, level words, the message catalogue's errors, phrases the views read); its time alone
  is a row too. With the wheel installed, the same again with the hyperscan keep scan (its database compiled
  before, and timed apart).
* kept bytes per input line (tracemalloc) of the diagnosis path's facts.

--quiet draws the background only from lines a big log would not keep (no level word, error shape or phrase a
view reads), as a healthy component's log is; without it the background is every unmatched line of the examples'
container logs, which are incidents: many of those are warning or error lines, all of which are kept.
--src runs another checkout's gpusleuth (e.g. main before a change) with this bench: run it and the current tree
one after the other and compare each to its own grep row.

Each result is printed with the lines it counts and its time (wall clock; CPU time beside it) as a ratio to grep's.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

if "--src" in sys.argv:  # another checkout's gpusleuth, imported instead of this tree's
    sys.path.insert(0, os.path.abspath(sys.argv[sys.argv.index("--src") + 1]))

from gpusleuth.facts import logs as logs_mod
from gpusleuth.facts.store import Facts
from gpusleuth.knowledge.message_catalogue import catalogue
from gpusleuth.parsers import logs as parsers_logs
from gpusleuth.sources import examples_root, open_source
from gpusleuth.sources.text import _KNOWN_PROGRAMS, _PROMPT

sys.path.insert(0, str(Path(__file__).parent))
from bench_logs import SHAPES

SAMPLE = 16 << 20  # bytes of the log on which grep's count is checked against RE2's


# -- signatures as POSIX EREs -----------------------------------------------------------------------------

_CLASS_ESC = {"d": "0-9", "s": "[:space:]", "w": "[:alnum:]_"}


def to_ere(pattern: str) -> tuple[str | None, str]:
    """(ERE, "") where the RE2 pattern has a faithful GNU `grep -E` form (for whether a line matches), else
    (None, why)."""
    if "(?i" in pattern or "(?s" in pattern or "(?m" in pattern or "(?U" in pattern:
        return None, "inline flags (case-insensitive)"
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                return None, "trailing backslash"
            e = pattern[i + 1]
            if e == "d":
                out.append("[0-9]")
            elif e == "D":
                out.append("[^0-9]")
            elif e in "sSwWbB" or not e.isalnum():
                out.append(c + e)
            else:
                return None, f"escape \\{e}"
            i += 2
        elif c == "(" and pattern.startswith("(?P<", i):
            j = pattern.index(">", i)
            out.append("(")
            i = j + 1
        elif c == "(" and pattern.startswith("(?:", i):
            out.append("(")
            i += 3
        elif c == "(" and pattern.startswith("(?", i):
            return None, "group syntax " + pattern[i:i + 3]
        elif c in "*+?}" and i + 1 < n and pattern[i + 1] == "?":
            out.append(c)  # lazy -> greedy: the same lines match
            i += 2
        elif c == "[":
            j = i + 1
            neg = j < n and pattern[j] == "^"
            if neg:
                j += 1
            body: list[str] = []
            rbracket = dash = False
            while j < n and pattern[j] != "]":
                ch = pattern[j]
                if ch == "\\":
                    e = pattern[j + 1]
                    if e in _CLASS_ESC:
                        body.append(_CLASS_ESC[e])
                    elif e == "]":
                        rbracket = True
                    elif e == "-":
                        dash = True
                    elif e == "\\":
                        body.append("\\")  # a backslash is literal inside a POSIX bracket
                    elif not e.isalnum():
                        body.append(e)
                    else:
                        return None, f"escape \\{e} in a bracket"
                    j += 2
                elif ch == "[" and pattern.startswith("[:", j):
                    k = pattern.index(":]", j)
                    body.append(pattern[j:k + 2])
                    j = k + 2
                else:
                    body.append(ch)
                    j += 1
            if j >= n:
                return None, "unclosed bracket"
            text = "".join(body)
            if text.startswith("]"):
                rbracket, text = True, text[1:]
            if text.endswith("-") and not text.endswith("\\-"):
                dash, text = True, text[:-1]
            out.append("[" + ("^" if neg else "") + ("]" if rbracket else "") + text + ("-" if dash else "") + "]")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out), ""


# -- the log ----------------------------------------------------------------------------------------------

def pools(matcher) -> tuple[list[str], list[str]]:
    """(background, errors): lines of the bundled examples and bench_logs' shapes no signature matches, and
    the examples' lines one does."""
    background, errors = [], []
    for path in sorted(examples_root().rglob("*")):
        if not path.is_file() or path.name == "example.toml":
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.rstrip()
            if len(line) < 8:
                continue
            if matcher.Match(line):
                errors.append(line)
            elif line.startswith("[pod/") and "] " in line and not _prompt(line):
                background.append(line)  # a must-gather container log's line, as sniffers read it
    background += [s for s in SHAPES if not matcher.Match(s.replace("@S", "00"))]
    return sorted(set(background)), sorted(set(errors))


_DIGITS = re.compile(r"\d")


def _prompt(line: str) -> bool:
    """Whether sources/text.py would split a file at this line (a shell prompt before a command it knows)."""
    m = _PROMPT.match(line)
    return bool(m) and m.group("prog").rsplit("/", 1)[-1] in _KNOWN_PROGRAMS


def generate(path: str, megabytes: int, n_errors: int, matcher, distinct: float, quiet: bool = False) -> tuple[int, int]:
    """Writes the log; (lines, error lines written). A `distinct` share of the background lines get their
    digits redrawn (ids, addresses, counters), so that not every message repeats one the scan saw before.
    quiet: the background holds only lines a big log would not keep (no level word, no error shape, no phrase
    a view reads), as in a healthy component's log; otherwise it is every unmatched line of the examples, which
    are incidents: two in five of them are warning or error lines."""
    background, errors = pools(matcher)
    if quiet:
        keep = logs_mod.keep_scan().regex
        background = [ln for ln in background if not keep.search(ln.encode())]
    rnd = random.Random(14)
    target = megabytes << 20
    avg = sum(map(len, background)) / len(background) + 1
    total = int(target / avg)
    at = set(rnd.sample(range(total), min(n_errors, total)))
    written = lines = 0
    with open(path, "w", encoding="utf-8") as fh:
        chunk: list[str] = []
        while written < target:
            if lines in at:
                line = rnd.choice(errors)
            else:
                line = rnd.choice(background).replace("@S", f"{rnd.randrange(60):02d}")
                if rnd.random() < distinct:
                    line = _DIGITS.sub(lambda _m: "0123456789"[rnd.randrange(10)], line)
            chunk.append(line)
            written += len(line) + 1
            lines += 1
            if len(chunk) >= 10000:
                fh.write("\n".join(chunk) + "\n")
                chunk = []
        if chunk:
            fh.write("\n".join(chunk) + "\n")
    return lines, len(at & set(range(lines)))


# -- the runs ---------------------------------------------------------------------------------------------

class Row:
    def __init__(self, name: str, wall: float, cpu: float, what: int | str = ""):
        self.name, self.wall, self.cpu, self.what = name, wall, cpu, what


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def grep_count(patfile: str, path: str) -> tuple[int, float]:
    """(lines grep counts, its CPU time: user + system of the child)."""
    before = os.times()
    proc = subprocess.run(["grep", "-E", "-c", "-f", patfile, path], capture_output=True, text=True,
                          env={**os.environ, "LC_ALL": "C"})
    after = os.times()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"grep failed: {proc.stderr}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return int(proc.stdout.strip() or 0), cpu


def re2_set(patterns: list[str]):
    import re2

    opts = re2.Options()
    opts.max_mem = 64 << 20
    s = re2.Set.SearchSet(opts)
    for p in patterns:
        s.Add(p)
    s.Compile()
    return s


def re2_lines(data: bytes, patterns: list[str]) -> int:
    """Lines of data that one RE2 alternation of the patterns matches (multi-line: ^ and $ at each line, as grep
    reads them), searched once per matching line, as the keep scan does."""
    import re2

    opts = re2.Options()
    opts.max_mem = 256 << 20
    rx = re2.compile("(?m)" + "|".join(f"(?:{p})" for p in patterns), opts)
    match, size, pos, n = rx._regexp.Match, len(data), 0, 0
    unanchored = re2._Anchor.UNANCHORED
    while pos < size:
        start = match(unanchored, data, pos, size)[0][0]
        if start < 0:
            break
        n += 1
        nl = data.find(b"\n", start)
        pos = size if nl < 0 else nl + 1
    return n


def diagnosis_path(folder: str):
    """The folder as `gpusleuth diagnose FOLDER` reads it: (seconds reading the documents, wall and CPU, the facts
    after ingest), every piece sniffed and parsed as analysis/engine.py does."""
    from gpusleuth.analysis.engine import ingest

    facts = Facts()
    ingest(open_source(folder).documents, facts)
    return facts


def keep_scan_alone(folder: str) -> tuple[float, float, int]:
    """(wall, CPU, rows) of facts/logs.py kept_rows alone over every big piece of the folder's documents, as the
    parser calls it; reading the documents is not counted."""
    wall = cpu = 0.0
    rows = 0
    for doc in open_source(folder).documents:
        if len(doc.lines) <= parsers_logs.KEEP_ALL_LINES and not doc.piece:
            continue
        w, c, got = timed(lambda doc=doc: logs_mod.kept_rows(doc.lines))
        wall, cpu, rows = wall + w, cpu + c, rows + len(got or ())
    return wall, cpu, rows


def reading_alone(folder: str) -> tuple[float, float, int]:
    w, c, n = timed(lambda: sum(len(d.lines) for d in open_source(folder).documents))
    return w, c, n


def _hyperscan(on: bool) -> None:
    logs_mod.USE_HYPERSCAN = on
    logs_mod.HYPERSCAN_MIN_LINES = 0 if on else 1_000_000  # on: whatever the logs' size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--errors", type=int, default=1000, help="known error lines spread through the log")
    ap.add_argument("--distinct", type=float, default=0.5, help="share of background lines with their digits redrawn")
    ap.add_argument("--keep", action="store_true", help="keep the generated log and patterns.txt")
    ap.add_argument("--quiet", action="store_true", help="background of lines a big log does not keep (a healthy component's log)")
    ap.add_argument("--src", help="the src/ folder of another checkout to measure (imported instead of this tree's)")
    ap.add_argument("--log", help="an existing log to measure instead of writing one (e.g. one kept with --keep)")
    args = ap.parse_args()
    import gpusleuth

    print(f"gpusleuth from {os.path.dirname(gpusleuth.__file__)}")
    sigs, matcher = logs_mod.signatures()
    workdir = tempfile.mkdtemp(prefix="gpusleuth-scan-")
    folder = os.path.join(workdir, "must-gather")
    os.mkdir(folder)
    path, patfile = os.path.join(folder, "nvidia-device-plugin.log"), os.path.join(workdir, "patterns.txt")

    eres, left_out = [], []
    for s in sigs:
        ere, why = to_ere(s.pattern)
        (eres.append((s, ere)) if ere else left_out.append((s.id, why)))
    with open(patfile, "w", encoding="utf-8") as fh:
        fh.write("".join(e + "\n" for _, e in eres))

    if args.log:
        os.link(args.log, path) if os.stat(args.log).st_dev == os.stat(workdir).st_dev else shutil.copy(args.log, path)
        with open(path, "rb") as fh:
            n_lines, n_err = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b"")), "?"
    else:
        n_lines, n_err = generate(path, args.mb, args.errors, matcher, args.distinct, args.quiet)
    size = os.path.getsize(path)
    print(f"log: {size / 1e6:.0f} MB, {n_lines:,} lines, {n_err if isinstance(n_err, str) else f'{n_err:,}'} known error lines; "
          f"signatures: {len(sigs)}, {len(eres)} given to grep, {len(left_out)} left out")
    for sid, why in left_out:
        print(f"  left out of grep's list: {sid}: {why}")

    # grep's rewritten list against RE2 with the same signatures, on a sample: the rewrite is checked, not assumed
    sample = os.path.join(workdir, "sample.log")
    with open(path, "rb") as src, open(sample, "wb") as dst:
        data = src.read(SAMPLE)
        dst.write(data[: data.rfind(b"\n") + 1])
    subset = re2_set([s.pattern for s, _ in eres])
    want = sum(1 for line in open(sample, encoding="utf-8").read().split("\n")[:-1] if subset.Match(line))
    got, _ = grep_count(patfile, sample)
    print(f"check on the first {SAMPLE >> 20} MB: grep counts {got:,} lines, RE2 with the same signatures {want:,}"
          + ("" if got == want else "  <-- MISMATCH: grep's figure is not comparable"))

    logs_mod.keep_scan()  # compiled once a run, as the signature set above: not part of any row
    catalogue()
    rows: list[Row] = []
    w0 = time.perf_counter()
    count, cpu = grep_count(patfile, path)
    rows.append(Row(f"grep -E -c -f ({len(eres)} signatures)", time.perf_counter() - w0, cpu, count))

    with open(path, "rb") as fh:
        data = fh.read()
    w, c, n = timed(lambda: re2_lines(data, [s.pattern for s in sigs]))
    rows.append(Row(f"re2, the {len(sigs)} signatures over the bytes", w, c, n))
    try:
        import hyperscan
    except ImportError:
        hyperscan = None
        print("hyperscan: not installed (pip install 'gpusleuth[fast]'); its rows are left out")
    if hyperscan is not None:
        db = logs_mod.hyperscan_database()

        def hs_lines() -> int:
            ends: list[int] = []
            db.scan(data, match_event_handler=lambda _id, _frm, to, _flags, _ctx: ends.append(to))
            lines, last = 0, -1
            for end in ends:  # the line of each match end, as a count of the lines that hold one
                key = data.rfind(b"\n", 0, end)
                if key != last:
                    lines, last = lines + 1, key
            return lines

        w, c, n = timed(hs_lines)
        rows.append(Row(f"hyperscan, the {len(sigs)} signatures over the bytes", w, c, f"{n} (candidate lines)"))
    data = b""  # the rows below read the file as a diagnosis does

    _hyperscan(False)
    w, c, n = reading_alone(folder)
    rows.append(Row("diagnosis path: reading the documents", w, c, f"{n:,} lines"))
    w, c, n = keep_scan_alone(folder)
    rows.append(Row("diagnosis path: the keep scan alone, re2", w, c, f"{n:,} rows kept"))
    w, c, facts = timed(lambda: diagnosis_path(folder))
    w2, c2, view = timed(lambda: logs_mod.build_logs(facts))
    matched = len({(m.line.artifact, m.line.line) for m in view.all_matches()})
    rows.append(Row("diagnosis path: read + sniff + parse_log", w, c, _kept_note(facts)))
    rows.append(Row("diagnosis path: build_logs", w2, c2, f"{matched} lines matched"))
    rows.append(Row("  end to end, re2", w + w2, c + c2, ""))
    facts = view = None

    if hyperscan is not None:
        _hyperscan(True)
        logs_mod.keep_database.cache_clear()
        w, c, _ = timed(logs_mod.keep_database)
        rows.append(Row("hyperscan: compiling the keep database", w, c, "(once a run)"))
        w, c, n = keep_scan_alone(folder)
        rows.append(Row("diagnosis path: the keep scan alone, hyperscan", w, c, f"{n:,} rows kept"))
        w, c, facts = timed(lambda: diagnosis_path(folder))
        w2, c2, view = timed(lambda: logs_mod.build_logs(facts))
        matched = len({(m.line.artifact, m.line.line) for m in view.all_matches()})
        rows.append(Row("  end to end, hyperscan", w + w2, c + c2, f"{matched} lines matched"))
        facts = view = None
        _hyperscan(False)

    tracemalloc.start()
    try:
        facts = diagnosis_path(folder)
        kept_bytes, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"memory, diagnosis path: kept {kept_bytes / max(n_lines, 1):.1f} bytes per input line ({kept_bytes / 1e6:.1f} MB), "
          f"peak while reading {peak / 1e6:.0f} MB")
    facts = None

    base = rows[0]
    print(f"{'':<48} {'wall':>7} {'x grep':>7} {'cpu':>7} {'x grep':>7} {'MB/s':>7}  what")
    for r in rows:
        print(f"{r.name:<48} {r.wall:6.2f}s {r.wall / base.wall:6.2f}x {r.cpu:6.2f}s {r.cpu / max(base.cpu, 1e-9):6.2f}x "
              f"{size / 1e6 / max(r.wall, 1e-9):7.1f}  {r.what}")
    if args.keep:
        print(f"kept: {workdir}")
    else:
        shutil.rmtree(workdir)


def _kept_note(facts) -> str:
    from gpusleuth.model.logs import ContainerLog

    logs = facts.all(ContainerLog)
    kept = sum(len(lg.lines) for lg in logs)
    total = sum(lg.total_lines if lg.total_lines is not None else len(lg.lines) for lg in logs)
    return f"{kept:,} of {total:,} lines kept as LogLines"


if __name__ == "__main__":
    main()
