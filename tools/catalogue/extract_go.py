#!/usr/bin/env python3
"""Collect the error/fatal/warning messages a Go code base can print, as draft message-catalogue rows.

How to run it on a fetched repository (the `fetch` tool leaves a bare git directory, no work tree):

    python3 tools/catalogue/extract_go.py --git /work/.mirror/NVIDIA+k8s-device-plugin/repo \
        [--under cmd/ --under internal/] [--skip internal/mocks/] > /tmp/dp.rows.toml

or on a checked-out tree:

    python3 tools/catalogue/extract_go.py --dir ~/src/k8s-device-plugin > /tmp/dp.rows.toml

It walks the .go files (skipping *_test.go, vendor/, deprecated/, testdata/), follows which function each
line is in, and prints one TOML `[[message]]` row per call that prints or builds an error with a literal
format:

  * klog / logrus / stdlib log / logr: Errorf, Fatalf, Exitf, Warnf, Warningf, Panicf, ErrorS, Error, Fatal,
    Exit, Warn, Warning, Errorw (logr's `log.Error(err, "msg")` takes the literal from its second argument);
    Printf/Println/Infof/Info (logr logs errors at Info) only when the literal says "error", "fail",
    "unable", "cannot", "warn" or "not ready" (guessed level: warning);
  * fmt.Errorf, errors.New, errors.Errorf, errors.Wrap/Wrapf (the messages that end up in wrapped errors);
  * a log call whose message is fmt.Sprintf("literal", ...) counts as that literal.

`doing` is left as a TODO and `level` is guessed from the call (Fatal/Exit/Panic -> fatal, Warn -> warning,
else error). Rows whose format has fewer than --min-fixed characters of fixed text are left out (the loader
refuses them anyway). A string concatenated with a non-literal keeps a `%v` where the non-literal was.
Review every row by hand: keep what matters for diagnosis, write `doing` and `causes` from the code.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

SKIP_PARTS = ("/vendor/", "/deprecated/", "/testdata/", "/mocks/", "zz_generated")

# A call we want: receiver/package (anything dotted) then the method, then "(".
CALL = re.compile(
    r"""(?P<recv>\b[A-Za-z_][\w]*(?:\([^()\n]*\))?(?:\.[A-Za-z_]\w*(?:\([^()\n]*\))?)*)\.
        (?P<meth>Errorf|Fatalf|Exitf|Warnf|Warningf|Panicf|ErrorS|Errorw|Error|Fatal|Fatalln|Exit|Warn|Warning|
                 Printf|Println|Infof|Info|New|Wrapf|Wrap)\(""",
    re.X,
)
FUNC = re.compile(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)")
INTERESTING_INFO = re.compile(r"error|fail|unable|cannot|could not|couldn't|warn|not ready", re.I)
GO_VERB = re.compile(r"%[-+# 0]*(?:\[\d+\])?(?:\d+|\*)?(?:\.(?:\d+|\*))?[vTtbcdoOqxXUeEfFgGsqpw]")
_ESC = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def _unquote(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1] if i + 1 < len(body) else ""
        if n in _ESC:
            out.append(_ESC[n])
            i += 2
        elif n in "uU":
            width = 4 if n == "u" else 8
            out.append(chr(int(body[i + 2:i + 2 + width], 16)))
            i += 2 + width
        elif n == "x":
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        else:
            out.append(n)
            i += 2
    return "".join(out)


def _string_at(src: str, i: int) -> tuple[str, int] | None:
    """The Go string literal starting at src[i] ('"' or '`'), decoded, and the index after it."""
    if src[i] == "`":
        j = src.index("`", i + 1)
        return src[i + 1:j], j + 1
    if src[i] != '"':
        return None
    j = i + 1
    while j < len(src) and src[j] != '"':
        if src[j] == "\n":
            return None
        j += 2 if src[j] == "\\" else 1
    return _unquote(src[i + 1:j]), j + 1


def _skip_ws(src: str, i: int) -> int:
    while i < len(src):
        if src[i] in " \t\r\n":
            i += 1
        elif src.startswith("//", i):
            i = src.find("\n", i)
            if i < 0:
                return len(src)
        else:
            break
    return i


def _skip_arg(src: str, i: int) -> int | None:
    """Index of the top-level ',' ending the argument starting at i (None if the call closes first)."""
    depth = 0
    while i < len(src):
        c = src[i]
        if c in "\"`":
            s = _string_at(src, i)
            if s is None:
                return None
            i = s[1]
            continue
        if c == "'":
            i = src.index("'", i + 2 if src[i + 1] == "\\" else i + 1) + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return None
            depth -= 1
        elif c == "," and depth == 0:
            return i
        i += 1
    return None


def _literal_arg(src: str, i: int) -> str | None:
    """The argument at i as a format string if it starts with a literal ("a" + x + "b" -> "a%vb")."""
    i = _skip_ws(src, i)
    for wrapper in ("fmt.Sprintf(", "fmt.Sprint(", "errors.New("):  # log.Error(fmt.Sprintf("...", x))
        if src.startswith(wrapper, i):
            i = _skip_ws(src, i + len(wrapper))
    if i >= len(src) or src[i] not in "\"`":
        return None
    parts: list[str] = []
    while True:
        s = _string_at(src, i)
        if s is None:
            return None
        parts.append(s[0])
        i = _skip_ws(src, s[1])
        if i < len(src) and src[i] == "+":
            i = _skip_ws(src, i + 1)
            if i < len(src) and src[i] in "\"`":
                continue
            parts.append("%v")
            end = _skip_arg(src, i)
            if end is None:
                return "".join(parts)
            # another literal might follow a non-literal: a + "x"
            seg = src[i:end]
            lits = re.findall(r'"((?:[^"\\\n]|\\.)*)"', seg)
            if lits:
                parts.append(_unquote(lits[-1]))
            return "".join(parts)
        return "".join(parts)


def _level(meth: str) -> str:
    if meth.startswith(("Fatal", "Exit", "Panic")):
        return "fatal"
    if meth.startswith(("Warn", "Info", "Print")):
        return "warning"
    return "error"


def fixed_chars(fmt: str) -> int:
    return sum(len(p.strip()) for p in GO_VERB.split(fmt.replace("%%", "%")))


def extract(path: str, src: str):
    # function of each offset: map line starts
    funcs: list[tuple[int, str]] = []
    off = 0
    for line in src.splitlines(keepends=True):
        m = FUNC.match(line)
        if m:
            funcs.append((off, m.group(1)))
        off += len(line)

    def func_at(pos: int) -> str:
        name = ""
        for start, fn in funcs:
            if start > pos:
                break
            name = fn
        return name

    for m in CALL.finditer(src):
        recv, meth = m.group("recv"), m.group("meth")
        base = re.findall(r"\w+", recv.split(".")[-1])[0]
        if meth == "New" and base != "errors":
            continue
        if meth in ("Wrap", "Wrapf") and base != "errors":
            continue
        i = m.end()
        fmt = _literal_arg(src, i)
        if fmt is None and meth in ("ErrorS", "Error", "Errorw", "Wrap", "Wrapf", "Warn", "Warning"):
            # logr / klog structured / pkg-errors: Error(err, "msg", kv...)
            end = _skip_arg(src, i)
            if end is not None:
                fmt = _literal_arg(src, end + 1)
        if fmt is None:
            continue
        if meth in ("Printf", "Println", "Infof", "Info") and not INTERESTING_INFO.search(fmt):
            continue
        kind = "error-value" if base in ("fmt", "errors") else "log"
        level = "error" if kind == "error-value" else _level(meth)
        line = src.count("\n", 0, m.start()) + 1
        yield {"format": fmt, "level": level, "where": f"{path}:{func_at(m.start())}", "line": line,
               "call": f"{base}.{meth}"}


def _slug(fmt: str, used: set[str]) -> str:
    words = re.findall(r"[a-z0-9]+", GO_VERB.sub(" ", fmt).lower())
    stop = {"the", "a", "an", "to", "of", "for", "in", "on", "with", "and", "v", "s", "w", "d", "q", "is", "was"}
    base = "-".join([w for w in words if w not in stop][:5]) or "message"
    slug, n = base, 2
    while slug in used:
        slug, n = f"{base}-{n}", n + 1
    used.add(slug)
    return slug


def files_from_git(gitdir: str) -> list[tuple[str, str]]:
    names = subprocess.run(["git", "-C", gitdir, "ls-tree", "-r", "--name-only", "HEAD"], check=True,
                           capture_output=True, text=True).stdout.split("\n")
    out = []
    for n in names:
        if _wanted(n):
            text = subprocess.run(["git", "-C", gitdir, "show", f"HEAD:{n}"], check=True, capture_output=True,
                                  text=True, errors="replace").stdout
            out.append((n, text))
    return out


def files_from_dir(root: str) -> list[tuple[str, str]]:
    out = []
    for d, _, names in os.walk(root):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), root)
            if _wanted(rel):
                with open(os.path.join(d, n), encoding="utf-8", errors="replace") as fh:
                    out.append((rel, fh.read()))
    return out


def _wanted(name: str) -> bool:
    return name.endswith(".go") and not name.endswith("_test.go") and not any(s in "/" + name for s in SKIP_PARTS)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--git", help="a bare or normal git directory (reads HEAD)")
    g.add_argument("--dir", help="a checked-out source tree")
    ap.add_argument("--under", action="append", default=[], help="only files under this prefix (repeatable)")
    ap.add_argument("--skip", action="append", default=[], help="leave out files under this prefix (repeatable)")
    ap.add_argument("--min-fixed", type=int, default=12, help="least fixed text a format needs (default 12)")
    args = ap.parse_args(argv)

    files = files_from_git(args.git) if args.git else files_from_dir(args.dir)
    used: set[str] = set()
    seen: set[str] = set()
    for path, src in sorted(files):
        if args.under and not any(path.startswith(u) for u in args.under):
            continue
        if any(path.startswith(s) for s in args.skip):
            continue
        for row in extract(path, src):
            if fixed_chars(row["format"]) < args.min_fixed or row["format"] in seen:
                continue
            seen.add(row["format"])
            print("[[message]]")
            print(f'id     = "{_slug(row["format"], used)}"')
            print(f"format = {json.dumps(row['format'], ensure_ascii=False)}")
            print(f'level  = "{row["level"]}"')
            print(f'where  = "{row["where"]}"')
            print(f'doing  = "TODO"   # {row["call"]} at line {row["line"]}')
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
