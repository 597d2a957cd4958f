#!/usr/bin/env python3
"""Draft message-catalogue rows from shell scripts: the lines a script prints when it fails.

Run (stdlib only, Python 3.11+):

    python3 tools/catalogue/extract_shell.py SCRIPT [SCRIPT ...] [--where-prefix ubuntu22.04/] > draft.toml
    git -C REPO show HEAD:ubuntu22.04/nvidia-driver | python3 tools/catalogue/extract_shell.py - --name ubuntu22.04/nvidia-driver

A line is kept when the script prints it with echo/printf/_error/log_error/... and either
  - sends it to stderr (`>&2`, `1>&2`), or
  - the next command is a failing `exit N`/`return N` (N != 0), after any further echo lines of the message, or
  - the text starts with ERROR/FATAL/WARNING/Error/error:/failed/Could not/Unable, or
  - the printing command is an error helper (_error, log_error, error, die, fatal, _die).
Rows come out once per distinct format (several scripts printing the same text give one row naming the first),
with the enclosing function in `where` and `doing = "TODO"`: review every row by hand (write `doing` and
`causes` from the code, drop noise) before it goes into src/gpusleuth/knowledge/messages/.
"""

from __future__ import annotations

import argparse
import re
import sys

FUNC = re.compile(r"^\s*(?:function\s+)?([A-Za-z_][\w:.-]*)\s*\(\)\s*[{(]?\s*$")
FUNC_KW = re.compile(r"^\s*function\s+([A-Za-z_][\w:.-]*)\s*(?:\(\))?\s*[{(]?\s*$")
PRINTERS = ("echo", "printf", "_error", "log_error", "error", "die", "fatal", "_die", "log_err", "_fatal",
            "_warn", "warn", "log_warn", "log")
ERROR_HELPERS = {"_error", "log_error", "error", "die", "fatal", "_die", "log_err", "_fatal"}
PRINT = re.compile(r"(?:^\s*|[;&|{(]\s*|\bthen\s+|\belse\s+|\bdo\s+)(" + "|".join(map(re.escape, PRINTERS)) + r")\s+(.*)$")
FAIL = re.compile(r"\b(?:exit|return)\s+(?:[1-9]\d*|\$\?)\b")
STDERR = re.compile(r"(?:^|\s)(?:1?>&2|>\s*/dev/stderr)")
ERRWORD = re.compile(r"^(?:ERROR|FATAL|WARNING|WARN|Error|error|fatal|Fatal|failed|Failed"
                     r"|Could not|could not|Unable|unable|cannot|Cannot)\b")


def _words(rest: str) -> tuple[str, str]:
    """The printed text of an echo/printf argument list (quotes removed, options dropped) and what follows it."""
    out: list[str] = []
    i, n = 0, len(rest)
    cur: list[str] = []
    while i < n:
        c = rest[i]
        if c in "\"'":
            j = i + 1
            buf = []
            while j < n and rest[j] != c:
                if c == '"' and rest[j] == "\\" and j + 1 < n:
                    buf.append(rest[j + 1] if rest[j + 1] in '"\\$`' else rest[j:j + 2])
                    j += 2
                    continue
                buf.append(rest[j])
                j += 1
            cur.append("".join(buf))
            i = j + 1
        elif c.isspace():
            if cur:
                out.append("".join(cur))
                cur = []
            i += 1
        elif c in ";|&>" or (c == "2" and rest[i:i + 2] == "2>") or (c == "1" and rest[i:i + 2] == "1>"):
            break
        elif c == "$" and rest[i:i + 2] == "$(":
            depth, j = 0, i
            while j < n:
                depth += rest[j] == "("
                depth -= rest[j] == ")"
                j += 1
                if depth == 0 and rest[j - 1] == ")":
                    break
            cur.append(rest[i:j])
            i = j
        else:
            cur.append(c)
            i += 1
    if cur:
        out.append("".join(cur))
    while out and re.fullmatch(r"-[neE]+", out[0]):
        out.pop(0)
    return " ".join(out), rest[i:]


def _logical_lines(text: str):
    """(line number, logical line): backslash continuations joined, comments dropped."""
    buf, start = "", 0
    for no, line in enumerate(text.splitlines(), 1):
        if not buf:
            start = no
        stripped = line.rstrip()
        if stripped.endswith("\\") and not stripped.endswith("\\\\"):
            buf += stripped[:-1] + " "
            continue
        buf += line
        if not buf.lstrip().startswith("#"):
            yield start, buf
        buf = ""
    if buf:
        yield start, buf


def extract(text: str, name: str) -> list[dict]:
    lines = list(_logical_lines(text))
    func = "(top level)"
    found: list[dict] = []
    for k, (no, line) in enumerate(lines):
        m = FUNC.match(line) or FUNC_KW.match(line)
        if m:
            func = m.group(1)
            continue
        if line.strip().startswith("trap "):
            continue
        m = PRINT.search(line)
        if not m:
            continue
        printer, rest = m.group(1), m.group(2)
        if printer == "printf":
            rest = re.sub(r"^(['\"])[^'\"]*%s[^'\"]*\1\s+", "", rest) if "%s" in rest.split()[0] else rest
        msg, tail = _words(rest)
        msg = msg.replace("\\n", " ").replace("\\t", " ").strip()
        if len(re.sub(r"\$\{[^}]*\}|\$\([^)]*\)|\$\w+", "", msg).strip()) < 12:
            continue
        if re.search(r">\s*[^&\s]", tail) and not STDERR.search(tail):
            continue  # written to a file, not printed
        to_stderr = bool(STDERR.search(tail)) or bool(STDERR.search(line[m.end(1):]))
        fails = bool(FAIL.search(tail))
        if not fails:
            for _, nxt in lines[k + 1:k + 4]:  # the next command, past further lines of the same message
                s = nxt.strip()
                if FAIL.match(s):
                    fails = True
                    break
                if not PRINT.match(s):
                    break
        helper = printer in ERROR_HELPERS
        if not (to_stderr or fails or helper or ERRWORD.match(msg)):
            continue
        level = "warning" if re.match(r"(?i)warn", msg) or printer in ("_warn", "warn", "log_warn") else "error"
        found.append({"line": no, "function": func, "format": msg, "level": level,
                      "why": ", ".join(w for w, b in (("stderr", to_stderr), ("fails", fails), ("helper", helper)) if b) or "error word"})
    return found


def _slug(func: str, fmt: str) -> str:
    words = re.findall(r"[a-z0-9]+", re.sub(r"\$\{[^}]*\}|\$\([^)]*\)|\$\w+", "", fmt).lower())
    stop = {"the", "a", "an", "to", "of", "for", "is", "in", "and", "or", "error", "fatal", "warning", "on", "be"}
    words = [w for w in words if w not in stop][:5]
    return "-".join(words) or func.strip("_").replace("_", "-")


def _toml(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scripts", nargs="+", help="shell scripts to read ('-' reads stdin)")
    ap.add_argument("--name", help="the name to give stdin in `where`")
    ap.add_argument("--where-prefix", default="", help="prefix for `where` (the script's path in its repository)")
    args = ap.parse_args(argv)
    seen: dict[str, str] = {}
    ids: set[str] = set()
    for path in args.scripts:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8", errors="replace").read()
        name = args.where_prefix + (args.name or path if path == "-" else path)
        for row in extract(text, name):
            if row["format"] in seen:
                print(f"# also {name}:{row['line']} ({row['function']})  [{row['format'][:50]}]")
                continue
            seen[row["format"]] = name
            rid, n = _slug(row["function"], row["format"]), 2
            while rid in ids:
                rid, n = f"{_slug(row['function'], row['format'])}-{n}", n + 1
            ids.add(rid)
            print("[[message]]")
            print(f"id      = {_toml(rid)}")
            print(f"format  = {_toml(row['format'])}")
            print(f"level   = {_toml(row['level'])}")
            print(f"where   = {_toml(name + ' (' + row['function'] + ')')}")
            print('doing   = "TODO"')
            print("causes  = []")
            print(f"# line {row['line']}; kept because: {row['why']}")
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
