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

from typing import Callable

from gpusleuth import parallel
from gpusleuth.model.document import Document

PARALLEL_BYTES = 2 << 20  # below this a List is read whole: ~0.6 s of YAML, against ~0.05 s to fork and gather


def parts_for(doc: Document) -> list[tuple[int, int]] | None:
    """(start, end) line indexes of the items block cut into one part per core, each part starting at an item; None
    when the document is not a List laid out as kubectl writes it, or is too small to be worth it."""
    lines = doc.lines
    cores = parallel.cores()
    if cores < 2 or sum(map(len, lines)) < PARALLEL_BYTES:
        return None
    if any(ln.startswith(("---", "...", "%")) for ln in lines) or any("*" in ln for ln in lines):
        return None  # several documents, a directive, or maybe an alias: read whole
    try:
        a = lines.index("items:")
    except ValueError:
        return None
    if a + 1 >= len(lines) or not lines[a + 1].startswith("- "):
        return None
    # the block ends at the first line after it at the left margin that is neither an item, blank nor a comment
    end = next((i for i in range(a + 1, len(lines)) if lines[i][:1] not in ("", " ", "-", "#")), len(lines))
    starts = [i for i in range(a + 1, end) if lines[i].startswith("- ")]
    if len(starts) < 2 or any(ln.startswith("-") and not ln.startswith("- ") for ln in lines[a + 1:end]):
        return None
    total = sum(map(len, lines[a + 1:end]))
    cuts, size, target = [a + 1], 0, total / cores
    k = 0
    for i in range(a + 1, end):
        if k + 1 < len(starts) and i == starts[k + 1]:
            k += 1
            if size >= target * len(cuts) and len(cuts) < cores:
                cuts.append(i)
        size += len(lines[i])
    return [(s, e) for s, e in zip(cuts, cuts[1:] + [end])]


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
    docs = [part_document(doc, s, e) for s, e in parts]
    try:
        with parallel.pool(len(docs) - 1) as pool:
            later = [pool.submit(_clean, parse, d) for d in docs[1:]]
            results = [_clean(parse, docs[0])] + [f.result() for f in later]
    except Exception:  # noqa: BLE001 - a worker that could not start or died: read whole
        return None
    if any(r is None for r in results):
        return None
    return [obj for r in results for obj in r]


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
