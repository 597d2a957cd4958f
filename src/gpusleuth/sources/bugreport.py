"""nvidia-bug-report.log: one file of ~100 sections; the ones a parser can read become Documents.

Every section starts after a line of underscores. Its header says what follows: ``*** /proc/modules``
(a file, then an optional ``*** ls:`` metadata line), ``/usr/bin/nvidia-smi --query`` (a command),
``dmesg:``. Kept sections (knowledge/live.toml [bugreport]) keep their line numbers in the report and get
the path or command as provenance, so the kernel log reaches the log parser and ``nvidia-smi -q`` the
nvidia-smi parser. The rest (Xorg, ACPI dumps, base64 blobs) is not evidence gpusleuth uses.
"""

from __future__ import annotations

import re
from functools import cache

from gpusleuth.knowledge import table
from gpusleuth.model.document import Document

_SEPARATOR = SEPARATOR = "_" * 44
_FILE = re.compile(r"^\*\*\* (?P<path>/\S+)$")
_PROLOGUE = "Start of NVIDIA bug report log file"


@cache
def _keep() -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in table("live")["bugreport"]["keep"]))


def is_bug_report(lines: list[str]) -> bool:
    return any(_PROLOGUE in ln for ln in lines[:12])


def split(artifact: str, lines: list[str], meta: dict | None = None) -> list[Document]:
    docs: list[Document] = []
    starts = [i for i, ln in enumerate(lines) if ln.strip() == _SEPARATOR]
    for n, sep in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        head = sep + 1
        while head < end and not lines[head].strip():
            head += 1
        if head >= end or not _keep().search(lines[head].strip()):
            continue
        header = lines[head].strip()
        body = head + 1
        while body < end and (lines[body].startswith("*** ls:") or not lines[body].strip()):
            body += 1
        m = _FILE.match(header)
        if m:
            command, path = f"cat {m.group('path')}", m.group("path")
        elif header.endswith(":"):
            command, path = (header[:-1] if header == "dmesg:" else None), None
        else:
            first, _, rest = header.partition(" ")
            command, path = (first.rsplit("/", 1)[-1] + (" " + rest if rest else "")), None
        chunk = lines[body:end]
        while chunk and not chunk[-1].strip():
            chunk.pop()
        if any(ln.strip() for ln in chunk):
            docs.append(Document(artifact, tuple(chunk), body + 1, command=command, path_hint=path, meta=dict(meta or {}, section=header)))
    return docs


def last_section(lines: list[str]) -> str | None:
    """The header of the last section these lines start (None: they start none), so that the next piece of a
    huge bug report knows whether its first lines belong to a section that is kept."""
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip() == _SEPARATOR:
            return next((ln.strip() for ln in lines[i + 1:] if ln.strip()), "")
    return None


def kept(header: str) -> bool:
    return bool(header) and bool(_keep().search(header))


def first_separator(lines: list[str]) -> int:
    """The index of the first section separator in these lines (their count when there is none)."""
    return next((i for i, ln in enumerate(lines) if ln.strip() == _SEPARATOR), len(lines))
