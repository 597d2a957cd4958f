"""The signature scan of logs against GNU grep with the same signatures, measured in the same run.

    PYTHONPATH=src python bench/bench_scan.py [--mb 200] [--errors 1000] [--quiet] [--keep]

Writes a log of --mb megabytes: lines of the bundled examples and of bench_logs.py's must-gather shapes that
no signature matches (the background, with their seconds varied), and --errors lines, spread at random, that
the bundled examples hold and a signature matches (the known error lines); --distinct of the background lines
have their digits redrawn, as ids and counters vary in real logs. Then times, one after the other:

* `LC_ALL=C grep -E -c -f patterns.txt LOG`: the signatures of knowledge/signatures.toml rewritten as POSIX
  extended regexes (named and non-capturing groups become plain groups, `\\d` a bracket, lazy quantifiers
  greedy, which changes no line's match or not). Signatures that cannot be rewritten faithfully are left out
  of grep's list and named; grep's count is checked against RE2 with the same subset on the first 16 MB.
* gpusleuth's default path as a diagnosis runs it, end to end: decode + normalise + parse_log (a log over
  parsers/logs.py KEEP_ALL_LINES is scanned first and only the lines that matter become LogLines), then
  build_logs over them; and the same with every line made a LogLine (the whole-log parse, as before kept lines).
* bytes per input line that the parse keeps (tracemalloc), in kept-lines mode and for the whole-log parse.

--quiet draws the background only from lines a big log would not keep (no level word, error shape or phrase a
view reads), as a healthy component's log is; without it the background is every unmatched line of the
examples, which are incidents: two in five of those are warning or error lines, all of which are kept.
* the raw re2.Set pass: every line of the decoded text through the signature set, no memo.
* with the `hyperscan` wheel installed (`pip install 'gpusleuth[fast]'`): a hyperscan block scan of the whole
  file (every signature, multi-line mode), then the same with the candidate lines confirmed by RE2 (what
  facts/logs.py's hyperscan path does); and build_logs on that path.

Each result is printed with the lines it counts and its time as a ratio to grep's.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from gpusleuth.facts import logs as logs_mod
from gpusleuth.facts.store import Facts
from gpusleuth.knowledge.message_catalogue import catalogue
from gpusleuth.model.document import Document
from gpusleuth.parsers import logs as parsers_logs
from gpusleuth.parsers.logs import parse_log
from gpusleuth.sources import examples_root
from gpusleuth.sources.text import decode, normalise

sys.path.insert(0, str(Path(__file__).parent))
from bench_logs import SHAPES  # noqa: E402

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
            (errors if matcher.Match(line) else background).append(line)
    background += [s for s in SHAPES if not matcher.Match(s.replace("@S", "00"))]
    return sorted(set(background)), sorted(set(errors))


_DIGITS = re.compile(r"\d")


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

def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def grep_count(patfile: str, path: str) -> int:
    proc = subprocess.run(["grep", "-E", "-c", "-f", patfile, path], capture_output=True, text=True,
                          env={**os.environ, "LC_ALL": "C"})
    if proc.returncode not in (0, 1):
        raise SystemExit(f"grep failed: {proc.stderr}")
    return int(proc.stdout.strip() or 0)


def re2_set(patterns: list[str]):
    import re2

    opts = re2.Options()
    opts.max_mem = 64 << 20
    s = re2.Set.SearchSet(opts)
    for p in patterns:
        s.Add(p)
    s.Compile()
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--errors", type=int, default=1000, help="known error lines spread through the log")
    ap.add_argument("--distinct", type=float, default=0.5, help="share of background lines with their digits redrawn")
    ap.add_argument("--keep", action="store_true", help="keep the generated log and patterns.txt")
    ap.add_argument("--quiet", action="store_true", help="background of lines a big log does not keep (a healthy component's log)")
    args = ap.parse_args()
    sigs, matcher = logs_mod.signatures()
    workdir = tempfile.mkdtemp(prefix="gpusleuth-scan-")
    path, patfile = os.path.join(workdir, "big.log"), os.path.join(workdir, "patterns.txt")

    eres, left_out = [], []
    for s in sigs:
        ere, why = to_ere(s.pattern)
        (eres.append((s, ere)) if ere else left_out.append((s.id, why)))
    with open(patfile, "w", encoding="utf-8") as fh:
        fh.write("".join(e + "\n" for _, e in eres))

    n_lines, n_err = generate(path, args.mb, args.errors, matcher, args.distinct, args.quiet)
    size = os.path.getsize(path)
    print(f"log: {size / 1e6:.0f} MB, {n_lines:,} lines, {n_err:,} known error lines; "
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
    got = grep_count(patfile, sample)
    print(f"check on the first {SAMPLE >> 20} MB: grep counts {got:,} lines, RE2 with the same signatures {want:,}"
          + ("" if got == want else "  <-- MISMATCH: grep's figure is not comparable"))

    logs_mod.keep_scan()  # compiled once a run, as the signature set above: not part of any row
    catalogue()
    results: list[tuple[str, float, int | str]] = []
    t, c = timed(lambda: grep_count(patfile, path))
    results.append((f"grep -E -c -f ({len(eres)} signatures)", t, c))
    base = t

    def read_text():
        with open(path, "rb") as fh:
            return decode(fh.read())[0]

    t_dec, text = timed(read_text)
    lines_text = text.split("\n")[:-1]
    del text

    def raw_re2():
        match = matcher.Match
        return sum(1 for line in lines_text if match(line))

    t, c = timed(raw_re2)
    results.append(("re2.Set, every line, no memo", t, c))

    def build(use_hyperscan: bool):
        return build_with(log, use_hyperscan)

    def build_with(log, use_hyperscan: bool):
        facts = Facts()
        facts.add(log)
        old = logs_mod.USE_HYPERSCAN, logs_mod.HYPERSCAN_MIN_LINES
        logs_mod.USE_HYPERSCAN, logs_mod.HYPERSCAN_MIN_LINES = use_hyperscan, 0  # whatever the log's size
        try:
            return logs_mod.build_logs(facts)
        finally:
            logs_mod.USE_HYPERSCAN, logs_mod.HYPERSCAN_MIN_LINES = old

    def matched_lines(view) -> int:
        return len({(m.line.artifact, m.line.line) for m in view.all_matches()})

    def read_doc() -> Document:
        with open(path, "rb") as fh:
            text, _ = decode(fh.read())
        lines, _ = normalise(text)
        return Document(os.path.basename(path), tuple(lines))

    def parse(whole: bool):
        old = parsers_logs.KEEP_ALL_LINES
        parsers_logs.KEEP_ALL_LINES = 1 << 62 if whole else old  # whole: every line a LogLine, as before kept lines
        try:
            return parse_log(read_doc())
        finally:
            parsers_logs.KEEP_ALL_LINES = old

    # the default path first: decode + normalise + parse_log (kept lines) + build_logs, end to end
    t_read, doc = timed(read_doc)
    del doc
    t_kept, kept = timed(lambda: parse(False))
    t_kept_build, kept_view = timed(lambda: build_with(kept, False))
    kept_note = (f"{len(kept.lines):,} of {kept.total_lines:,} lines kept" if kept.total_lines is not None
                 else f"{len(kept.lines):,} LogLines (read whole: the scan would keep more than {parsers_logs.DENSE:.0%})")
    results.append(("default: decode+normalise alone", t_read, ""))
    results.append(("default: decode+normalise+parse_log", t_kept, kept_note))
    results.append(("default: build_logs over those", t_kept_build, matched_lines(kept_view)))
    results.append(("  default end to end", t_kept + t_kept_build, ""))
    results.append(("  default, parse_log + build_logs", t_kept - t_read + t_kept_build, "(decode+normalise taken off)"))
    del kept_view

    t_parse, log = timed(lambda: parse(True))
    results.append(("whole: parse (decode+normalise+parse_log)", t_parse, f"{len(log.lines):,} LogLines"))

    t, view = timed(lambda: build(False))
    results.append(("whole: build_logs, re2 path (parsed lines)", t, matched_lines(view)))
    results.append(("  parse + build_logs", t_parse + t, ""))

    try:
        import hyperscan
    except ImportError:
        hyperscan = None
        print("hyperscan: not installed (pip install 'gpusleuth[fast]'); its rows are left out")
    if hyperscan is not None:
        with open(path, "rb") as fh:
            data = fh.read()
        db = logs_mod.hyperscan_database()

        def hs_candidates() -> list[int]:
            starts: list[int] = []  # the offset just before each candidate line (its previous newline, or -1)

            def on_match(_id, _frm, to, _flags, _ctx):
                key = data.rfind(b"\n", 0, to)
                if not starts or starts[-1] != key:
                    starts.append(key)

            db.scan(data, match_event_handler=on_match)
            return starts

        t, cand = timed(hs_candidates)
        results.append(("hyperscan block scan (candidate lines)", t, len(cand)))

        def hs_confirmed() -> int:
            keys = hs_candidates()
            match = matcher.Match
            n = 0
            for k in keys:
                end = data.find(b"\n", k + 1)
                if match(data[k + 1: end if end >= 0 else len(data)].decode("utf-8", "replace")):
                    n += 1
            return n

        t, c = timed(hs_confirmed)
        results.append(("hyperscan + RE2 confirm", t, c))
        logs_mod.hyperscan_database.cache_clear()
        t, _ = timed(logs_mod.hyperscan_database)
        results.append(("hyperscan: compiling the database", t, ""))
        t, view = timed(lambda: build(True))
        results.append(("build_logs, hyperscan path (compiled)", t, matched_lines(view)))
        results.append(("  parse + build_logs", t_parse + t, ""))

    print(f"decode alone: {t_dec:.2f} s")
    for name, doc_path in (("default (kept lines), whole log", path), ("whole (every line a LogLine), first 16 MB", sample)):
        with open(doc_path, "rb") as fh:
            doc = Document("big.log", tuple(normalise(decode(fh.read())[0])[0]))
        whole = name.startswith("whole")
        old = parsers_logs.KEEP_ALL_LINES
        parsers_logs.KEEP_ALL_LINES = 1 << 62 if whole else old
        tracemalloc.start()
        try:
            parsed = parse_log(doc)
            kept_bytes, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            parsers_logs.KEEP_ALL_LINES = old
        n = len(doc.lines)
        print(f"memory, {name}: {n:,} lines -> {len(parsed.lines):,} LogLines; kept {kept_bytes / n:.1f} bytes per input line "
              f"({kept_bytes / 1e6:.1f} MB), peak while parsing {peak / n:.1f} bytes per line (not counting the Document's "
              f"own line strings, {sum(map(sys.getsizeof, doc.lines)) / n:.0f} bytes per line)")
        del doc, parsed
    print(f"{'':<42} {'time':>8} {'MB/s':>8} {'x grep':>8}  lines matched")
    for name, t, c in results:
        print(f"{name:<42} {t:7.2f}s {size / 1e6 / t:8.1f} {t / base:7.2f}x  {c}")
    if args.keep:
        print(f"kept: {workdir}")
    else:
        for p in (path, patfile, sample):
            os.unlink(p)
        os.rmdir(workdir)


if __name__ == "__main__":
    main()
