"""The key lines of JSON objects, made on first use, are the map the one-pass scan of the whole document makes."""

import json
import sys
from pathlib import Path

import pytest

from gpusleuth.model.document import Document
from gpusleuth.model.k8s import K8sObject, Pod
from gpusleuth.parsers import k8s_objects as ko

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


def _eager(doc: Document) -> dict:
    """unit -> {dotted path: line}, from one scan of every line (what every object got before)."""
    values, _ = ko._json_values("\n".join(doc.lines), doc)
    lists = {r for r, v in enumerate(values) if ko._is_list(v)}
    units: dict = {}
    for path, idx, _, _ in ko._scan_json(doc.lines):
        unit, rel = ko._unit_of(path, lists)
        if unit is None:
            continue
        cur = units.setdefault(unit, {})
        if rel:
            cur[rel] = idx
    return {u: {ko._dotted(p): doc.first_line + i for p, i in cur.items()} for u, cur in units.items()}


def _maps(doc: Document) -> list[dict]:
    out = []
    for obj in ko.parse_json.parse(doc):
        target = obj.manifest if isinstance(obj, Pod) else obj if isinstance(obj, K8sObject) else None
        if target is not None:
            out.append(target.key_lines)
    return out


def _check(doc: Document, some: bool = True) -> int:
    expected = _eager(doc)
    got = _maps(doc)
    if not some and not got:
        return 0  # nodes and events keep no key lines
    lazy = [m for m in got if isinstance(m, ko._KeyLines)]
    assert all(m == {} for m in got if not isinstance(m, ko._KeyLines))  # an object the scan never reached
    assert lazy, doc.artifact
    for m in lazy:
        assert m._map is None
        unit = m._args[2]
        assert list(m.items()) == list(expected[unit].items()), (doc.artifact, unit)  # same keys, lines and order
    return len(got)


def _objects(n):
    return {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}", "namespace": "ns", "labels": {"a.b/c": "d"}},
         "data": {"k": "v", "we\"ird": "x"}, "list": [[1, 2], {"x": [3, {"y": 4}]}, []], "empty": {}}
        for i in range(n)]}


LAYOUTS = {
    "kubectl": json.dumps(_objects(3), indent=4),
    "two-values": json.dumps(_objects(2), indent=2) + "\n" + json.dumps(_objects(1)["items"][0], indent=2),
    "single": json.dumps(_objects(1)["items"][0], indent=3),
    "joined-items": json.dumps(_objects(3), indent=2).replace("},\n        {", "}, {"),
    "one-line-items": "{\n\"kind\": \"List\",\n\"apiVersion\": \"v1\",\n\"items\": [\n"
                      + ",\n".join(json.dumps(o) for o in _objects(3)["items"]) + "\n]\n}",
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_lazy_key_lines_are_the_scans(name):
    doc = Document(f"{name}.json", tuple(LAYOUTS[name].splitlines()), first_line=5)
    _check(doc)


def test_fleet_pods_and_nodes(tmp_path):
    from bench_scale import generate

    generate(tmp_path, nodes=6, failing=0.5, lines=10)
    n = 0
    for f in sorted(tmp_path.rglob("*.json")):
        text = f.read_text()
        if '"kind"' not in text or f.name == "manifest.json":
            continue
        n += _check(Document(f.name, tuple(text.splitlines())), some=False)
    assert n > 20


def test_a_map_is_made_once_and_compares_as_a_dict():
    doc = Document("x.json", tuple(LAYOUTS["kubectl"].splitlines()))
    m = _maps(doc)[0]
    assert m._map is None
    assert m.get("metadata.name") == 9 and "data.k" in m and m["kind"] == 7
    assert m == dict(m) and m._map is not None and m._args is None


def test_a_parsed_document_is_not_kept_while_the_collector_is_paused():
    """The objects keep their key maps, not the Document or its lines: reference counting frees them (diagnose
    pauses the cycle collector, so a cycle through the scan kept every line of every pods.json to the run's end)."""
    import gc

    doc = Document("pods.json", tuple(LAYOUTS["kubectl"].splitlines()))
    refs = sys.getrefcount(doc), sys.getrefcount(doc.lines)
    was_on = gc.isenabled()
    gc.disable()
    try:
        objs = ko.parse_json.parse(doc)
        assert (sys.getrefcount(doc), sys.getrefcount(doc.lines)) == refs
        assert objs[0].key_lines["metadata.name"] == 9  # the maps still answer, from the kept text
    finally:
        if was_on:
            gc.enable()
