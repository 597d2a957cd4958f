"""`json.dumps(obj, indent=N, ensure_ascii=False, default=str)`, byte for byte, mostly at C speed.

Python 3.11's json module uses its C encoder only without `indent`; with it, every value goes through
generators in Python (2 s for the 26 MB report of 1,000 nodes). Most of a report is small dicts and lists
of plain values (evidence: artifact, line, text). Their items all sit at one depth, so the C encoder writes
them with the indented item separator of that depth, and only their brackets are placed here. Everything else
(containers holding containers, values of other types) follows the pure-Python encoder's rules exactly.
"""

from __future__ import annotations

from json.encoder import c_make_encoder, encode_basestring

_PLAIN = frozenset({str, int, float, bool, type(None)})


def dumps(obj, indent: int = 2, end: str = "") -> str:
    """json.dumps(obj, indent=indent, ensure_ascii=False, default=str) + end (joined once: a report of a fleet is
    100 MB and more, and `dumps(...) + "\n"` would copy it again)."""
    if c_make_encoder is None:  # an interpreter without the C accelerator
        import json

        return json.dumps(obj, indent=indent, ensure_ascii=False, default=str) + end
    chunks: list[str] = []
    _encode(obj, indent, end, chunks.append)
    return chunks[0] if len(chunks) == 1 else "".join(chunks)


def write(obj, fh, indent: int = 2, end: str = "") -> None:
    """What dumps() returns, written to the text file fh as it is made: the whole text is never in memory."""
    if c_make_encoder is None:
        fh.write(dumps(obj, indent, end))
        return
    _encode(obj, indent, end, fh.write)


_CHUNK = 4096  # pieces gathered before they are joined into one string and handed on


def _encode(obj, indent: int, end: str, sink) -> None:
    enc = _Encoder(" " * indent, [], sink)
    enc.value(obj, 0)
    enc.out.append(end)
    enc.flush()


class _Encoder:
    """Appends the pieces of the text to `out`; every _CHUNK pieces (checked between the items of a container)
    they are joined and handed to `sink`: a fleet's report is millions of small pieces, and as separate strings
    they took three times the memory of the text."""

    def __init__(self, indent: str, out: list[str], sink=None):
        self.indent = indent
        self.out = out
        self.sink = sink
        self.leaf: list = []  # per depth: a C encoder whose item separator is that depth's ",\n" + indentation
        self.scalar = c_make_encoder(None, str, encode_basestring, None, ": ", ", ", False, False, True)

    def flush(self) -> None:
        if self.sink is not None and self.out:
            self.sink("".join(self.out))
            self.out.clear()  # the same list: the methods below hold it as a local

    def _leaf(self, level: int):
        while len(self.leaf) <= level:
            sep = ",\n" + self.indent * (len(self.leaf) + 1)
            self.leaf.append(c_make_encoder(None, str, encode_basestring, None, ": ", sep, False, False, True))
        return self.leaf[level]

    def value(self, o, level: int) -> None:
        out = self.out
        if isinstance(o, str):
            out.append(encode_basestring(o))
        elif o is None or o is True or o is False or isinstance(o, (int, float)):
            out.append("".join(self.scalar(o, 0)))
        elif isinstance(o, (list, tuple)):
            self.array(o, level)
        elif isinstance(o, dict):
            self.object(o, level)
        else:  # default=str
            out.append("".join(self.scalar(str(o), 0)))

    def array(self, o, level: int) -> None:
        out = self.out
        if not o:
            out.append("[]")
            return
        inner = "\n" + self.indent * (level + 1)
        if _PLAIN.issuperset(map(type, o)):  # every item a plain value (a C loop)
            text = "".join(self._leaf(level)(o, 0))
            out.append("[" + inner + text[1:-1] + "\n" + self.indent * level + "]")
            return
        out.append("[" + inner)
        sep = "," + inner
        first = True
        for v in o:
            if first:
                first = False
            else:
                out.append(sep)
            self.value(v, level + 1)
            if len(out) >= _CHUNK:
                self.flush()
        out.append("\n" + self.indent * level + "]")

    def object(self, o, level: int) -> None:
        out = self.out
        if not o:
            out.append("{}")
            return
        inner = "\n" + self.indent * (level + 1)
        if _PLAIN.issuperset(map(type, o.values())):
            text = "".join(self._leaf(level)(o, 0))
            out.append("{" + inner + text[1:-1] + "\n" + self.indent * level + "}")
            return
        out.append("{" + inner)
        sep = "," + inner
        first = True
        for k, v in o.items():
            if isinstance(k, str):
                pass
            elif isinstance(k, float) or k is True or k is False or k is None or isinstance(k, int):
                k = "".join(self.scalar(k, 0))  # float repr, true/false/null, int repr: the stdlib's key rules
            else:
                raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")
            if first:
                first = False
            else:
                out.append(sep)
            out.append(encode_basestring(k))
            out.append(": ")
            self.value(v, level + 1)
            if len(out) >= _CHUNK:
                self.flush()
        out.append("\n" + self.indent * level + "}")
