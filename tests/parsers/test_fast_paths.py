"""The shortcuts taken for speed give exactly what the straightforward code gives: each one is compared with
a plain reference on fuzzed input (docs/performance.md lists them)."""

import json
import random
import re
from datetime import datetime

import pytest

from gpusleuth.parsers import logs, timestamps
from gpusleuth.sources import text

_RND_SEED = 20251121


def _fuzz(pieces: list[str], n: int, longest: int = 10, seed: int = _RND_SEED):
    rnd = random.Random(seed)
    for _ in range(n):
        yield "".join(rnd.choice(pieces) for _ in range(rnd.randrange(0, longest)))


def _outcome(fn, value):
    try:
        return "ok", repr(fn(value))
    except ValueError:
        return "ValueError", None


def test_json_lines_decode_as_json_loads_does():
    pieces = ['{', '}', '[', ']', '"a"', ':', ',', '1', '1.5e3', 'true', 'null', ' ', '\n', '\t', '"\\u00e9"', '"\\"', 'NaN',
              '-', '\ufeff', '"x', 'x', '{"msg": "m", "ts": 1763725866.1}', '\r']
    for s in _fuzz(pieces, 20000):
        assert _outcome(logs._json_loads, s) == _outcome(json.loads, s), repr(s)


def test_quoted_logrus_values_read_as_the_plain_pattern_reads_them():
    plain = re.compile(r'"((?:[^"\\]|\\.)*)"')
    for s in _fuzz(['"', '\\', 'a', ' ', 'é', '\\"', '\\\\', 'msg', '" tail'], 20000):
        a, b = plain.match(s), logs._QUOTED.match(s)
        assert (a and (a.group(0), a.group(1))) == (b and (b.group(0), b.group(1))), repr(s)


@pytest.mark.parametrize("frac", ["0", "5", "12", "123456", "1234567", "999999999", "000000001", "١٢٣", "12٣"])
def test_a_cached_second_plus_a_fraction_is_the_datetime_with_those_microseconds(frac):
    second = datetime(2000, 11, 21, 11, 59, 33)
    assert timestamps._with_frac((second, second.isoformat()), frac) == second.replace(microsecond=timestamps._frac_us(frac))


@pytest.mark.parametrize("fmt", timestamps.FORMATS, ids=lambda f: f.id)
def test_a_format_never_matches_a_line_starting_with_a_character_it_is_not_a_candidate_for(fmt):
    """The parser skips the previous line's format on a printable first character that candidates() does not
    list it for; that is only right while candidates() lists every character a pattern can start with."""
    for sample in fmt.samples:
        for c in map(chr, range(32, 127)):
            if fmt not in timestamps.candidates(c):
                assert fmt.regex.match(c + sample[1:]) is None, (fmt.id, c)


def _normalise_line_by_line(raw: str) -> tuple[list[str], list[str]]:
    """sources.text.normalise as it was written before its fast paths: every step on every line."""
    notes: list[str] = []
    raw = text._ANSI.sub(lambda m: " " if m.group(0)[-1] in "CG" else "", raw)
    paste = len(raw) < text.BIG_TEXT
    if paste and text._ESCAPED_MARKUP.search(raw):
        raw = text._ENTITY.sub(lambda m: text._ENTITIES[m.group(0)], raw)
    if paste:
        raw = raw.translate(text._INVISIBLE).translate(text._PLAIN_QUOTES)
    lines = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if paste:
        lines = text._unnumbered(lines) or lines
    nonblank = [ln for ln in lines if ln.strip()]
    quoted = nonblank and sum(1 for ln in nonblank if text._QUOTE.match(ln)) >= 0.6 * len(nonblank)
    lines = [text._QUOTE.sub("", ln, count=1) if quoted or (text._QUOTE.match(ln) and not text._is_gt_prompt(ln)) else ln
             for ln in lines]
    wiki = paste and any(w in raw for w in ("{noformat}", "{code"))
    lines = list(text._unfence(lines, wiki))
    out, cut = [], 0
    for ln in lines:
        if len(ln) > text.MAX_LINE and not (ln.strip()[:1] in ("{", "[") and ln.strip()[-1:] in ("}", "]")):
            ln, cut = ln[: text.MAX_LINE], cut + 1
        out.append(ln.expandtabs(8) if "\t" in ln and not ln.lstrip().startswith(("{", "[")) else ln)
    if paste:
        out = [ln.rstrip(" \t") for ln in out]
    if paste and any(ln.strip() for ln in out):
        common = min(len(ln) - len(ln.lstrip(" ")) for ln in out if ln.strip())
        out = [ln[common:] for ln in out]
    if cut:
        notes.append(f"{cut} line(s) longer than {text.MAX_LINE} characters were cut")
    return out, notes


def _prompt_lines_one_by_one(lines: list[str]) -> list[int]:
    return [i for i, ln in enumerate(lines) if text._PROMPT.match(ln)]


PASTE_PIECES = [
    "root@192-18-132-31:~/config# k get pods -A", "[root@node ~]# cat /etc/containerd/config.toml", "$ kubectl logs x",
    "sh-5.1# nvidia-smi", "PS C:\\> kubectl get nodes", "> quoted line", "   > quoted", "    > not a quote", ">", "```",
    "~~~yaml", "  ```bash", "a\tb", "{\t\"json\": 1}", "plain log line", "", "   ", "#\x0bweird", "# comment", "$", "% ls -l /x",
    "x" * 17000, "#\u2003cmd", "user@host:~$ dmesg -T", "> ```", "> \ttab", "\r", "line\rcr", "a\r\nb",
    "```E0120 07:09:15.605081 1 main.go:132] error```", "```first line", "last line```", "{noformat}", "{code:yaml}",
    "msg=&quot;error&quot; &lt;x&gt; a&amp;b", "a&amp;b only", "\u201cquoted\u201d it\u2019s", "    indented four", "  two",
    "\x1b[0;31mERRO\x1b[0m[0000] colour", "no\u00a0break\u200bzero", "trailing   ", "     1\tnumbered", "     2\tnext", "     3",
]


def test_normalise_gives_what_every_step_on_every_line_gives():
    rnd = random.Random(_RND_SEED)
    for _ in range(3000):
        parts = [rnd.choice(PASTE_PIECES) for _ in range(rnd.choice([1, 3, 20]))]
        if rnd.random() < 0.3:
            parts = ["> " + p for p in parts]
        raw = rnd.choice(["\n", "\r\n", "\r"]).join(parts) + rnd.choice(["", "\n"])
        assert text.normalise(raw) == _normalise_line_by_line(raw), repr(raw[:120])


def test_every_line_a_prompt_can_be_on_is_a_prompt_candidate():
    rnd = random.Random(_RND_SEED)
    for _ in range(3000):
        lines = [rnd.choice(PASTE_PIECES).replace("\r", "") for _ in range(rnd.choice([1, 5, 40]))]
        if rnd.random() < 0.1:
            lines[0] += "\n$ kubectl get pods"  # a line holding a newline: the shortcut must step aside
        assert set(_prompt_lines_one_by_one(lines)) <= set(text._prompt_candidates(lines)), lines
