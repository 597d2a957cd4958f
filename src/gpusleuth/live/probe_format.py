"""The text a node probe prints: sections between marker lines, one per file or command.

    @@gpusleuth@@ begin file /etc/containerd/config.toml
    <the file, verbatim>
    @@gpusleuth@@ end 0
    @@gpusleuth@@ begin cmd lsmod.txt lsmod
    <the command's output>
    @@gpusleuth@@ end 0
    @@gpusleuth@@ absent /run/mellanox/drivers/.driver-ready
    @@gpusleuth@@ done

`end` carries the exit status. The probe prints a newline before every `end` marker, so exactly one
trailing empty line is removed from a section: a file with or without a final newline comes back as it
was. A missing `done` means the probe was cut short; a section without `end` is marked truncated.
Both the probe script and ``serve`` (emulating probes) write this; the collector reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MARK = "@@gpusleuth@@"


@dataclass
class Section:
    kind: str  # file | cmd | proc | other
    ref: str  # the host path (file, proc), or the artifact file name (cmd, other)
    command: str | None  # for cmd: the command line; for proc: the process's command line
    lines: list[str] = field(default_factory=list)
    rc: int | None = None  # None: the section was cut short


@dataclass
class ProbeOutput:
    sections: list[Section]
    absent: list[str]
    complete: bool


def parse(text: str) -> ProbeOutput:
    sections: list[Section] = []
    absent: list[str] = []
    complete = False
    current: Section | None = None
    for line in text.split("\n"):
        if not line.startswith(MARK):
            if current is not None:
                current.lines.append(line)
            continue
        parts = line[len(MARK):].strip().split(" ", 3)
        word = parts[0] if parts else ""
        if word == "begin" and len(parts) >= 3:
            current = Section(parts[1], parts[2], parts[3] if len(parts) > 3 else None)
            sections.append(current)
        elif word == "end" and current is not None:
            if current.lines and current.lines[-1] == "":
                current.lines.pop()
            try:
                current.rc = int(parts[1]) if len(parts) > 1 else 0
            except ValueError:
                current.rc = None
            current = None
        elif word == "absent" and len(parts) > 1:
            absent.append(" ".join(parts[1:]))
        elif word == "done":
            complete = True
    return ProbeOutput(sections, absent, complete)


def render(sections: list[Section], absent: list[str] = ()) -> str:
    """What a probe that found these sections would have printed."""
    out: list[str] = []
    for s in sections:
        out.append(f"{MARK} begin {s.kind} {s.ref}" + (f" {s.command}" if s.command else ""))
        out.extend(s.lines)
        out.append("")
        out.append(f"{MARK} end {0 if s.rc is None else s.rc}")
    out.extend(f"{MARK} absent {p}" for p in absent)
    out.append(f"{MARK} done")
    return "\n".join(out) + "\n"
