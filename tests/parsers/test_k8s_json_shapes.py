"""A List's items read by shape (parsers/k8s_objects.py `_JsonLines._by_shape`) give every object the line map,
start line and key lines that the one-pass scan of the whole document gives: on the bundled examples, the fixtures
and the cases, a generated fleet's pod lists, crafted documents and layouts shuffled at random."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.parsers import k8s_objects as ko
from gpusleuth.sources import examples_root, open_source

ROOT = Path(__file__).resolve().parents[2]


def _reference(doc: Document, lists: set[int]) -> list[tuple]:
    """(unit, line map, start, last key line) of every object, from `_scan_json` over every line of the document."""
    units: list = []
    for path, idx, _, _ in ko._scan_json(doc.lines):
        unit, rel = ko._unit_of(path, lists)
        if unit is None:
            continue
        if not units or units[-1][0] != unit:
            units.append((unit, {}, idx, [idx]))
        units[-1][3][0] = idx
        if rel:
            units[-1][1][rel] = idx
    return [(u, cur, start, last[0]) for u, cur, start, last in units]


class _Count:
    """How many items `check` had scanned line by line, and how many documents it had read by shape (not
    counting those of its comparison of the parsed objects)."""

    on = True

    def __init__(self, monkeypatch):
        self.items = self.shaped = 0
        scan, by_shape = ko._JsonLines._item_scan, ko._JsonLines._by_shape

        def item_scan(jl, *args):
            self.items += _Count.on
            return scan(jl, *args)

        def shaped(jl):
            out = by_shape(jl)
            self.shaped += out is not None and _Count.on
            return out

        monkeypatch.setattr(ko._JsonLines, "_item_scan", item_scan)
        monkeypatch.setattr(ko._JsonLines, "_by_shape", shaped)


def _units(doc: Document) -> tuple[list[tuple], set[int]] | None:
    text = "\n".join(doc.lines)
    try:
        values, gap = ko._json_values(text, doc)
    except UnusableData:
        return None
    lists = {r for r, v in enumerate(values) if ko._is_list(v)}
    jl = ko._JsonLines(doc, lists, text, gap is None and len(values) == 1)
    out = []
    try:
        while jl.pending is not None:
            key, cur, start, keylines, shift = jl.pending
            out.append((key, {p: i + shift for p, i in cur.items()}, start, keylines))
            jl.pending = next(jl.units, None)
    finally:
        jl.close()
    return out, lists


def check(doc: Document) -> int:
    """Compares the units the parser hands out with the reference scan's; the number of units compared."""
    got = _units(doc)
    if got is None:
        return 0
    units, lists = got
    want = _reference(doc, lists)
    assert [u[0] for u in units] == [w[0] for w in want], doc.artifact
    for (key, cur, start, keylines), (_, wcur, wstart, wlast) in zip(units, want):
        assert start == wstart, (doc.artifact, key)
        assert list(cur.items()) == list(wcur.items()), (doc.artifact, key)  # same paths, lines and order
        assert text_end(doc, wlast) == keylines._args[1][1], (doc.artifact, key)  # the object's text ends with its last key's line
        want_map = {ko._dotted(p): doc.first_line + i for p, i in wcur.items()}
        assert list(keylines.items()) == list(want_map.items()), (doc.artifact, key)
    _Count.on = False
    try:
        _same_objects(doc)
    finally:
        _Count.on = True
    return len(units)


def text_end(doc: Document, last: int) -> int:
    return sum(map(len, doc.lines[: last + 1])) + last


def _same_objects(doc: Document) -> None:
    """parse_json's objects (key lines and evidence included) are the same read by shape as read line by line."""
    try:
        shaped = ko.parse_json.parse(doc)
    except UnusableData as exc:  # an unusable document is unusable either way, with the same message
        with pytest.raises(UnusableData) as again:
            _line_by_line(doc)
        assert str(again.value) == str(exc)
        return
    plain = _line_by_line(doc)
    assert shaped == plain, doc.artifact
    for a, b in zip(shaped, plain):
        for x, y in ((a, b), (getattr(a, "manifest", None), getattr(b, "manifest", None))):
            if hasattr(x, "key_lines"):
                assert list(x.key_lines.items()) == list(y.key_lines.items()), doc.artifact


def _line_by_line(doc: Document) -> list:
    by_shape = ko._JsonLines._by_shape
    ko._JsonLines._by_shape = lambda self: None
    try:
        return ko.parse_json.parse(doc)
    finally:
        ko._JsonLines._by_shape = by_shape


def _doc(text: str, name: str = "pods.json", first_line: int = 1) -> Document:
    return Document(name, tuple(text.split("\n")), first_line=first_line)


# -- documents of the project ------------------------------------------------------------------------------------


def _json_docs(roots) -> list[Document]:
    return [d for r in roots for d in open_source(str(r)).documents if d.lines and d.lines[0].lstrip()[:1] in ("{", "[")]


def test_examples_fixtures_and_cases(monkeypatch):
    roots = [e for e in sorted(examples_root().iterdir()) if e.is_dir()] + [ROOT / "tests/fixtures"]
    roots += sorted(p for p in (ROOT / "tests/cases").rglob("*") if p.is_dir() and p.name in ("full", "telling"))
    count = _Count(monkeypatch)
    docs = _json_docs(roots)
    assert len(docs) > 10
    assert sum(map(check, docs)) >= 6  # few: the cases hold their JSON in few files
    assert count.shaped >= 1  # the fixtures' pod list is read by shape


def test_a_generated_fleet(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_scale import generate
    finally:
        sys.path.remove(str(ROOT / "bench"))
    generate(tmp_path, nodes=60, failing=0.5, lines=5)
    count = _Count(monkeypatch)
    docs = _json_docs([tmp_path])
    n = sum(map(check, docs))
    pods = sum(1 for d in docs for ln in d.lines if ln.strip() == '"kind": "Pod",')
    assert n >= pods > 200
    assert count.shaped >= 1 and count.items < pods / 4  # most pods were read by the shape of another


# -- crafted documents ---------------------------------------------------------------------------------------------


def _pod(i: int, **extra) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": f"p{i}", "namespace": "gpu-operator", "labels": {"app": "a"}, "uid": f"u{i}"},
           "spec": {"nodeName": f"n{i}", "containers": [{"name": "c", "image": "i:1", "args": ["--x", "1"]}]},
           "status": {"phase": "Running", "containerStatuses": [
               {"name": "c", "ready": i % 2 == 0, "restartCount": i, "state": {"running": {"startedAt": "2025-06-01T10:00:00Z"}}}]}}
    pod.update(extra)
    return pod


def _list(items, indent=4, **kw) -> str:
    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}, indent=indent, **kw)


TRICKY = ['": ', '{', '[', '}', ']', '"', '\\', '\\": {', 'a": [', '{}', '[]', '": "x', ",", "", " ", "\\n", "\u2028", "\x85"]

CRAFTED = {
    "values only differ": _list([_pod(i) for i in range(20)]),
    "element values differ": _list([_pod(i, args=[str(i), i, i % 2 == 0, None, "x"]) for i in range(20)]),
    "one key differs": _list([_pod(i) if i % 3 else _pod(i, extra=1) for i in range(20)]),
    "escaped keys": _list([_pod(i, **{'we"ird': i, "back\\slash": "v", 'k": ': "v", "\\": i}) for i in range(8)]),
    "values with brackets and key marks": _list([_pod(i, note=TRICKY[i % len(TRICKY)], more={"k": TRICKY[-i % len(TRICKY)]})
                                                 for i in range(3 * len(TRICKY))]),
    "raw separators in values": _list([_pod(i, note=TRICKY[i % len(TRICKY)] + "\u2028x\x85") for i in range(40)], ensure_ascii=False),
    "empty objects and lists": _list([_pod(i, a={}, b=[], c=[{}, []] if i % 2 else [[], {}]) for i in range(10)]),
    "nested lists": _list([_pod(i, grid=[[1, [2, [3, {"x": [i]}]]], [], [[i]]]) for i in range(10)]),
    "values of other types": _list([_pod(i, v=[1, "s", None, True, {"a": 1}, [2]][i % 6]) for i in range(24)]),
    "items that are not objects": _list([_pod(0), 1, "two", [3], None, {}, _pod(1), {"kind": ""}, _pod(2), [], _pod(3)]),
    "overlong line": _list([_pod(i, note="x" * (5000 if i == 3 else 10)) for i in range(8)]),
    "overlong value": _list([_pod(i, note="x" * 4090) for i in range(8)]),
    "indent 2": _list([_pod(i) for i in range(10)], indent=2),
    "tabs": _list([_pod(i) for i in range(10)], indent="\t"),
    "two items": _list([_pod(0), _pod(1)]),
    "one item": _list([_pod(0)]),
    "no items": _list([]),
    "many shapes": _list([_pod(i, **{f"k{i}": i}) for i in range(100)]),
    "many shapes then one": _list([_pod(i, **{f"k{i}": i}) for i in range(30)] + [_pod(i) for i in range(30)]),
    "a PodList": _list([_pod(i) for i in range(6)]).replace('"kind": "List"', '"kind": "PodList"'),
    "two top-level values": _list([_pod(i) for i in range(5)]) + "\n" + _list([_pod(i) for i in range(5)]),
    "a single pod": json.dumps(_pod(0), indent=4),
    "nested items key first": json.dumps({"apiVersion": "v1", "metadata": {"items": [_pod(9), _pod(8)]},
                                          "items": [_pod(i) for i in range(5)], "kind": "List"}, indent=4),
    "items key in items": _list([_pod(i, items=[_pod(7), _pod(8)]) for i in range(5)]),
    "items key twice": _list([_pod(i) for i in range(4)]).replace(
        '"kind": "List"', '"items": [\n        ' + json.dumps(_pod(5)) + '\n    ],\n    "kind": "List"'),
    "duplicate items key before": '{\n    "items": [\n        {\n            "kind": "Pod"\n        }\n    ],\n'
                                  + _list([_pod(i) for i in range(4)])[2:],
    "kind first": json.dumps({"kind": "List", "apiVersion": "v1", "items": [_pod(i) for i in range(6)]}, indent=4),
}


def _inline(values) -> str:
    """Pods with a value written on its key's line, some objects and arrays among them (as a hand-made layout)."""
    items = []
    for i, v in enumerate(values):
        text = json.dumps(_pod(i, v="@"), indent=4)
        items.append("\n".join("        " + ln for ln in text.split("\n")).replace('"@"', v))
    return '{\n    "apiVersion": "v1",\n    "items": [\n' + ",\n".join(items) + '\n    ],\n    "kind": "List"\n}'


def _items_twice(first: str, second: list) -> str:
    """A List with two "items" keys (the decoder keeps the second): the first's elements are written as given."""
    pods = "\n".join("        " + ln for ln in ",\n".join(json.dumps(p, indent=4) for p in second).split("\n"))
    return '{\n    "apiVersion": "v1",\n    "items": [\n' + first + '\n    ],\n    "items": [\n' + pods + '\n    ],\n    "kind": "List"\n}'


CRAFTED["values on their key's line"] = _inline(['5', '{"a": 1}', '"s"', '[1, 2]', '{}', '5', '[]', '{"a": {}}', '[{"b": [3]}]', 'null', '{"a": 1}'])
CRAFTED["elements before a second items key"] = _items_twice(
    "\n".join("        " + ln for ln in ",\n".join(json.dumps(p, indent=4) for p in (_pod(0), _pod(1))).split("\n")),
    [1, 2] + [_pod(i) for i in range(2, 7)])
CRAFTED["scalars in a first items key"] = _items_twice("        1,\n        2", [_pod(i) for i in range(5)])
CRAFTED["truncated list"] = CRAFTED["values only differ"][: len(CRAFTED["values only differ"]) * 2 // 3]
CRAFTED["truncated item"] = CRAFTED["values only differ"][: len(CRAFTED["values only differ"]) // 2] + '"'


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_crafted(name, monkeypatch):
    count = _Count(monkeypatch)
    check(_doc(CRAFTED[name], first_line=3))
    if name in ("values only differ", "escaped keys", "indent 2", "tabs", "kind first"):
        assert count.shaped == 1 and count.items < 20  # read by shape, and shapes shared


def test_items_of_one_shape_share_one_scan(monkeypatch):
    count = _Count(monkeypatch)
    assert check(_doc(CRAFTED["values only differ"])) == 20
    assert (count.shaped, count.items) == (1, 1)  # the first item; the last is scanned with what follows it
    count.items = 0
    check(_doc(CRAFTED["one key differs"]))
    assert count.items == 2


def test_a_list_of_unlike_items_is_scanned_line_by_line_after_a_while(monkeypatch):
    count = _Count(monkeypatch)
    check(_doc(CRAFTED["many shapes"]))
    assert count.items == ko._UNLIKE  # then the rest from the next item on
    count.items = 0
    check(_doc(CRAFTED["many shapes then one"]))
    assert count.items == 31


def test_a_cut_inside_an_item_is_scanned_line_by_line(monkeypatch):
    """A line `{` alone at the items' indentation inside an item cuts it in two: the check fails on it, and the
    rest of the document is scanned line by line from that item on."""
    pods = [_pod(i) for i in range(6)]
    text = _list(pods)
    lines = text.split("\n")
    at = [i for i, ln in enumerate(lines) if ln == '            "spec": {'][3]
    lines[at: at + 1] = ['            "odd": [', "        {", '        "x": 1', "        }", "            ],", lines[at]]
    doc = _doc("\n".join(lines))
    count = _Count(monkeypatch)
    assert check(doc) == 6 and count.shaped == 1


# -- layouts shuffled at random ----------------------------------------------------------------------------------


def _shuffle(text: str, rnd: random.Random, rate: float) -> str:
    """The same JSON with its layout changed here and there: lines joined, blank lines, indentation and spaces."""
    out = []
    for ln in text.split("\n"):
        r = rnd.random() / rate
        if r < 0.03 and out:
            out[-1] += " " + ln.strip()
            continue
        if r < 0.05:
            out.append(rnd.choice(["", "  ", "\t"]))
        if r < 0.07:
            ln = " " + ln
        elif r < 0.08:
            ln = ln.replace('": ', '" : ', 1)
        elif r < 0.09:
            ln = ln + " "
        out.append(ln)
    return "\n".join(out)


@pytest.mark.parametrize("seed", range(12))
def test_shuffled_layouts(seed, monkeypatch):
    rnd = random.Random(seed)
    pods = [_pod(i % 5, note=rnd.choice(TRICKY)) if i % 4 else _pod(i) for i in range(25)]
    text = _list(pods, indent=rnd.choice([2, 4]))
    count = _Count(monkeypatch)
    for rate in (1, 0.3, 0.1, 0.01):
        doc = _doc(_shuffle(text, rnd, rate), first_line=rnd.randint(1, 9))
        json.loads("\n".join(doc.lines))  # still the same JSON
        assert check(doc) > 0
    assert count.shaped >= 1


# -- one line and its skeleton -----------------------------------------------------------------------------------


def _scan_one(line: str) -> list:
    """What `_scan_json` does with one line in each state it can meet it in: inside an object, inside an array,
    outside any value."""
    out = []
    for stack in ([[("r",), False, 0]], [[("r",), True, 3]], []):
        try:
            found = [(path, [list(e) for e in st]) for path, _, st, _ in ko._scan_json((line,), 0, None, stack, 0)]
        except json.JSONDecodeError:  # a key with a bad escape (never in a document that decodes)
            found = ["bad key"]
        out.append((found, stack))
    return out


ENDS = ['"v"', '"\\""', "0", "-1", "true", '"{"', '"": 1', "{", "[", "{}", "[ ]"]
PIECES = ['"', '\\', ":", " ", "a", "{", "[", "}", "]", ",", "1", "-2.5e3", "true", "null", '"k"', '": ', '\\"', '""', "{}", "[]"]


def test_blanking_a_value_never_changes_what_the_scan_does_with_its_line():
    """The skeleton is made with one regex over the whole text: every line it changes is scanned as it was, in
    every state, valid JSON or not (a quote before `: ` that is the line's first character or escaped)."""
    rnd = random.Random(7)
    lines = ['": ": "x"', '  ": ": 1', '"x\\": ": 1"', '"x\\": ": "y"', '"k": "v"', '"k": 12,', '"\\\\": true',
             '"a": {"b": 1}', '"a": [1]', '"a": {}', '"a": "{"', '"a" : 1']
    for _ in range(20000):
        line = " " * rnd.randint(0, 3) + "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 6)))
        if rnd.random() < 0.5:  # ending in what looks like a key's scalar
            line += rnd.choice(['"', '\\"', 'a"', ' "']) + '": ' + rnd.choice(ENDS) + rnd.choice(["", ","])
        lines.append(line)
    changed = 0
    for line in lines:
        blank = ko._SCALAR_VALUE.sub('": 0', line)
        if blank != line:
            changed += 1
            assert _scan_one(blank) == _scan_one(line), line
    assert changed > 1000
