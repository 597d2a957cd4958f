"""What a parser is: a pure function from a Document to model objects, and a sniffer that says how sure
it is that a Document is its format. File names are hints; content decides.

Every sniffer runs on every document, a 64 MiB log included (except, on a stamped `kubectl logs` document, those
parsers/dispatch.py proves cannot outbid the log sniffer there: a sniffer that learns to claim such a document
must leave that list), so a sniffer's cost must not grow with the document: it reads the head (``doc.head(n)``, ``doc.lines[:n]``), stops at the first line that decides, or
scans the whole text only at C speed (a substring test on ``"\\n".join(lines)``, ``map`` of a compiled
pattern) before any per-line Python work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from gpusleuth.model.document import Document

# Sniff scores: how sure a parser is that a document is its format.
NO = 0
WEAK = 20  # a file-name hint or a loose pattern; wins only if nothing better speaks
LIKELY = 60
SURE = 90  # a header line only this format prints


@dataclass(frozen=True, slots=True)
class Parser:
    kind: str  # stable id shown to users: "kubectl.get-pods", "containerd.config"
    description: str
    sniff: Callable[[Document], int]
    parse: Callable[[Document], Iterable[Any]]  # yields model objects (and a Gap for a part it could not read); raises UnusableData

    def __repr__(self) -> str:
        return f"Parser({self.kind})"


def parser(kind: str, description: str, sniff: Callable[[Document], int]):
    """Decorator: turn a parse function into a registered-by-listing Parser (see parsers/__init__.py)."""

    def wrap(func: Callable[[Document], Iterable[Any]]) -> Parser:
        return Parser(kind, description, sniff, func)

    return wrap

