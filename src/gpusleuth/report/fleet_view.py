"""What every report format shows of a fleet in place of per-node detail (analysis/fleet.py groups the findings).

A report of hundreds of nodes cannot list every node's components, cascade and timeline and stay readable (a
1,000-node Markdown report was 7.7 MB, its HTML 16 MB). So the text, Markdown and HTML reports of a fleet show
the operands by name with how many are in each state, the races grouped by rule with an example node, and the
command that shows one node in full. The JSON report keeps every node's components and timeline.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusleuth.model.finding import Component, ComponentState, Finding
from gpusleuth.model.report import Report

NODES_SHOWN = 8  # node names listed for a grouped cause before "and N more"
STATES = (ComponentState.FAILED, ComponentState.BLOCKED, ComponentState.DEGRADED, ComponentState.OK, ComponentState.UNKNOWN)
STATE_WORDS = {ComponentState.FAILED: "failed", ComponentState.BLOCKED: "blocked", ComponentState.DEGRADED: "running with errors",
               ComponentState.OK: "ok", ComponentState.UNKNOWN: "not seen"}


def is_fleet(report: Report) -> bool:
    return bool(report.extras.get("fleet"))


def node_command(report: Report, command: str = "diagnose") -> str:
    """`gpusleuth diagnose --node NAME SOURCE`: one node in full."""
    return f"gpusleuth {command} --node NAME {report.source.get('description')}"


def group_of(f: Finding) -> dict | None:
    """The fleet group a grouped cause carries (`facts["fleet"]`, analysis/fleet.py), or None."""
    return f.facts.get("fleet") if isinstance(f.facts, dict) else None


def group_lines(group: dict, full: bool) -> list[str]:
    """A grouped cause's `facts["fleet"]` in words: the nodes it shows on, how they differ from the rest, and (full)
    the label values it spans and its example node."""
    nodes = group["nodes"]
    more = f" and {len(nodes) - NODES_SHOWN} more" if len(nodes) > NODES_SHOWN else ""
    lines = [f"on {len(nodes)} of {group['of_nodes']} nodes: {', '.join(nodes[:NODES_SHOWN])}{more}"]
    for d in group.get("differs", []):
        lines.append(f"differs by {d['label']}: all {d['affected']} affected nodes have {d['value']}, "
                     f"{d['others_with_it']} of the {d['others']} other nodes do")
    if full:
        for dim, counts in group.get("groups", {}).items():
            if len(counts) > 1 or not group.get("differs"):
                lines.append(f"{dim}: " + ", ".join(f"{v} ({n})" for v, n in list(counts.items())[:4]) + (" …" if len(counts) > 4 else ""))
        lines.append(f"example below: node {group['example_node']} (any node in full: diagnose --node NAME)")
    return lines


def names_counted(components: list[Component]) -> str:
    """"a, b": each name once, with how many there are when a name repeats (one per node in a fleet)."""
    counts: dict[str, int] = {}
    for c in components:
        counts[c.name] = counts.get(c.name, 0) + 1
    return ", ".join(f"{name} ({n})" if n > 1 else name for name, n in counts.items())


@dataclass(frozen=True)
class OperandRow:
    """One operand across the fleet: how many of its pods are in each state."""

    name: str
    layer: str
    states: dict[ComponentState, int]

    def summary(self) -> str:
        return ", ".join(f"{self.states[s]} {STATE_WORDS[s]}" for s in STATES if self.states.get(s))


def operand_rows(report: Report) -> list[OperandRow]:
    """The operands in the order the report lists them, the most failed first."""
    rows: dict[str, OperandRow] = {}
    for c in report.components:
        row = rows.get(c.name) or rows.setdefault(c.name, OperandRow(c.name, c.layer.value, {}))
        row.states[c.state] = row.states.get(c.state, 0) + 1
    return sorted(rows.values(), key=lambda r: (-r.states.get(ComponentState.FAILED, 0), -r.states.get(ComponentState.BLOCKED, 0)))


@dataclass(frozen=True)
class RaceGroup:
    """The races of one ordering rule across the fleet: the nodes it broke on and one of them as the example."""

    certain: bool
    title: str
    nodes: tuple[str, ...]
    example: dict  # the first violation: node, summary, first and then evidence


def race_groups(report: Report) -> list[RaceGroup]:
    by_rule: dict[str, list[dict]] = {}
    for v in (report.extras.get("ordering") or {}).get("violations", []):
        by_rule.setdefault(v["rule"], []).append(v)
    return [RaceGroup(same[0]["certain"], same[0]["title"], tuple(sorted({x["node"] or "?" for x in same})), same[0])
            for same in by_rule.values()]
