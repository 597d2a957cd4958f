"""The lookup indexes of Cluster, OperandGraph and Timeline answer exactly what the linear scans they replaced
answered (same objects, same order), on every bundled example and on a generated multi-node fleet."""

import sys
from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import build_facts
from gpusleuth.errors import NotApplicable
from gpusleuth.facts import Facts, OperandGraph
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.timeline import Selector, Timeline, _phase_rows
from gpusleuth.model.finding import ComponentState
from gpusleuth.sources import examples_root, open_source

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


def _sources(tmp_path_factory):
    for d in sorted(examples_root().iterdir()):
        if d.is_dir():
            yield d.name, str(d)
    from bench_scale import generate  # a fleet: several nodes, three failures, healthy nodes, shared pod names

    root = tmp_path_factory.mktemp("fleet")
    generate(root, nodes=12, failing=0.75, lines=30)
    yield "fleet", str(root)


def _facts(path: str) -> Facts:
    return build_facts(open_source(path))


def _get(facts: Facts, cls):
    try:
        return facts.get(cls)
    except NotApplicable:
        return None


@pytest.fixture(scope="module")
def all_facts(tmp_path_factory):
    return [(name, _facts(path)) for name, path in _sources(tmp_path_factory)]


def test_cluster_lookups_match_scans(all_facts):
    for name, facts in all_facts:
        c = _get(facts, Cluster)
        if c is None:
            continue
        names = {p.name for p in c.pods} | {e.object.rsplit("/", 1)[-1] for e in c.events if e.object} | {"nope", None}
        for n in names:
            assert c.pod(n) is next((p for p in c.pods if p.name == n), None), (name, n)
            assert c.events_for(n) == [e for e in c.events if e.object and e.object.rsplit("/", 1)[-1] == n], (name, n)
        for node in {p.node for p in c.pods} | {"nope"}:
            assert c.pods_on(node) == [p for p in c.pods if p.node == node], (name, node)


def test_operand_graph_lookups_match_scans(all_facts):
    checked = 0
    for name, facts in all_facts:
        g = _get(facts, OperandGraph)
        if g is None:
            continue
        nodes = {c.node for c in g.components} | {None, "nope"}
        for cname in {c.name for c in g.components} | {"nope"}:
            for node in nodes:
                same = [c for c in g.components if c.name == cname]
                want = next((c for c in same if c.node == node), None) or next((c for c in same if c.node is None or node is None), None)
                assert g.get(cname, node) is want, (name, cname, node)
                checked += 1
        for root in g.components:
            want = [c for c in g.by_state(ComponentState.BLOCKED) if c is not root and g.root_of(c) is root]
            assert g.blocked_behind(root) == want, (name, root)
    assert checked


def test_timeline_select_matches_scan(all_facts):
    checked = 0
    for name, facts in all_facts:
        tl = _get(facts, Timeline)
        if tl is None:
            continue
        sels = [s for _, _, a, b in _phase_rows() for s in (a, b) if s is not None]
        from gpusleuth.analysis.ordering import rules  # evaluate() selects each rule's events through the index

        sels += [s for r in rules() for s in (r.then, r.first, r.revoked_by, r.window) if s is not None]
        sigs = {s for e in tl.entries for s in tl.signatures_of(e)}
        sels += [Selector(signatures=frozenset({s})) for s in sorted(sigs)]
        sels += [Selector(tags=frozenset({t})) for t in sorted({t for e in tl.entries for t in tl.tags_of(e)})]
        for sel in sels:
            for node in [*tl.nodes(), None, "nope"]:
                for any_node in (True, False):
                    want = [e for e in tl.entries if tl.matches(sel, e) and (e.node == node or (any_node and (e.node is None or node is None)))]
                    got = tl.select(sel, node, any_node)
                    assert len(got) == len(want) and all(a is b for a, b in zip(got, want)), (name, sel, node, any_node)
                    checked += bool(want)
    assert checked


def test_spec_for_cache_matches_the_table_scan(all_facts):
    """spec_for answers from a cache keyed on the pod's name and its values of the table's label keys; it must
    name the row the plain scan of the table names, for every pod (labels as given, and name alone)."""
    from gpusleuth.facts.operands import operand_table, spec_for, spec_for_name
    from gpusleuth.model.k8s import Pod

    specs, _ = operand_table()
    seen = 0
    for name, facts in all_facts:
        c = _get(facts, Cluster)
        for p in c.pods if c is not None else ():
            for _ in range(2):  # the second answer comes from the cache
                assert spec_for(p) is next((s for s in specs if s.matches(p)), None), (name, p.name)
            bare = next((s for s in specs if any(rx.search(p.name) for rx in s.patterns)), None)
            assert spec_for_name(p.name) is bare, (name, p.name)
            assert spec_for(Pod(p.name, p.namespace)) is bare, (name, p.name)
            seen += 1
    assert seen > 100
    # labels decide before the name: the same name with another operand's labels is that operand
    pod = Pod("nvidia-driver-daemonset-abcde", "gpu-operator", labels={"app": "nvidia-device-plugin-daemonset"})
    assert spec_for(pod) is next((s for s in specs if s.matches(pod)), None)
    assert spec_for(Pod("x", "y", labels={"app": ["not", "hashable"]})) is None


def test_gpu_inventory_for_node_matches_the_scan(all_facts):
    from gpusleuth.facts.gpus import GpuInventory

    seen = 0
    for name, facts in all_facts:
        inv = _get(facts, GpuInventory)
        if inv is None:
            continue
        for node in {n.node for n in inv.nodes} | {"nope", None}:
            assert inv.for_node(node) is next((n for n in inv.nodes if n.node == node), None), (name, node)
            seen += 1
    assert seen > 10


def test_operand_error_lines_match_the_per_line_test(all_facts):
    """_errors (a line's level, or its key among the error-signature keys) picks what _is_error picked."""
    from gpusleuth.facts.operands import _error_keys, _errors, _is_error

    seen = 0
    for name, facts in all_facts:
        g = _get(facts, OperandGraph)
        if g is None:
            continue
        keys = _error_keys(g.signatures)
        for pod, plogs in g.logs.items():
            for pl in plogs:
                want = [(i, ln) for i, ln in enumerate(pl.lines) if _is_error(ln, g.signatures.get((ln.artifact, ln.line), []))]
                assert _errors(pl.lines, keys) == want, (name, pod)
                seen += len(want)
    assert seen > 20


def test_operand_error_lines_of_mixed_artifacts_match_the_per_line_test(all_facts):
    """_errors tests a one-artifact log by line number and a mixed one by (artifact, line) key: lines of two logs
    together, in both orders, and a log's lines with a line of an artifact that has no error line, pick what
    _is_error picks; _error_keys is the set the per-key test gives."""
    from dataclasses import replace

    from gpusleuth.facts.operands import _ERROR_SEVERITIES, _error_keys, _errors, _is_error

    seen = 0
    for name, facts in all_facts:
        g = _get(facts, OperandGraph)
        if g is None:
            continue
        sig_at = g.signatures
        keys = _error_keys(sig_at)
        assert keys == {k for k, sigs in sig_at.items() if any(s.severity in _ERROR_SEVERITIES for s in sigs)}, name
        plogs = [pl for v in g.logs.values() for pl in v if pl.lines]
        for a, b in zip(plogs, plogs[1:]):
            stray = replace(b.lines[0], artifact="elsewhere/none.log")  # same line number, an artifact with no keys
            for lines in ((*a.lines, *b.lines), (*b.lines, *a.lines), (*a.lines, stray), (stray,)):
                want = [(i, ln) for i, ln in enumerate(lines) if _is_error(ln, sig_at.get((ln.artifact, ln.line), []))]
                assert _errors(lines, keys) == want, name
                assert _errors(lines, frozenset(keys)) == want, name  # a plain set of keys: by key tuples
                seen += len(want)
    assert seen > 20


def test_operand_spec_matches_with_its_labels_split_once(all_facts):
    """operand_table splits each row's labels once; matches() answers what it answers working them out per call."""
    from dataclasses import replace

    from gpusleuth.facts.operands import operand_table

    specs, _ = operand_table()
    unsplit = [replace(s, split_labels=None) for s in specs]
    n = 0
    for name, facts in all_facts:
        c = _get(facts, Cluster)
        for p in c.pods if c is not None else ():
            assert [s.matches(p) for s in specs] == [u.matches(p) for u in unsplit], (name, p.name)
            n += 1
    assert n > 100


def test_operand_wait_lines_match_the_per_line_lookup(all_facts):
    """_wait_lines (signatures looked up at C speed) finds what a lookup per line found, in the same order."""
    from gpusleuth.facts.operands import _is_wait, _wait_lines

    seen = 0
    for name, facts in all_facts:
        g = _get(facts, OperandGraph)
        if g is None:
            continue
        for pod, plogs in g.logs.items():
            want = [(ln, s) for pl in plogs for ln in pl.lines for s in g.signatures.get((ln.artifact, ln.line), []) if _is_wait(s)]
            assert _wait_lines(plogs, g.signatures) == want, (name, pod)
            seen += len(want)
    assert seen > 5
