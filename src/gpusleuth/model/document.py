"""Text a parser reads, with the artifact name and original line numbers kept.

A pasted file can hold several commands' output; the source layer splits it at shell prompts into
``Document``s. Normalisation (Markdown quotes, code fences, CRLF) never changes the line count, so
``first_line + i`` is always the line a human sees in the original file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice

from gpusleuth.model.evidence import Evidence


# Document.meta keys that sources and the engine set for the parsers.
CONTINUED = "continued"  # this document's lines go on in the next Document of its artifact (a piece of a huge file)
CONTINUES = "continues"  # this document goes on from the previous Document of its artifact
KEPT_AFTER_BUDGET = "kept-after-budget"  # read after the run's budget of logs read in full (analysis/engine.py)


@dataclass(frozen=True, slots=True)
class Document:
    artifact: str  # display path of the artifact inside the source
    lines: tuple[str, ...]
    first_line: int = 1  # line number of lines[0] in the artifact
    command: str | None = None  # the shell command that printed it, when a prompt line said so
    path_hint: str | None = None  # a host path the content came from (`cat /etc/containerd/config.toml`)
    meta: dict = field(default_factory=dict, compare=False, hash=False)  # provenance from a bundle manifest

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def piece(self) -> bool:
        """Whether this is one piece of a file too big to hand on whole (sources/loose.py PIECE_BYTES)."""
        return CONTINUED in self.meta or CONTINUES in self.meta

    @property
    def name(self) -> str:
        return self.artifact.rsplit("/", 1)[-1]

    def lineno(self, index: int) -> int:
        return self.first_line + index

    def evidence(self, index: int, text: str | None = None) -> Evidence:
        return Evidence(self.artifact, self.first_line + index, (text if text is not None else self.lines[index]).strip()[:400])

    def head(self, n: int = 40) -> list[str]:
        """The first n non-blank lines: what sniffers look at (every sniffer, on every document: a C loop). The
        sniffers ask one after another about the same document, so its first _HEAD lines are found once."""
        global _last_head
        n = max(n, 1)
        doc, lines = _last_head
        if doc is not self or (n > len(lines) and len(lines) == _HEAD):
            if n > _HEAD:
                return list(islice(filter(str.strip, self.lines), n))
            lines = list(islice(filter(str.strip, self.lines), _HEAD))
            _last_head = (self, lines)
        return lines[:n]


_HEAD = 128  # lines kept of the last document's head: more than any sniffer reads
_last_head: tuple = (None, [])  # (document, its first _HEAD non-blank lines)
