"""Bytes to Documents: decode, undo what pasting did, split a paste at its shell prompts.

Every transformation keeps the line count, so evidence line numbers match the file the user has.
"""

from __future__ import annotations

import codecs
import re
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
# A paste that opens with the command itself, no prompt (`k logs -n gpu-operator nvidia-driver-…`): only a
# reading kubectl verb on the first non-blank line counts, so a log or config is never cut by accident.
_BARE_FIRST = re.compile(r"^\s*(?P<cmd>(?:kubectl|k|oc)\s+(?:get|describe|logs|events|top)\b.*)$")
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


def _not_text(text: str, codec: str) -> str | None:
    """Why a decoded piece is not text (too many undecodable bytes), or None."""
    if text.count("\ufffd") > max(16, len(text) // 50):
        what = "UTF-8" if codec == "utf-8" else codec.upper()
        return f"binary file (not {what} text)"
    return None


def normalise(text: str) -> tuple[list[str], list[str]]:
    """Lines with CRLF, Markdown quoting and code fences undone; and notes on what was cut.

    Each undoing is one pass over the lines, made only when the text has what it undoes (a quote marker at a
    line start, a fence, an overlong line, a tab): a plain log is split and left alone."""
    notes: list[str] = []
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if ">" in text and (_QUOTE.match(text) or _QUOTE_AFTER_NEWLINE.search(text)):
        nonblank = sum(1 for ln in lines if ln.strip())
        if sum(1 for ln in lines if _QUOTE.match(ln)) >= 0.6 * nonblank:
            lines = [_QUOTE.sub("", ln, count=1) for ln in lines]
    if ("`" in text and "```" in text) or ("~" in text and "~~~" in text):  # one character first: a memchr scan
        lines = ["" if _FENCE.match(ln) else ln for ln in lines]
    if max(map(len, lines), default=0) > MAX_LINE:
        cut = sum(1 for ln in lines if len(ln) > MAX_LINE and not _json_line(ln))
        lines = [ln if len(ln) <= MAX_LINE or _json_line(ln) else ln[:MAX_LINE] for ln in lines]
        if cut:
            notes.append(f"{cut} line(s) longer than {MAX_LINE} characters were cut")
    if "\t" in text:
        lines = [ln.expandtabs(8) if "\t" in ln and not ln.lstrip().startswith(("{", "[")) else ln for ln in lines]
    return lines, notes


def _prompt_candidates(lines: list[str]) -> Iterator[int]:
    """Indexes of the lines that can hold a shell prompt, in order: those with a prompt character followed by a
    space. A few scans of the joined text find them, instead of trying _PROMPT on every line of a big log."""
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


def split_documents(artifact: str, lines: list[str], meta: dict | None = None) -> list[Document]:
    """One Document per command output in a paste, or the whole file when it has no prompts."""
    cuts: list[tuple[int, str, str | None]] = []
    for i in _prompt_candidates(lines):
        ln = lines[i]
        if len(ln) > 600 or not ln or ln[0] not in " [$#%>PABCDEFGHIJKLMNOQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-":
            continue
        m = _PROMPT.match(ln)
        if not m:
            continue
        prog = m.group("prog").rsplit("/", 1)[-1]
        if prog not in _KNOWN_PROGRAMS:
            continue
        cmd = m.group("cmd").strip()
        if cmd.startswith("sudo"):
            cmd = re.sub(r"^sudo\s+(?:-\S+\s+)*", "", cmd)
        if ln.lstrip().startswith("#") and _APPLIED_WITH.match(cmd):
            continue
        cat = _CAT.match(cmd)
        cuts.append((i, cmd, cat.group("path") if cat else None))
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is not None and (not cuts or cuts[0][0] > first) and (bare := _BARE_FIRST.match(lines[first])):
        cuts.insert(0, (first, bare.group("cmd").strip(), None))
    meta = meta or {}
    if not cuts:
        return [Document(artifact, tuple(lines), 1, meta=meta)]
    docs = []
    if any(ln.strip() for ln in lines[: cuts[0][0]]):
        docs.append(Document(artifact, tuple(lines[: cuts[0][0]]), 1, meta=meta))
    for n, (i, cmd, path) in enumerate(cuts):
        end = cuts[n + 1][0] if n + 1 < len(cuts) else len(lines)
        body = lines[i + 1 : end]
        if any(ln.strip() for ln in body) or _SETS_VALUES.match(cmd):
            # a `helm install ... --set ...` pasted alone is itself the config: keep it without output
            docs.append(Document(artifact, tuple(body), i + 2, command=cmd, path_hint=path, meta=meta))
    return docs
