"""Prose: the sentences of a ticket, read for the facts and symptoms people state (knowledge/phrases.toml).

A document no parser claims is read twice: as a plain-text log (parsers/logs.py parse_text: its error lines and
quoted messages count) and here, as prose. A Markdown issue body that a parser did claim gives its prose lines
too (lines that read as sentences or bullet items, never a log or YAML line). Lines keep their numbers: every
stated fact and described symptom cites the line its sentence starts on.

A wrapped sentence ("... shows the pods running with the\\n(default) runtime.") is matched as one: the lines
of a paragraph are joined (a space between them, a sentence break before a bullet item) and each match is
mapped back to the line it starts on.

What this module gives is what a person *said*, never what a program printed: facts/prose.py keeps it apart
from machine-read facts, and every finding built on it says "stated" and carries low confidence.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cache

from gpusleuth.knowledge import table
from gpusleuth.model.document import Document
from gpusleuth.model.evidence import Evidence

_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+(?:\[[ xX]\]\s*)?")
_MARKUP = re.compile(r"\*\*|__|`|^#{1,6}\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]+")
# Lines a program printed: timestamps, klog/logrus heads, JSON, key=value runs, table rows, YAML keys.
_MACHINE = re.compile(
    r"^\s*(?:\d{4}-\d\d-\d\d[T ]|\[\s*\d+\.\d+\]|[IWEF]\d{4} |time=\"|level=|\{|\[\{|[A-Z][a-z]{2} [ \d]\d \d\d:|"
    r"[\w./-]+:\s*$|[\w.-]+=\S+\s+[\w.-]+=|NAME\s{2,}|\S+\s{3,}\S+\s{3,}\S+|[│|+]-{3,}|Command '[^']+' not found|"
    r"[\w.-]+: (?:command not found|error while loading shared libraries))"
)
_YAML_KEY = re.compile(r"^\s*[\w.\-\"/]+:\s+\S")  # keys may hold a slash: nvidia.com/gpu, app.kubernetes.io/name
_KEY_ONE_VALUE = re.compile(r"^[\w.\-\"/]+:\s+(?:\S+|\"[^\"]*\"|'[^']*')\s*$")  # `value: /var/lib/...`: one key, one token
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
_MAX_SENTENCE = 300
MAX_LINES = 3000  # a ticket is read whole up to here; beyond it a document is a log, not something a person wrote


@dataclass(frozen=True, slots=True)
class Stated:
    """A fact a person wrote: `kind` (driver, cuda, kubernetes, platform, event, ...) and its value."""

    kind: str
    value: str
    evidence: Evidence
    detail: str | None = None  # platform: the platform id; event: the [[event]] id


@dataclass(frozen=True, slots=True)
class Described:
    """A symptom a person described (a knowledge/phrases.toml [[symptom]] row matched a sentence)."""

    id: str
    layer: str
    title: str
    evidence: Evidence
    what: str | None = None  # regression rows: the change the sentence names
    event: str | None = None  # the [[event]] id that change is
    when: str | None = None  # when the sentence says the change happened ("last night", "2024-03-12", "2 days ago")


@dataclass(frozen=True, slots=True)
class ProseText:
    """What one document says in sentences."""

    artifact: str
    first_line: int
    last_line: int
    sentences: int  # lines read as prose
    stated: tuple[Stated, ...]
    described: tuple[Described, ...]
    only_prose: bool  # no parser claimed the document: it contributed only its sentences (and their error lines)


@cache
def phrases() -> dict:
    return table("phrases")


@cache
def _fact_patterns() -> tuple[tuple[str, re.Pattern], ...]:
    return tuple((row["kind"], re.compile(p, re.I)) for row in phrases()["fact"] for p in row["patterns"])


@cache
def _symptom_patterns() -> tuple[tuple[dict, re.Pattern], ...]:
    return tuple((row, re.compile(p, re.I)) for row in phrases()["symptom"] for p in row["patterns"])


@cache
def _events() -> tuple[tuple[dict, re.Pattern], ...]:
    return tuple((row, re.compile(row["words"], re.I)) for row in phrases()["event"])


@cache
def _platform_words() -> tuple[tuple[str, re.Pattern], ...]:
    out = []
    for row in table("runtimes").get("platform", ()):
        words = row.get("recognise", {}).get("words")
        if words:
            out.append((row["id"], re.compile(words, re.I)))
    return tuple(out)


def event_of(what: str) -> dict | None:
    """The [[event]] row a change's words name ("we upgraded the kernel to 5.15" -> kernel-update)."""
    return next((row for row, rx in _events() if rx.search(what)), None)


_WHEN = re.compile(
    r"\b(?:\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d(?::\d\d)?)?|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?"
    r"(?:,? \d{4})?|yesterday|today|this (?:morning|afternoon|week)|last (?:night|week|weekend|friday|monday|month)|"
    r"over the weekend|\d+ (?:minutes?|hours?|days?|weeks?) ago)\b", re.I)
_CHANGE_TAIL = re.compile(r"(?:\s+(?:from|to|on|at|in|v)\s*[\w.+~-]*\d[\w.+~-]*){0,3}")


def _trim_change(what: str) -> str:
    """The change a sentence names, up to the thing changed and its versions ("upgrading the GPU operator to
    24.3.0"), without the rest of the clause ("... the validator pods are")."""
    for _, rx in _events():
        m = rx.search(what)
        if m:
            tail = _CHANGE_TAIL.match(what, m.end())
            return what[: tail.end() if tail else m.end()].strip(" ,;:")
    return what.strip()


# A command line (what was typed, not said): a known program first, or flags, or a continuation backslash.
_COMMAND_LINE = re.compile(
    r"^\s*[$>]\s+\S|^\s*#\s+[a-z./~]"  # a prompt (a root prompt types a command; `# [Bug]: ...`, `# Title` are headings)
    r"|^\s*(?:sudo\s+)?(?:helm3?|kubectl|k|oc|crictl|ctr|nerdctl|docker|nvidia-smi|nvidia-ctk|systemctl|journalctl|lsmod|modprobe|"
    r"modinfo|mokutil|lspci|ls|cat|grep|containerd|microk8s|k3s|rke2|k0s|snap)(?=\s)(?=.*(?:\s-{1,2}[a-zA-Z]|\s/))"  # program + flag/path
    r"|^\s*(?:sudo\s+)?helm3?\s+(?:install|upgrade|template|repo|get)\s"
    r"|(?:^|\s)--?[a-zA-Z][\w-]*(?:[= ]\S+)?\s+\\\s*$|\\\s*$"  # a flag continued on the next line
)


def _printed(line: str) -> bool:
    """A line a program printed or a command typed: never read for what a person says, even in a ticket."""
    s = line.strip()
    return bool(_MACHINE.match(s) or _COMMAND_LINE.search(s))


def is_prose_line(line: str) -> bool:
    """A sentence or a bullet item a person wrote, not a line a program printed nor a command typed."""
    s = line.strip()
    if len(s) < 12 or _MACHINE.match(s) or _COMMAND_LINE.search(s) or s.startswith("--"):
        return False
    bullet = _BULLET.match(s)
    body = s[bullet.end():] if bullet else s
    keyed = _YAML_KEY.match(body) is not None
    code = body.split(" #", 1)[0] if keyed else body  # `key: 1 # requesting 1 GPU`: the comment is not the line
    if (keyed and len(_WORD.findall(code)) < 5) or _KEY_ONE_VALUE.match(code):
        return False  # `key: value`, also as a YAML list item (`- name: CONTAINERD_CONFIG`)
    words = _WORD.findall(body)
    if len(words) < (2 if bullet else 4):
        return False
    letters = sum(len(w) for w in words)
    return letters >= 0.45 * len(body)


def fragments(doc: Document) -> list[Document]:
    """The blocks of a ticket that are not sentences (a values fragment, a command with its flags, a listing),
    each a Document of its own with its original line numbers: other parsers may read them."""
    out: list[Document] = []
    start = None
    lines = doc.lines[:MAX_LINES]
    for i, ln in enumerate((*lines, "")):
        other = bool(ln.strip()) and not is_prose_line(ln)
        if other and start is None:
            start = i
        elif not other and start is not None:
            if not ln.strip() and i < len(lines) and _continues(lines, i):
                continue  # a blank line inside a YAML block or a listing
            block = lines[start:i]
            while block and not block[-1].strip():
                block = block[:-1]
            if block:
                out.append(Document(doc.artifact, tuple(block), doc.first_line + start, meta=doc.meta))
            start = None
    return out


def _continues(lines: tuple[str, ...], i: int) -> bool:
    """Whether the block goes on after the blank line i (the next non-blank line is not a sentence and is indented
    like the block)."""
    nxt = next((ln for ln in lines[i + 1 : i + 3] if ln.strip()), None)
    return nxt is not None and not is_prose_line(nxt) and nxt[:1] in (" ", "\t", "-")


def mostly_prose(doc: Document) -> bool:
    """Whether most non-blank lines of a document are sentences (a ticket's paragraph, not a log)."""
    lines = doc.head(60)  # a ticket shows itself in its first lines; a log claimed on a loose pattern costs little
    return bool(lines) and sum(map(is_prose_line, lines)) >= 0.6 * len(lines)


def _clean(line: str) -> str:
    s = _BULLET.sub("", line, count=1)
    return _MARKUP.sub("", s).strip()


def _paragraphs(doc: Document, only_prose: bool) -> list[tuple[str, list[int], list[int]]]:
    """(joined text, start offset of each line in it, line index of each line) per paragraph."""
    out: list[tuple[str, list[int], list[int]]] = []
    text, starts, idx = "", [], []
    for i, raw in enumerate(doc.lines[:MAX_LINES]):
        keep = raw.strip() and (is_prose_line(raw) if only_prose else not _printed(raw))
        if not keep:
            if text:
                out.append((text, starts, idx))
            text, starts, idx = "", [], []
            continue
        line = _clean(raw)
        if text:
            sep = ". " if _BULLET.match(raw) or text.rstrip().endswith(":") else " "
            text += sep
        starts.append(len(text))
        idx.append(i)
        text += line
    if text:
        out.append((text, starts, idx))
    return out


def _sentence(text: str, at: int) -> str:
    """The sentence of `text` that holds offset `at`."""
    begin = 0
    for m in _SENTENCE_END.finditer(text, 0, at):
        begin = m.end()
    end_m = _SENTENCE_END.search(text, at)
    end = end_m.end() if end_m else len(text)
    s = text[begin:end].strip()
    return s if len(s) <= _MAX_SENTENCE else s[: _MAX_SENTENCE - 1] + "…"


def read(doc: Document, only_prose: bool = False) -> ProseText:
    """The facts and symptoms a document states. only_prose: read only the lines that look like sentences
    (a Markdown issue body a parser claimed); otherwise every non-blank line (a document nothing claimed)."""
    stated: dict[tuple[str, str], Stated] = {}
    described: dict[tuple[str, str | None], Described] = {}
    read_lines = 0
    for text, starts, idx in _paragraphs(doc, only_prose):
        read_lines += len(idx)

        def ev(at: int) -> Evidence:
            k = max(bisect.bisect_right(starts, at) - 1, 0)
            return doc.evidence(idx[k], _sentence(text, at))

        for kind, rx in _fact_patterns():
            for m in rx.finditer(text):
                if _sentence(text, m.start()).rstrip(". ").endswith("?"):
                    continue  # an issue template's question ("Are you running Kubernetes v1.13+?") states nothing
                value = re.sub(r"\s+", " ", m.group("value")).strip().rstrip(".,;:")
                stated.setdefault((kind, value.lower()), Stated(kind, value, ev(m.start())))
        for pid, rx in _platform_words():
            # a name inside a path (/run/k3s/containerd/...) is not the platform the sentence is about
            m = next((m for m in rx.finditer(text) if text[m.start() - 1 : m.start()] not in ("/", "-", ".")
                      and text[m.end() : m.end() + 1] not in ("/", "-")), None)
            if m:
                stated.setdefault(("platform", pid), Stated("platform", m.group(0), ev(m.start()), pid))
        for row, rx in _symptom_patterns():
            m = rx.search(text)
            if not m:
                continue
            what = m.groupdict().get("what")
            event = event_of(what) if what else None
            if row["id"] == "regression-after-change" and event is None:
                continue  # "it worked before" with no change named says nothing about a layer
            layer = row["layer"] or (event["layer"] if event else "")
            key = (row["id"], event["id"] if event else None)
            if key in described:
                continue
            e = ev(m.start())
            change = _trim_change(what) if what else None
            when = _WHEN.search(e.text) if change else None
            described[key] = Described(row["id"], layer, row["title"], e, change, event["id"] if event else None,
                                       when.group(0) if when else None)
            if event:
                stated.setdefault(("event", event["id"]), Stated("event", change, e, event["id"]))
    return ProseText(
        artifact=doc.artifact,
        first_line=doc.first_line,
        last_line=doc.first_line + len(doc.lines) - 1,
        sentences=read_lines,
        stated=tuple(stated.values()),
        described=tuple(described.values()),
        only_prose=not only_prose,
    )
