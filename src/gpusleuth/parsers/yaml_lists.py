"""A big YAML List of Kubernetes objects, read on several cores.

`kubectl get pods -A -o yaml` of a large cluster, or the operand pods file of the GPU Operator's must-gather, is
tens of megabytes of YAML, and composing YAML is slow even with PyYAML's C loader (about 3 MB/s here: 2.5 s for
6,000 pods). Its items are independent: each is composed, built and converted alone. So a List written as
kubectl writes it (`items:` at the left margin, each item a `- ` line there, the item's own lines indented) is
cut at item starts into one part per core; each part is read, by the same parser, as a List of its own (`items:`
then its lines, numbered as in the file) in a forked process, one part in this one, and the objects come back in
order. The objects are those the whole read makes, line for line (tests/parsers/test_yaml_lists.py).

Anything else reads the file whole: another layout, several YAML documents, a directive, a text that can hold an
alias (`*`: an alias may point into another item), a part that does not read cleanly (the whole read then says
what is wrong and where), or no other core to use (gpusleuth/parallel.py: not Linux, one core, or this is a worker
already).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Callable

from gpusleuth import parallel
from gpusleuth.model.document import Document

PARALLEL_BYTES = 2 << 20  # below this a List is read whole: ~0.6 s of YAML, against ~0.05 s to fork and gather


def parts_for(doc: Document) -> list[tuple[int, int]] | None:
    """(start, end) line indexes of the items block cut into one part per core, each part starting at an item; None
    when the document is not a List laid out as kubectl writes it, or is too small to be worth it. Found by regex
    searches over the text (a 40 MB List has a million and a half lines: a Python step per line cost half a second)."""
    lines = doc.lines
    cores = parallel.cores()
    if cores < 2 or sum(map(len, lines)) < PARALLEL_BYTES:
        return None
    text = "\n".join(lines)
    if "*" in text or text.startswith(("---", "...", "%")) or _MARKER.search(text):
        return None  # maybe an alias, several documents, or a directive: read whole
    items = _ITEMS.search(text)
    if items is None or not text.startswith("- ", items.end() + 1):
        return None
    begin = items.end() + 1  # the block's first line: an item
    # it ends at the first line at the left margin that is neither an item, blank nor a comment
    stop = _AT_MARGIN.search(text, begin - 1)
    end = stop.start() + 1 if stop else len(text)
    if _DASH.search(text, begin - 1, end):  # a line at the margin that starts with a dash and is not an item
        return None
    starts = [m.start() + 1 for m in _ITEM.finditer(text, begin - 1, end)]
    if len(starts) < 2:
        return None
    offsets = [begin]
    for k in range(1, cores):
        at = bisect_left(starts, begin + (end - begin) * k // cores)
        if at < len(starts) and starts[at] > offsets[-1]:
            offsets.append(starts[at])
    first = text.count("\n", 0, begin)
    rows = [first]
    for a, b in zip(offsets, offsets[1:]):
        rows.append(rows[-1] + text.count("\n", a, b))
    rows.append(first + text.count("\n", begin, end) + (end == len(text)))
    return list(zip(rows, rows[1:]))


# Each led by the newline before the line it looks at, so that the regex engine searches for a literal instead of
# trying every position of a 40 MB text for a line start.
_MARKER = re.compile(r"\n(?:---|\.\.\.|%)")
_ITEMS = re.compile(r"^items:$", re.M)
_AT_MARGIN = re.compile(r"\n[^ \-#\n]")
_DASH = re.compile(r"\n-(?! )")
_ITEM = re.compile(r"\n- ")


def part_document(doc: Document, start: int, end: int) -> Document:
    """Lines start..end of the items block as a List of their own: `items:` then those lines, numbered as in doc."""
    return Document(doc.artifact, ("items:", *doc.lines[start:end]), doc.first_line + start - 1, doc.command,
                    doc.path_hint, doc.meta)


def read_in_parts(doc: Document, parse: Callable[[Document], list]) -> list | None:
    """What parse(doc) returns, made part by part on several cores; None when the document is not cut (read it
    whole) or a part does not read cleanly (read whole, the parse says why)."""
    parts = parts_for(doc)
    if parts is None or not _is_list_around(doc, parts):
        return None
    _reading[:] = [doc, parse, parts]  # what the workers, forked after this, read their part from: nothing is sent
    try:
        with parallel.pool(len(parts) - 1) as pool:
            later = [pool.submit(_read_part, k) for k in range(1, len(parts))]
            results = [_read_part(0)] + [f.result() for f in later]
    except Exception:  # noqa: BLE001 - a worker that could not start or died: read whole
        return None
    finally:
        _reading.clear()
    if any(r is None for r in results):
        return None
    return [obj for r in results for obj in r]


_reading: list = []  # (document, parse, parts) while a document is read in parts


def _read_part(k: int) -> list | None:
    doc, parse, parts = _reading
    return _clean(parse, part_document(doc, *parts[k]))


def _clean(parse: Callable[[Document], list], doc: Document) -> list | None:
    """parse(doc) when it reads without a gap or an error; else None."""
    from gpusleuth.errors import UnusableData
    from gpusleuth.model.finding import Gap

    try:
        out = list(parse(doc))
    except UnusableData:
        return None
    return None if any(isinstance(o, Gap) for o in out) else out


def _is_list_around(doc: Document, parts: list[tuple[int, int]]) -> bool:
    """Whether what surrounds the items block makes the document a List (`kind: List`, `PodList`...), as the
    whole read would take it: the lines outside the block read with `items: []` in its place."""
    from gpusleuth.parsers.yamlsafe import safe_load

    start, end = parts[0][0], parts[-1][1]
    try:
        value = safe_load("\n".join((*doc.lines[:start - 1], "items: []", *doc.lines[end:])))
    except Exception:  # noqa: BLE001 - yaml.YAMLError or an alias: read whole
        return False
    return isinstance(value, dict) and str(value.get("kind", "List")).endswith("List") and value.get("items") == []
