"""Bytes to Documents: decode, undo what pasting did, split a paste at its shell prompts.

Every transformation keeps the line count, so evidence line numbers match the file the user has.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from gpusleuth.model.document import Document

MAX_LINE = 16_384  # longer lines are cut: a minified JSON blob still parses, a 2 GB line cannot hurt us

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
_CAT = re.compile(r"^(?:sudo\s+)?(?:cat|less|more|tail(?:\s+-\S+)*|head(?:\s+-\S+)*)\s+(?P<path>/[^\s|;&>]+)")


def decode(data: bytes) -> tuple[str | None, str | None]:
    """Text of a file, or (None, why) when it is not text a person could have pasted."""
    if not data:
        return None, "empty file"
    sample = data[:65536]
    if b"\x00" in sample:
        if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
            try:
                return data.decode("utf-16"), None
            except UnicodeDecodeError:
                pass
        return None, "binary file (NUL bytes), not text output"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        if text.count("\ufffd") > max(16, len(text) // 50):
            return None, "binary file (not UTF-8 text)"
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, None


CHUNK = 1 << 20  # bytes per read when a file is streamed
_SAMPLE = 65536  # what decide text or binary is judged on
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass
class StreamRead:
    """What reading a file as a stream gave: its text (or why not), how many bytes were read, whether a cap
    stopped the read before the end, and the error that cut it short (a truncated archive member)."""

    text: str | None
    why: str | None
    size: int
    capped: bool = False
    error: Exception | None = None


def decode_stream(fh: BinaryIO, cap: int | None = None) -> StreamRead:
    """Read a file object in chunks and decode it as it comes, as decode() would judge the whole file: the
    bytes are never held beside the text. Reads stop at ``cap`` bytes (None: the whole file); an error from
    the stream (a cut archive, a corrupt gzip member) ends the read and is returned with what came before it."""
    size, pieces, error, capped = 0, [], None, False
    decoder = None
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
            if decoder is None:
                while len(chunk) < min(_SAMPLE, want) and (more := read(min(_SAMPLE, want) - len(chunk))):
                    chunk += more  # judge on a full sample even when the stream hands out small reads
                sample = chunk[:_SAMPLE]
                if b"\x00" in sample and not sample.startswith(_UTF16_BOMS):
                    return StreamRead(None, "binary file (NUL bytes), not text output", len(chunk))
                decoder = codecs.getincrementaldecoder("utf-16" if b"\x00" in sample else "utf-8")(
                    "strict" if b"\x00" in sample else "replace")
            size += len(chunk)
            pieces.append(decoder.decode(chunk))
    except UnicodeDecodeError:
        return StreamRead(None, "binary file (NUL bytes), not text output", size)
    except Exception as exc:  # noqa: BLE001 - the stream's own errors (EOFError, zlib.error, TarError, ...)
        error = exc
    if decoder is None:
        return StreamRead(None, "empty file", 0, error=error)
    try:
        pieces.append(decoder.decode(b"", final=True))
    except UnicodeDecodeError:
        pieces.append("\ufffd")
    text = "".join(pieces)
    del pieces
    if decoder.errors == "replace" and text.count("\ufffd") > max(16, len(text) // 50):
        return StreamRead(None, "binary file (not UTF-8 text)", size, capped, error)
    if text.startswith("\ufeff"):
        text = text[1:]
    return StreamRead(text, None, size, capped, error)


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
        cut = sum(1 for ln in lines if len(ln) > MAX_LINE)
        lines = [ln[:MAX_LINE] for ln in lines]
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
        if any(ln.strip() for ln in body):
            docs.append(Document(artifact, tuple(body), i + 2, command=cmd, path_hint=path, meta=meta))
    return docs
