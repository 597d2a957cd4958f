"""The cascade picture: seed 000's shape for the seed, and any other graph drawn by the same rules."""

import operand_seed as seed
from gpusleuth.facts import OperandGraph
from gpusleuth.model.finding import Component, ComponentState as S
from gpusleuth.model.layers import Layer
from gpusleuth.report.cascade import render_mermaid, render_text


def _seed_components():
    return seed.facts().get(OperandGraph).components


def test_seed_cascade_fits_100_columns_and_reads_top_down():
    text = render_text(_seed_components())
    lines = text.splitlines()
    assert max(len(ln) for ln in lines) <= 100
    root = next(i for i, ln in enumerate(lines) if "FIRST TO FAIL" in ln)
    first_arrow = next(i for i, ln in enumerate(lines) if "creates .driver-ctr-ready" in ln)
    second_arrow = next(i for i, ln in enumerate(lines) if "creates toolkit-ready" in ln)
    aside = next(i for i, ln in enumerate(lines) if ln.startswith("Aside"))
    assert root < first_arrow < second_arrow < aside
    assert "nvidia-driver-daemonset" in lines[root]
    assert text.count("BLOCKED") >= 7
    assert "nvidia-node-status-exporter" in "\n".join(lines[aside:])
    assert "Legend:" in text and "Dependency chain:" in text
    assert "   └──► nvidia-operator-validator (WAITS on .driver-ctr-ready)" in text


def test_any_graph_is_drawn_and_multi_row_fans_use_the_side_bus():
    mk = lambda name, state, by=None, on=None, layer=Layer.OPERATOR: Component(  # noqa: E731
        name, "node-a", layer, state, pod=f"{name}-x1", status="0/1 Init:0/1" if by else "CrashLoopBackOff", blocked_by=by, waiting_on=on)
    comps = [mk("producer", S.FAILED, layer=Layer.CONTAINER_TOOLKIT)] + [
        mk(f"consumer-{i}", S.BLOCKED, "producer", "/run/x/ready-file") for i in range(7)
    ]
    text = render_text(comps, width=100)
    assert "Node node-a" in text
    assert "creates ready-file" in text
    assert text.count("┌────────────────────────────┐") == 7  # seven small boxes, three rows
    assert max(len(ln) for ln in text.splitlines()) <= 100
    # the right-hand bus that feeds the second and third rows
    assert any(ln.rstrip().endswith("┐") for ln in text.splitlines() if "┬" in ln)


def test_identical_nodes_are_drawn_once_and_healthy_clusters_draw_nothing():
    a = Component("nvidia-driver-daemonset", "n1", Layer.KERNEL_DRIVER, S.FAILED, status="CrashLoopBackOff")
    b = Component("nvidia-driver-daemonset", "n2", Layer.KERNEL_DRIVER, S.FAILED, status="CrashLoopBackOff")
    text = render_text([a, b])
    assert "Node n1, n2" in text and text.count("FAILED  FIRST TO FAIL") == 1
    assert render_text([Component("mofed", "n1", Layer.KERNEL_DRIVER, S.OK)]) == ""


def test_mermaid_has_an_edge_per_blocked_component_labelled_with_the_marker():
    text = render_mermaid(_seed_components())
    assert text.startswith("flowchart TD")
    assert text.count("-->|") == 7
    assert '-->|".driver-ctr-ready"|' in text and '-->|"toolkit-ready"|' in text
    assert ":::failed" in text and ":::degraded" in text
