"""YAML that cannot blow up: aliases are counted before anything is built, and node walks visit each node once.

PyYAML's safe loader refuses unsafe tags, but an alias is still a pointer: nine anchors of nine aliases each
(a "billion laughs", under 600 bytes) compose to a graph of 90 nodes that *reads* as 10^9 values to any code
that walks it. Construction shares the Python objects, so the damage is done later, by whatever walks the
result (key-line maps, deep merges, JSON output, redaction). So:

* ``check_aliases(node)`` counts, once per distinct node, how many nodes the document would expand to; more
  than ``MAX_ALIAS_EXPANSION`` nodes added by aliases, or an alias inside its own anchor (a cycle), raise
  ``AliasBomb`` (an ``UnusableData``: the artifact becomes a one-line gap). Ordinary anchors (Helm values
  reusing a block of tolerations, ``<<: *defaults``) add a few hundred nodes at most. A text without `*`
  (``may_alias``) holds no alias and is not walked for them.
* ``node_paths(node)`` yields (path, line) for every key and sequence item in document order, without
  recursion (a 10,000-deep document cannot hit Python's recursion limit) and without descending into a node
  it has already walked: an alias gets the line of the key that holds it, never a second walk.
"""

from __future__ import annotations

from typing import Iterator

from functools import cache

from gpusleuth.errors import UnusableData

MAX_ALIAS_EXPANSION = 100_000  # nodes an alias may add to a document; a real manifest adds hundreds


@cache
def loader_class():
    """PyYAML's C safe loader where built, else the pure-Python one; PyYAML is imported here, on first use, so
    that inputs without YAML (and `gpusleuth --version`) never load it."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def __getattr__(name: str):
    if name == "Loader":  # the old module-level name
        return loader_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class AliasBomb(UnusableData):
    """YAML whose aliases expand past the cap, or refer to themselves."""


def _children(node) -> list:
    import yaml
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def check_aliases(node, limit: int = MAX_ALIAS_EXPANSION) -> int:
    """The number of nodes ``node`` expands to; raises AliasBomb past ``limit`` extra nodes or on a cycle.

    One pass over the distinct nodes (an explicit stack, memoised sizes): cost follows the text's size, not
    the expansion's."""
    if node is None:
        return 0
    size: dict[int, int] = {}
    open_: set[int] = set()
    distinct = 0
    stack: list[tuple[object, bool]] = [(node, False)]
    while stack:
        n, done = stack.pop()
        key = id(n)
        if done:
            open_.discard(key)
            total = 1 + sum(size[id(c)] for c in _children(n))
            size[key] = total
            if total - distinct > limit:
                raise AliasBomb(_too_many(limit, n))
            continue
        if key in size:
            continue
        if key in open_:
            raise AliasBomb(f"YAML alias refers to its own anchor (line {n.start_mark.line + 1}); refused, not read")
        open_.add(key)
        distinct += 1
        stack.append((n, True))
        for c in reversed(_children(n)):
            if id(c) in open_:
                raise AliasBomb(f"YAML alias refers to its own anchor (line {c.start_mark.line + 1}); refused, not read")
            if id(c) not in size:
                stack.append((c, False))
    total = size[id(node)]
    if total - distinct > limit:
        raise AliasBomb(_too_many(limit, node))
    return total


def _too_many(limit: int, node) -> str:
    return (f"YAML aliases expand to more than {limit:,} extra nodes (an alias bomb; anchor near line "
            f"{node.start_mark.line + 1}); refused, not read")


def node_paths(node, scalar_keys_only: bool = False) -> Iterator[tuple[tuple, int]]:
    """(path, 0-based line) of every key and sequence item under ``node``, in document order, each node's
    children walked once. A non-scalar key is named by its line, or skipped with ``scalar_keys_only``."""
    import yaml
    if node is None:
        return
    seen: set[int] = {id(node)}
    stack = [_entries(node, (), scalar_keys_only)]
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        child, path, line = entry
        yield path, line
        if id(child) not in seen and isinstance(child, (yaml.MappingNode, yaml.SequenceNode)):
            seen.add(id(child))  # an alias of a node already walked gets its key's line, not a second walk
            stack.append(_entries(child, path, scalar_keys_only))


def _entries(n, path: tuple, scalar_keys_only: bool) -> Iterator[tuple[object, tuple, int]]:
    import yaml
    if isinstance(n, yaml.MappingNode):
        for key, value in n.value:
            if isinstance(key, yaml.ScalarNode):
                name = key.value
            elif scalar_keys_only:
                continue
            else:
                name = str(key.start_mark.line)
            yield value, path + (name,), key.start_mark.line
    elif isinstance(n, yaml.SequenceNode):
        for i, value in enumerate(n.value):
            yield value, path + (i,), value.start_mark.line


def may_alias(text: str) -> bool:
    """Whether the text can hold an alias at all. An alias is written `*name`, and the composer shares a node only
    for an alias: text without a `*` composes to a tree, and check_aliases, a walk over every node (a third of
    reading a 500-pod list as YAML), has nothing to find there."""
    return "*" in text


def _construct(loader, node, text: str):
    if may_alias(text):
        check_aliases(node)
    return loader.construct_document(node)


def compose_one(text: str):
    """(node, value) of a single YAML document, aliases checked before construction; raises yaml.YAMLError
    or AliasBomb."""
    loader = loader_class()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        return node, _construct(loader, node, text)
    finally:
        loader.dispose()


def safe_load(text: str):
    """yaml.safe_load with the alias check."""
    return compose_one(text)[1]


def safe_load_all(text: str) -> list:
    """yaml.safe_load_all with the alias check on every document."""
    loader = loader_class()(text)
    out = []
    try:
        while loader.check_node():
            node = loader.get_node()
            out.append(None if node is None else _construct(loader, node, text))
    finally:
        loader.dispose()
    return out
