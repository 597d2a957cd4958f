"""KD001 asks the whole cluster the same questions once per failing node; its lookups answer what the scans they
replaced answered (same objects, same order), on every bundled example and a generated fleet."""

import sys
from pathlib import Path

from gpusleuth.analysis.diagnose import build_facts
from gpusleuth.analysis.ordering import Ordering
from gpusleuth.checks import kernel_driver as kd
from gpusleuth.errors import NotApplicable
from gpusleuth.facts import OperandGraph
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.logs import Logs
from gpusleuth.sources import examples_root, open_source

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

SIGS = [kd.SIG_MOFED_UNSET, kd.SIG_MOFED_SET, kd.SIG_WAIT_MOFED, kd.SIG_MOFED_SOURCES, kd.SIG_RDMA_ON,
        kd.SIG_PEERMEM_SYMVER, kd.SIG_PEERMEM_UNKNOWN, *kd.SIG_PEERMEM_INSERT]


def _get(facts, cls):
    try:
        return facts.get(cls)
    except NotApplicable:
        return None


def _scan_driver(graph, pod):
    drivers = [c for c in graph.components if c.name == kd.DRIVER]
    return next((c for c in drivers if pod and c.pod == pod), None) or (drivers[0] if len(drivers) == 1 else None)


def test_lookups_match_the_scans(tmp_path):
    from bench_scale import generate

    generate(tmp_path, nodes=12, failing=0.75, lines=30)
    sources = [str(d) for d in sorted(examples_root().iterdir()) if d.is_dir()] + [str(tmp_path)]
    asked = 0
    for path in sources:
        facts = build_facts(open_source(path))
        logs, graph, cluster, ordering = _get(facts, Logs), _get(facts, OperandGraph), _get(facts, Cluster), _get(facts, Ordering)
        look = kd._Lookups(graph, cluster, ordering)
        if graph is not None:
            assert look.network_operator_seen() == kd._network_operator_seen(graph)
            for pod in {c.pod for c in graph.components} | {None, "nope"}:
                assert look.driver(pod) is _scan_driver(graph, pod), (path, pod)
                asked += 1
        assert look.all_namespaces() == kd._all_namespaces(cluster)
        nodes = {p.node for p in cluster.pods} if cluster else set()
        for node in nodes | {None, "nope"}:
            assert look.race(node) is kd._race(ordering, node), (path, node)
        if logs is None:
            continue
        pods = {m.line.pod or m.log.pod for s in SIGS for m in logs.matches(s)} | {p.name for p in cluster.pods} if cluster else set()
        for sig in SIGS:
            ms = logs.matches(sig)
            for node in nodes | {None, "nope"} | {m.log.node for m in ms}:
                assert look.on_node(sig, ms, node) == [m for m in ms if kd._same_node(m, node)], (path, sig, node)
            for pod in pods | {None, "nope"}:
                assert look.of_pod(sig, ms, pod) == [m for m in ms if (m.line.pod or m.log.pod) in (pod, None)], (path, sig, pod)
            assert look.peermem(logs, sig) == kd._peermem(logs, sig)
    assert asked > 50
