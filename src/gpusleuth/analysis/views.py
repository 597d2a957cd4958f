"""Report views: named builders from Facts to extra report sections. Registry by listing."""

from __future__ import annotations

from typing import Callable

from gpusleuth.facts import Facts

VIEWS: dict[str, Callable[[Facts], dict]] = {}


def operands(facts: Facts) -> dict:
    """Every operand per node (failed / blocked by whom / degraded / ok / unknown) and the cascade picture."""
    from gpusleuth.facts.operands import OperandGraph
    from gpusleuth.report.cascade import render_text

    graph = facts.get(OperandGraph)
    return {"components": list(graph.components), "cascade_text": render_text(graph.components)}


VIEWS["operands"] = operands


def timeline(facts: Facts) -> dict:
    """The merged timeline, ordering violations with "should have happened vs happened", the marker tree."""
    from gpusleuth.analysis.ordering import timeline_view

    return timeline_view(facts)


VIEWS["timeline"] = timeline


def seen_before(facts: Facts) -> dict:
    """The public incidents whose lines and conditions match (analysis/seen_before.py)."""
    from gpusleuth.analysis.seen_before import seen_before_view

    return seen_before_view(facts)


VIEWS["seen_before"] = seen_before
