"""Bytes to Documents: decode, undo what pasting did, split a paste at its shell prompts.

Every transformation keeps the line count, so evidence line numbers match the file the user has.
"""

from __future__ import annotations

import codecs
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from gpusleuth.model.document import Document

MAX_LINE = 16_384  # longer lines are cut (a whole JSON document on one line is not: it would not parse cut)

_FENCE = re.compile(r"^\s*(```|~~~)")
_QUOTE = re.compile(r"^ {0,3}> ?")
_QUOTE_AFTER_NEWLINE = re.compile(r"\n {0,3}>")  # a quoted line after the first (a literal first: a fast scan)
# A shell prompt followed by a command we know how to read the output of:
#   root@192-18-132-31:~/config# k get pods -A    [root@node ~]# cat /etc/x    $ kubectl ...    sh-5.1# ...
_PROMPT = re.compile(
    r"^\s*(?:(?:\[[^\]\n]{1,80}\]|[\w.-]{1,64}@[\w.-]{1,64}(?::[^\s#$]{0,200})?|[\w.-]{1,32}-\d[\d.]*|PS [^>]{1,200})\s?)?"
    r"[#$%>]\s+(?P<cmd>(?:sudo\s+(?:-\S+\s+)*)?(?P<prog>[\w./-]+)(?:\s.*)?)$"
)
_KNOWN_PROGRAMS = {
    "kubectl", "k", "oc", "helm", "cat", "less", "more", "nvidia-smi", "dmesg", "journalctl", "lsmod",
    "modinfo", "modprobe", "ps", "systemctl", "crictl", "containerd", "ctr", "uname", "ls", "grep", "tail",
    "head", "nvidia-ctk", "dcgmi", "lspci", "ip", "ibstat", "ofed_info", "docker", "nerdctl", "microk8s",
    "k3s", "rke2", "k0s", "snap", "find", "stat", "chroot", "egrep", "zcat", "gpusleuth", "date", "mokutil",
}
# What every _PROMPT match holds: a prompt character, then a space. One pattern per character, each starting
# with its literal, so that the regex engine scans for the character instead of testing every position.
_PROMPT_MARKS = {c: re.compile(re.escape(c) + r"[^\S\n]") for c in "#$%>"}
# `# helm upgrade ... -f values.yaml` at the top of a values file is a comment saying how the file is used,
# not a root prompt: a bare `#` before a command that changes the cluster does not split the file.
_APPLIED_WITH = re.compile(
    r"^(?:helm\s+(?:upgrade|install|template)|(?:kubectl|k|oc)\s+(?:apply|create|replace|patch|edit|delete|label|annotate|scale|rollout|set))\b"
)
# A paste that opens with the command itself, no prompt (`k logs -n gpu-operator nvidia-driver-…`, `cat /etc/...`):
# only a reading kubectl verb or a `cat` of an absolute path on the first non-blank line counts, so a log or config
# is never cut by accident.
_BARE_FIRST = re.compile(r"^\s*(?P<cmd>(?:kubectl|k|oc)\s+(?:get|describe|logs|events|top)\b.*|(?:sudo\s+)?cat\s+/[^\s|;&>]+)\s*$")
# a helm command whose --set flags are the values it installs with (read by parsers/helm.py parse_set_flags)
_SETS_VALUES = re.compile(r"^(?:microk8s\s+)?helm3?\s+(?:upgrade|install|template)\b.*\s--set(?:-string|-json)?[=\s]")
_CAT = re.compile(r"^(?:sudo\s+)?(?:cat|less|more|tail(?:\s+-\S+)*|head(?:\s+-\S+)*)\s+(?P<path>/[^\s|;&>]+)")


_BOMS = (  # longest first: the UTF-32 LE mark starts with the UTF-16 LE one
    (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
)
# control bytes text does not hold (tabs, newlines, form feeds, colour escapes, backspace and bell it does)
_BINARY_CONTROLS = bytes(b for b in range(32) if b not in b"\t\n\r\x0c\x1b\x08\x07")


def _wide_encoding(sample: bytes) -> str | None:
    """UTF-16/32 without a byte-order mark, told by where the zero bytes of mostly-ASCII text fall:
    UTF-16 LE text is `N\0A\0M\0E\0`, UTF-32 BE `\0\0\0N\0\0\0A`..."""
    n = len(sample) - len(sample) % 4
    if n < 8:
        return None
    zeros = [sample[i:n:4].count(0) / (n // 4) for i in range(4)]
    wide = [z > 0.9 for z in zeros]
    if wide == [False, True, True, True]:
        return "utf-32-le"
    if wide == [True, True, True, False]:
        return "utf-32-be"
    even, odd = (zeros[0] + zeros[2]) / 2, (zeros[1] + zeros[3]) / 2
    if odd > 0.7 and even < 0.1:
        return "utf-16-le"
    if even > 0.7 and odd < 0.1:
        return "utf-16-be"
    return None


def decode(data: bytes) -> tuple[str | None, str | None]:
    """(text, None), (text, a note on what was dropped), or (None, why) when it is not text a person could
    have pasted.

    UTF-8 is the default; UTF-16/32 are read with or without a byte-order mark. A few NUL bytes in UTF-8
    text (a kernel log after a crash, a journal export with a zero-filled block) are dropped and the rest is
    read: only a file whose NULs or control bytes are a real share of it is binary."""
    if not data:
        return None, "empty file"
    sample = data[:65536]
    for bom, codec in _BOMS:
        if sample.startswith(bom):
            try:
                return data[len(bom):].decode(codec), None
            except UnicodeDecodeError:
                break
    nuls = sample.count(0)
    if nuls:
        codec = _wide_encoding(sample)
        if codec:
            try:
                return data.decode(codec), None
            except UnicodeDecodeError:
                pass  # a file cut in the middle of a character: read what decodes
            text = data.decode(codec, errors="replace")
            if text.count("\ufffd") <= max(16, len(text) // 50):
                return text, None
            return None, f"binary file (not {codec.upper()} text)"
        rest = sample.replace(b"\x00", b"")
        controls = len(rest) - len(rest.translate(None, _BINARY_CONTROLS))
        if _binary(sample, rest, controls):
            return None, "binary file (NUL bytes), not text output"
        dropped = data.count(0)
        data = data.replace(b"\x00", b"")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        if text.count("\ufffd") > max(16, len(text) // 50):
            return None, "binary file (not UTF-8 text)"
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, (f"{dropped} NUL byte(s) dropped; the rest read as text" if nuls else None)


def _json_line(line: str) -> bool:
    """A whole JSON document on one line (`kubectl get pods -o json | jq -c .`, a minified export): kept
    uncut, since a cut one cannot be parsed. The file's byte cap still bounds it."""
    s = line.strip()
    return s[:1] in ("{", "[") and s[-1:] in ("}", "]")


CHUNK = 1 << 20  # bytes per read when a file is streamed
PIECE_LINES = 500_000  # lines in a piece of a huge file at most (a line object costs ~60 bytes however short)
_SAMPLE = 65536  # what decide text or binary is judged on


@dataclass
class StreamRead:
    """What reading a file (or one piece of it) as a stream gave: its text (or why not), how many bytes were read
    so far, whether a cap stopped the read before the end, and the error that cut it short (a truncated archive
    member). ``more``: a piece of a huge file, more pieces follow."""

    text: str | None
    why: str | None
    size: int
    capped: bool = False
    error: Exception | None = None
    note: str | None = None  # text read, with something dropped (NUL bytes) that the report should say
    more: bool = False


def _judge(sample: bytes) -> tuple[str | None, int, bool, str | None]:
    """(codec, byte-order-mark length, drop NUL bytes, why it is binary) from a file's first bytes, the way
    decode() judges a whole file."""
    for bom, codec in _BOMS:
        if sample.startswith(bom):
            return codec, len(bom), False, None
    if b"\x00" not in sample:
        return "utf-8", 0, False, None
    codec = _wide_encoding(sample)
    if codec:
        return codec, 0, False, None
    rest = sample.replace(b"\x00", b"")
    controls = len(rest) - len(rest.translate(None, _BINARY_CONTROLS))
    if _binary(sample, rest, controls):
        return None, 0, False, "binary file (NUL bytes), not text output"
    return "utf-8", 0, True, None


def _binary(sample: bytes, rest: bytes, controls: int) -> bool:
    """Whether NUL and control bytes are a real share of a sample: half of it NULs (a zero-filled file), more
    control bytes than text has, or, with any control byte, NULs and controls together over 5 % of it (a few
    NULs in a long log are a crash's leftovers; in nine bytes they are what the file is made of)."""
    return (len(rest) < len(sample) // 2 or controls > max(8, len(rest) // 100)
            or bool(controls) and (len(sample) - len(rest) + controls) * 20 > len(sample))


def _cut_point(chunks: list[str], end: int) -> tuple[int, int]:
    """Where a piece of a huge file ends, as (chunk, position in it): after the last line break within its first
    ``end`` characters (a line longer than a piece is cut at ``end``)."""
    before, k = 0, 0
    while k < len(chunks) - 1 and before + len(chunks[k]) < end:
        before += len(chunks[k])
        k += 1
    limit = end - before
    for j in range(k, -1, -1):
        c = chunks[j]
        at = c.rfind("\n", 0, limit if j == k else len(c))
        if at < 0:
            at = c.rfind("\r", 0, limit if j == k else len(c))
        if at >= 0:
            return j, at + 1
    return k, min(limit, len(chunks[k]))


def read_pieces(fh: BinaryIO, cap: int | None = None, piece: int | None = None, piece_lines: int = PIECE_LINES) -> Iterator[StreamRead]:
    """Read a file object in chunks and decode it as it comes, as decode() would judge the whole file: the bytes
    are never held beside the text. Reads stop at ``cap`` bytes (None: the whole file); an error from the stream
    (a cut archive, a corrupt gzip member) ends the read and is returned with what came before it. UTF-16/32 are
    read with or without a byte-order mark; a few NUL bytes in UTF-8 text are dropped (and counted in ``note``).

    A file above ``piece`` characters or ``piece_lines`` lines is handed on in pieces of whole lines (``more`` set
    on all but the last), so that no string of a whole huge file is ever built, and no list of millions of tiny
    lines either; a smaller one (or any, with ``piece`` None) comes as one StreamRead. The last StreamRead carries
    the size, the cap, the error and the note; one with ``text`` None says why the rest is not text (binary,
    empty)."""
    size, pieces, held, held_lines, error, capped = 0, [], 0, 0, None, False
    decoder = None
    codec, drop_nuls, dropped, first = "utf-8", False, 0, True
    read = getattr(fh, "read1", fh.read)  # one read at a time: a stream that fails later keeps what came before
    try:
        while True:
            want = CHUNK if cap is None else min(CHUNK, cap - size)
            if want <= 0:
                capped = bool(fh.read(1))
                break
            chunk = read(want)
            if not chunk:
                break
            size += len(chunk)
            if decoder is None:
                while len(chunk) < min(_SAMPLE, want) and (more := read(min(_SAMPLE, want) - len(chunk))):
                    chunk += more  # judge on a full sample even when the stream hands out small reads
                    size += len(more)
                judged, bom, drop_nuls, why = _judge(chunk[:_SAMPLE])
                if judged is None:
                    yield StreamRead(None, why, size)
                    return
                codec, chunk = judged, chunk[bom:]
                decoder = codecs.getincrementaldecoder(codec)("replace")
            if drop_nuls and b"\x00" in chunk:
                dropped += chunk.count(0)
                chunk = chunk.replace(b"\x00", b"")
            decoded = decoder.decode(chunk)
            pieces.append(decoded)
            held += len(decoded)
            if piece is not None:
                held_lines += decoded.count("\n")
            while piece is not None and (held >= piece or held_lines >= piece_lines):  # whole lines, about a piece
                k, at = _cut_point(pieces, piece if held >= piece else held)
                out = StreamRead("".join([*pieces[:k], pieces[k][:at]]), None, size, more=True)
                pieces = [pieces[k][at:], *pieces[k + 1:]]
                held = sum(map(len, pieces))
                held_lines = sum(p.count("\n") for p in pieces)
                bad = _not_text(out.text, codec)
                if bad:
                    yield StreamRead(None, bad, size)
                    return
                if first and out.text.startswith("\ufeff"):
                    out.text = out.text[1:]
                first = False
                yield out  # its text is the only reference to the piece: the reader drops it once split into lines
    except Exception as exc:  # noqa: BLE001 - the stream's own errors (EOFError, zlib.error, TarError, ...)
        error = exc
    if decoder is None:
        yield StreamRead(None, "empty file", 0, error=error)
        return
    pieces.append(decoder.decode(b"", final=True))
    note = f"{dropped} NUL byte(s) dropped; the rest read as text" if dropped else None
    out = StreamRead("".join(pieces), None, size, capped, error, note)
    del pieces
    bad = _not_text(out.text, codec)
    if bad:
        yield StreamRead(None, bad, size, capped, error)
        return
    if first and out.text.startswith("\ufeff"):
        out.text = out.text[1:]
    yield out  # its text is the only reference: the reader drops it once split into lines


SMALL = _SAMPLE  # bytes: a file this small is read whole in one call and judged on all of it (read_whole)


def read_whole(data: bytes, cap: int | None = None, piece: int | None = None, piece_lines: int = PIECE_LINES) -> Iterator[StreamRead]:
    """read_pieces' answer for a file whose bytes were read whole (sources/loose.py reads a small regular file with
    one os.read): decoded with one C call, no stream, decoder or piece machinery. Data over SMALL bytes, or over
    the cap, goes through read_pieces, so every answer is read_pieces' own: a file of at most SMALL bytes is
    judged on all of it there too, and is one piece (fewer than PIECE_LINES lines; CHUNK and PIECE_BYTES are
    bigger; where they are not, read_pieces reads it)."""
    size = len(data)
    # one read's worth, judged whole, and surely one piece (a character or a line takes a byte at least)
    if size > min(SMALL, CHUNK) or (cap is not None and size > cap) or (piece is not None and size >= min(piece, piece_lines)):
        import io

        yield from read_pieces(io.BytesIO(data), cap, piece, piece_lines)
        return
    if not size:
        yield StreamRead(None, "empty file", 0)
        return
    codec, bom, drop_nuls, why = _judge(data)
    if codec is None:
        yield StreamRead(None, why, size)
        return
    if bom:
        data = data[bom:]
    dropped = 0
    if drop_nuls and b"\x00" in data:
        dropped = data.count(0)
        data = data.replace(b"\x00", b"")
    text = data.decode(codec, "replace")
    del data
    bad = _not_text(text, codec)
    if bad:
        yield StreamRead(None, bad, size)
        return
    if text.startswith("\ufeff"):
        text = text[1:]
    yield StreamRead(text, None, size, note=f"{dropped} NUL byte(s) dropped; the rest read as text" if dropped else None)


def _not_text(text: str, codec: str) -> str | None:
    """Why a decoded piece is not text (too many undecodable bytes), or None."""
    if text.count("\ufffd") > max(16, len(text) // 50):
        what = "UTF-8" if codec == "utf-8" else codec.upper()
        return f"binary file (not {what} text)"
    return None


class FencedLines(list):
    """Lines of a Markdown paste whose code fences were blanked, and where each fenced block closed (the index of the
    first line after its content): a command pasted inside a block has its output end there, and what follows is the
    paste's own text."""

    closing_fences: tuple[int, ...] = ()
    opening_fences: tuple[int, ...] = ()  # the index of each block's first content line


def _is_gt_prompt(line: str) -> bool:
    """`> kubectl get pods`: a `>` prompt before a command gpusleuth knows, not a Markdown quote."""
    words = _QUOTE.sub("", line, count=1).split(None, 2)
    if words and words[0] == "sudo":
        words = words[1:]
    return bool(words) and words[0].rsplit("/", 1)[-1] in _KNOWN_PROGRAMS


# What a paste carries from where it was copied: a web page's escaped markup, a word processor's typographic quotes,
# a wiki's block markers. Undone for a whole text under BIG_TEXT only (a paste), never for a collected log.
_ENTITIES = {"&quot;": '"', "&#34;": '"', "&#39;": "'", "&#x27;": "'", "&apos;": "'", "&lt;": "<", "&gt;": ">", "&amp;": "&"}
_ENTITY = re.compile("|".join(map(re.escape, _ENTITIES)))
_ESCAPED_MARKUP = re.compile(r"&(?:quot|lt|gt|apos|#39|#34|#x27);")  # `&amp;` alone is a URL's, not escaped markup
_TYPOGRAPHIC = re.compile("[\u2018\u2019\u201c\u201d]")
_PLAIN_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})
_WIKI_BLOCK = re.compile(r"^\s*\{(?:noformat|code(?::[^}]*)?)\}\s*$")  # Jira / Confluence
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")  # terminal colours, cursor moves, titles
_INVISIBLE = str.maketrans({"\u00a0": " ", "\u200b": None, "\u200c": None, "\u200d": None, "\u2060": None, "\ufeff": None})
_NUMBERED = re.compile(r"^ *(\d{1,7})(?:\t| {1,2}| ?[|:] ?|$)")  # `cat -n`, an editor's or a viewer's line numbers
_INFO_STRING = re.compile(r"^\s*[\w+.#-]*\s*$")  # what may follow a fence that opens a block: a language, or nothing


def _unfence(lines: list[str], wiki: bool) -> FencedLines:
    """Fence lines blanked, a chat paste's fences on its content lines cut off (```first line ... last line```),
    and where each block closed: the index of the first line after its content."""
    out, opens, closes, inside = FencedLines(), [], [], False
    for i, ln in enumerate(lines):
        m = _FENCE.match(ln)
        if (m is not None and _INFO_STRING.match(ln[m.end():])) or (m is None and wiki and _WIKI_BLOCK.match(ln)):
            out.append("")
            (closes.append(i) if inside else opens.append(i + 1))
            inside = not inside
            continue
        if m is not None:
            rest = ln[m.end():]
            body = rest.rstrip()
            if not inside and body.endswith(m.group(1)):  # ```one line``` opens and closes its block
                out.append(body[:-3].rstrip(" \t"))
                continue
            out.append(rest)
            (closes.append(i + 1) if inside else opens.append(i))
            inside = not inside
            continue
        if inside and ln.rstrip().endswith(("```", "~~~")):  # the block closes at the end of its last line
            out.append(ln.rstrip()[:-3].rstrip(" \t"))
            closes.append(i + 1)
            inside = False
            continue
        out.append(ln)
    out.closing_fences, out.opening_fences = tuple(closes), tuple(opens)
    return out


def _unnumbered(lines: list[str]) -> list[str] | None:
    """The lines without the numbers a viewer put before them (`cat -n`, an editor): every line that is not empty is
    numbered, and the numbers count up one by one."""
    out, want = [], None
    for ln in lines:
        if not ln:
            out.append(ln)
            continue
        m = _NUMBERED.match(ln)
        if m is None or (want is not None and int(m.group(1)) != want):
            return None
        want = int(m.group(1)) + 1
        out.append(ln[m.end():])
    return out if want is not None and len(out) >= 2 else None


def normalise(text: str, paste: bool = True) -> tuple[list[str], list[str]]:
    """Lines with CRLF, Markdown quoting and code fences undone; and notes on what was cut.

    Each undoing is one pass over the lines, made only when the text has what it undoes (a quote marker at a
    line start, a fence, an overlong line, a tab): a plain log is split and left alone. A whole text under BIG_TEXT
    (``paste``: not a piece of a bigger file) also loses what copying it from a web page, a chat or a wiki added:
    escaped markup, typographic quotes, wiki block markers, fences on its content lines, an indentation every line
    shares."""
    notes: list[str] = []
    if "\x1b" in text:  # a cursor moved forward (an init script's `\e[60G[  OK  ]`) was a gap on the screen
        text = _ANSI.sub(lambda m: " " if m.group(0)[-1] in "CG" else "", text)
    paste = paste and len(text) < BIG_TEXT
    if paste and "&" in text and _ESCAPED_MARKUP.search(text):
        text = _ENTITY.sub(lambda m: _ENTITIES[m.group(0)], text)
    if paste and not text.isascii():
        text = text.translate(_INVISIBLE)
        if _TYPOGRAPHIC.search(text):
            text = text.translate(_PLAIN_QUOTES)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if paste and _NUMBERED.match(next((ln for ln in lines if ln.strip()), "")) and (bare := _unnumbered(lines)):
        lines, text = bare, "\n".join(bare)  # before quotes and fences: `  12\t```` is a fence; the tests below read text
    if ">" in text and (_QUOTE.match(text) or _QUOTE_AFTER_NEWLINE.search(text)):
        nonblank = sum(1 for ln in lines if ln.strip())
        if sum(1 for ln in lines if _QUOTE.match(ln)) >= 0.6 * nonblank:
            lines = [_QUOTE.sub("", ln, count=1) for ln in lines]
        else:  # a comment quoting a few log lines among its prose; `> kubectl ...` is a prompt, kept as written
            lines = [_QUOTE.sub("", ln, count=1) if _QUOTE.match(ln) and not _is_gt_prompt(ln) else ln for ln in lines]
    closes: tuple[int, ...] = ()
    opens: tuple[int, ...] = ()
    wiki = paste and "{" in text and ("{noformat}" in text or "{code" in text)
    if ("`" in text and "```" in text) or ("~" in text and "~~~" in text) or wiki:  # one character first: a memchr scan
        lines = _unfence(lines, wiki)
        closes, opens = lines.closing_fences, lines.opening_fences
    if max(map(len, lines), default=0) > MAX_LINE:
        cut = sum(1 for ln in lines if len(ln) > MAX_LINE and not _json_line(ln))
        lines = [ln if len(ln) <= MAX_LINE or _json_line(ln) else ln[:MAX_LINE] for ln in lines]
        if cut:
            notes.append(f"{cut} line(s) longer than {MAX_LINE} characters were cut")
    if "\t" in text:
        lines = [ln.expandtabs(8) if "\t" in ln and not ln.lstrip().startswith(("{", "[")) else ln for ln in lines]
    if paste and (" \n" in text or "\t\n" in text or text.endswith((" ", "\t"))):
        lines = [ln.rstrip(" \t") for ln in lines]
    if paste and next((ln for ln in lines if ln.strip()), "").startswith(" "):
        common = min(len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.strip())
        if common:  # an indented code block, or a paste indented as a whole: the shared indentation is not the text's
            lines = [ln[common:] for ln in lines]
    if closes or opens:
        lines = FencedLines(lines)
        lines.closing_fences, lines.opening_fences = closes, opens
    return lines, notes


# ---- big text kept as bytes ---------------------------------------------------------------------------------------
#
# A big piece of text (a log of millions of lines) is not split into a string per line: its lines are kept as the
# UTF-8 bytes of the text and decoded a block at a time when something reads them. The scan that picks the lines a
# big log keeps (facts/logs.py kept_rows) runs over those bytes, so only the lines it keeps, and the few the parser
# and sniffers look at, ever become strings.

BIG_TEXT = 1 << 20  # characters: text at least this long, of more than 20,000 lines, is kept as bytes (ByteLines)
BIG_LINES = 20_000  # parsers/logs.py KEEP_ALL_LINES: a log of fewer lines is parsed whole, line by line anyway
_BLOCK = 16_384  # bytes decoded at a time when a line is read: a random read costs the decoding of one block
_CACHED_BLOCKS = 64
# a quote marker at the start of the text or of a line (normalise's test for a Markdown quote, in bytes)
_QUOTE_BYTES = re.compile(rb"(?:\A|\n) {0,3}>")


class ByteLines(Sequence):
    """The lines of a big text as normalise() gives them (split at newlines, a last empty line dropped, tabs
    expanded), held as its UTF-8 bytes and decoded one block of ~16 KiB at a time when read. Made only by
    byte_lines(), for text where normalise() changes nothing but tabs. ``data``: the bytes, lines joined by
    newlines, which the scans of facts/logs.py and parsers/logs.py read directly; the lines end at ``size`` (a
    last newline is not an empty line, as in normalise())."""

    __slots__ = ("data", "size", "tabs", "_starts", "_firsts", "_n", "_cache", "_last")

    def __init__(self, data: bytes, tabs: bool | None = None, size: int | None = None):
        self.data = data
        if size is None:
            size = len(data) - 1 if data.endswith(b"\n") else len(data)
        self.size = size
        self.tabs = b"\t" in data if tabs is None else tabs
        starts, firsts, pos, line, find, count = [0], [0], 0, 0, data.find, data.count
        while (cut := find(b"\n", pos + _BLOCK, size)) >= 0:
            line += count(b"\n", pos, cut) + 1
            pos = cut + 1
            starts.append(pos)
            firsts.append(line)
        self._starts, self._firsts = starts, firsts
        self._n = line + count(b"\n", pos, size) + 1
        self._cache: dict[int, list[str]] = {}
        self._last: tuple[int, int, list[str]] = (0, 0, [])  # (first line, end line, lines) of the block read last

    def __len__(self) -> int:
        return self._n

    def _block(self, k: int) -> list[str]:
        got = self._cache.get(k)
        if got is None:
            if len(self._cache) >= _CACHED_BLOCKS:
                del self._cache[next(iter(self._cache))]
            got = self._cache[k] = self._decode(k)
        return got

    def _decode(self, k: int) -> list[str]:
        starts = self._starts
        end = starts[k + 1] - 1 if k + 1 < len(starts) else self.size
        lines = self.data[starts[k]:end].decode("utf-8").split("\n")
        if self.tabs:
            lines = [_expand(ln) if "\t" in ln else ln for ln in lines]
        return lines

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if step != 1:
                return tuple(self[j] for j in range(start, stop, step))
            if stop <= start:
                return ()
            if start == 0 and stop == self._n:
                return self
            a = self.offset(start)
            b = self.offset(stop) - 1 if stop < self._n else self.size
            return ByteLines(self.data[a:b], self.tabs, b - a)
        lo, hi, block = self._last
        if lo <= i < hi:  # most reads are of lines near the last one read
            return block[i - lo]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("line index out of range")
        k = bisect_right(self._firsts, i) - 1
        block = self._block(k)
        lo = self._firsts[k]
        self._last = (lo, lo + len(block), block)
        return block[i - lo]

    def block(self, i: int) -> tuple[int, int, list[str]]:
        """(first line, end line, lines) of the block that holds line i: a walk over neighbouring lines reads them
        from the list instead of one __getitem__ call each."""
        self[i]
        return self._last

    def offset(self, i: int) -> int:
        """The byte offset where line i starts."""
        k = bisect_right(self._firsts, i) - 1
        pos, find = self._starts[k], self.data.find
        for _ in range(i - self._firsts[k]):
            pos = find(b"\n", pos) + 1
        return pos

    def __iter__(self) -> Iterator[str]:
        for k in range(len(self._starts)):
            got = self._cache.get(k)
            yield from got if got is not None else self._decode(k)

    def __eq__(self, other) -> bool:
        if isinstance(other, ByteLines):
            return self._n == other._n and memoryview(self.data)[:self.size] == memoryview(other.data)[:other.size]
        if isinstance(other, (tuple, list)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:  # as the tuple of its lines hashes, since it equals that tuple
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"ByteLines({self._n} lines, {len(self.data)} bytes)"


def _expand(line: str) -> str:
    """A line with tabs as normalise() leaves it: expanded, unless it is JSON."""
    return line if line.lstrip().startswith(("{", "[")) else line.expandtabs(8)


def byte_lines(text: str, piece: bool = False) -> ByteLines | None:
    """text's lines as ByteLines when text is big (BIG_TEXT characters and BIG_LINES lines; any piece of a huge
    file, which the log parser reads in part whatever its lines) and normalise() would change nothing in it but
    tabs (no carriage return, terminal escape, Markdown quote, code fence or overlong line), else None. The checks are scans at C
    speed over the text; the bytes are the text's UTF-8 (undecodable input was already replaced when it was
    decoded)."""
    if len(text) < (1 if piece else BIG_TEXT) or "\r" in text or "\x1b" in text or not (piece or text.count("\n") >= BIG_LINES):
        return None
    if _holds(text, "```") or _holds(text, "~~~"):
        return None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: no valid UTF-8 for the scans
        return None
    del text
    if b">" in data and _quoted(data):
        return None
    # no line over MAX_LINE characters: every window of MAX_LINE // 2 bytes holds a newline (a line of more than
    # MAX_LINE bytes would cover a whole window; characters are never more than bytes)
    find, step = data.find, MAX_LINE // 2
    for at in range(0, len(data) - step + 1, step):
        if find(b"\n", at, at + step) < 0:
            return None
    return ByteLines(data)


def _holds(text: str, run: str) -> bool:
    """Whether text holds run (three times one character), found from that character's occurrences: a search
    for the run itself crawls over a text where the character is common."""
    find, c, pos, seen = text.find, run[0], text.find(run[0]), 0
    while pos >= 0:
        if text.startswith(run, pos):
            return True
        seen += 1
        if seen > 10_000:  # the character everywhere: the substring search instead
            return run in text
        pos = find(c, pos + 1)
    return False


def _quoted(data: bytes) -> bool:
    """Whether a line of data starts with a Markdown quote marker (up to three spaces, then `>`), found from the
    `>` characters (a regex would try every line start)."""
    find, pos, seen = data.find, data.find(b">"), 0
    while pos >= 0:
        j = pos
        while j > 0 and pos - j < 3 and data[j - 1] == 32:
            j -= 1
        if j == 0 or data[j - 1] == 10:
            return True
        seen += 1
        if seen > 10_000:  # a text full of `>`: one regex pass instead
            return _QUOTE_BYTES.search(data) is not None
        pos = find(b">", pos + 1)
    return False


def frozen(lines) -> "tuple[str, ...] | ByteLines":
    """lines as a Document holds them: ByteLines as they are, anything else as a tuple."""
    return lines if isinstance(lines, ByteLines) else tuple(lines)


# Where a _PROMPT match can be in UTF-8 bytes: a prompt character, space, maybe `sudo` and its flags, then a known
# program (its path before it), then space or the line's end. Any byte of a multi-byte character counts as a space
# or a path's character, so this finds every line _PROMPT takes and a few more (each is tried with _PROMPT alone);
# one pattern per prompt character, each starting with its literal, so that the regex engine scans for it.
_BYTES_SPACE = rb"[\t\x0b\x0c\x1c-\x1f \x80-\xff]"
_PROMPT_MARKS_BYTES = {c: re.compile(
    re.escape(c).encode() + _BYTES_SPACE + rb"+(?:sudo" + _BYTES_SPACE + rb"+(?:-[^\s]+" + _BYTES_SPACE + rb"+)*)?(?:\S*/)?(?:"
    + "|".join(sorted(map(re.escape, _KNOWN_PROGRAMS), key=lambda p: (-len(p), p))).encode() + rb")(?:" + _BYTES_SPACE + rb"|\n|\Z)")
    for c in "#$%>"}


def _prompt_candidates(lines: list[str]) -> Iterator[int]:
    """Indexes of the lines that can hold a shell prompt, in order: those with a prompt character followed by a
    space. A few scans of the joined text find them, instead of trying _PROMPT on every line of a big log."""
    if isinstance(lines, ByteLines):
        yield from _prompt_candidates_bytes(lines)
        return
    text = "\n".join(lines)
    if text.count("\n") != len(lines) - 1:  # a line with a newline of its own: no joined-text shortcut
        yield from range(len(lines))
        return
    marks = sorted({m.start() for c, rx in _PROMPT_MARKS.items() if c in text for m in rx.finditer(text)})
    line, pos, last = 0, 0, -1
    for at in marks:
        line += text.count("\n", pos, at)
        pos = at
        if line != last:
            yield line
            last = line


def _prompt_candidates_bytes(lines: ByteLines) -> Iterator[int]:
    """_prompt_candidates over ByteLines' bytes; of them only the lines that can be a prompt split_documents takes
    (each decoded alone: the blocks around are not), so that a log full of `# ` comments is not decoded whole."""
    data, tabs = lines.data, lines.tabs
    find, rfind, count = data.find, data.rfind, data.count
    marks = [m.start() for c, rx in _PROMPT_MARKS_BYTES.items() if c.encode() in data for m in rx.finditer(data)]
    marks.sort()  # one character a position: no two marks at one offset
    line, pos, end = 0, 0, -1
    for at in marks:
        if at < end:  # a further mark in a line already looked at
            continue
        start = rfind(b"\n", 0, at) + 1
        end = find(b"\n", at)
        if end < 0:
            end = len(data)
        ln = data[start:end].decode("utf-8")
        if tabs and "\t" in ln:
            ln = _expand(ln)
        if _prompt_line(ln) is not None:  # lines are counted up to the prompts only
            line += count(b"\n", pos, start)
            pos = start
            yield line


def _prompt_line(ln: str) -> re.Match | None:
    """_PROMPT's match when ln is a shell prompt before a command we know how to read the output of."""
    if len(ln) > 600 or not ln or ln[0] not in " [$#%>PABCDEFGHIJKLMNOQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-":
        return None
    m = _PROMPT.match(ln)
    if not m or m.group("prog").rsplit("/", 1)[-1] not in _KNOWN_PROGRAMS:
        return None
    return m


_BARE_STARTS = ("\nkubectl ", "\nk ", "\noc ", "\ncat ", "\nsudo cat ")
# below the first line a sentence may open with a command's words ("kubectl describe node shows ... Allocatable.")
_SENTENCE_END = (".", ",", ";", "!", "?")


def _first_lines(lines: list[str]) -> list[int]:
    """The first non-blank line of the text and of each fenced block."""
    starts = [0, *getattr(lines, "opening_fences", ())]
    return [i for i in (next((j for j in range(s, len(lines)) if lines[j].strip()), None) for s in starts) if i is not None]


def _bare_candidates(lines: list[str], firsts: set[int]) -> list[int]:
    """Lines that may hold a command pasted without its prompt: the first line of the text and of each fenced block
    (``firsts``), and any line that starts with `kubectl `, `k `, `oc `, `cat ` or `sudo cat ` (literal scans of the
    joined text, or of a big text's bytes)."""
    out = set(firsts)
    text: str | bytes = lines.data if isinstance(lines, ByteLines) else "\n".join(lines)
    nl = b"\n" if isinstance(text, bytes) else "\n"
    found = []
    for needle in _BARE_STARTS:
        needle = needle.encode() if isinstance(text, bytes) else needle
        at = text.find(needle)
        while at >= 0:
            found.append(at)
            at = text.find(needle, at + 1)
    line, pos = 0, 0
    for at in sorted(found):  # newlines counted once, between one find and the next
        line += text.count(nl, pos, at)
        pos = at
        out.add(line + 1)
    return sorted(out)


def split_documents(artifact: str, lines: list[str], meta: dict | None = None) -> list[Document]:
    """One Document per command output and per fenced block in a paste, or the whole file when it has neither."""
    cuts: list[tuple[int, str, str | None]] = []
    for i in _prompt_candidates(lines):
        ln = lines[i]
        m = _prompt_line(ln)
        if m is None:
            continue
        cmd = m.group("cmd").strip()
        if cmd.startswith("sudo"):
            cmd = re.sub(r"^sudo\s+(?:-\S+\s+)*", "", cmd)
        if ln.lstrip().startswith("#") and _APPLIED_WITH.match(cmd):
            continue
        cat = _CAT.match(cmd)
        cuts.append((i, cmd, cat.group("path") if cat else None))
    # a command pasted without its prompt, alone on its line (a reading kubectl verb, or `cat` of an absolute path)
    prompted, firsts = {c[0] for c in cuts}, set(_first_lines(lines))
    for i in _bare_candidates(lines, firsts):
        if i not in prompted and (bare := _BARE_FIRST.match(lines[i])) and (i in firsts or not lines[i].rstrip().endswith(_SENTENCE_END)):
            cmd = bare.group("cmd").strip()
            cuts.append((i, cmd, cat.group("path") if (cat := _CAT.match(cmd)) else None))
            prompted.add(i)
    meta = meta or {}
    # A fenced block is an artifact of its own: its content is cut from the sentences around it, and a command's
    # output ends where the block it was pasted in closes. (A block opened right under a command holds its output.)
    blocks = [(x, x, None, None) for x in (*getattr(lines, "opening_fences", ()), *getattr(lines, "closing_fences", ()))]
    marks = sorted([(i, i + 1, cmd, path) for i, cmd, path in cuts] + blocks, key=lambda m: (m[0], m[1]))
    if not marks:
        return [Document(artifact, frozen(lines), 1, meta=meta)]
    docs: list[Document] = []

    def segment(start: int, end: int, cmd: str | None, path: str | None) -> None:
        body = lines[start:end]
        if any(ln.strip() for ln in body) or (cmd is not None and _SETS_VALUES.match(cmd)):
            # a `helm install ... --set ...` pasted alone is itself the config: keep it without output
            docs.append(Document(artifact, frozen(body), start + 1, command=cmd, path_hint=path, meta=meta))

    start, cmd, path = 0, None, None
    for end, next_start, next_cmd, next_path in marks:
        if next_cmd is None and cmd is not None and end >= start and not any(ln.strip() for ln in lines[start:end]):
            continue  # the block that opens under a command holds that command's output
        segment(start, end, cmd, path)
        start, cmd, path = next_start, next_cmd, next_path
    segment(start, len(lines), cmd, path)
    return docs
