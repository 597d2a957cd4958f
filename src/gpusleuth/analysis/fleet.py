"""Fleet grouping: the same cause on many nodes is one root cause "on N of M nodes", not N numbered ones.

A step after ranking (analysis/rank.py). Findings group when they share a cause: the same check code, role,
component, caused_by and decisive message (the title, with the node's name taken out and names, numbers and hashes
normalised as checks/accounting.py `normalise` does). A group of findings on two or more nodes becomes one
finding: the first of them (in rank order) is kept whole as the example, with its title saying on how
many of the fleet's nodes it shows, and `facts["fleet"]` (docs/report.md) carrying

  nodes         every node it shows on (sorted)
  of_nodes      how many nodes the artifacts know of (M in "on N of M nodes")
  example_node  the node whose evidence and explanation are shown in full
  members       one record per grouped finding: id, node, component, title and all its evidence
  groups        per node label the artifacts show (instance type, node pool, GPU product, driver version,
                kernel): value -> how many of the nodes carry it
  differs       the labels where the affected nodes differ from the rest: a value every affected node
                has and at most a quarter of the other nodes have ("only nodes with kernel X fail")

Findings on one node, cluster-wide findings and groups of one stay exactly as ranking left them, so a
single-node report is unchanged. `focus` keeps one node's findings whole instead (`diagnose --node NAME`).
"""

from __future__ import annotations

from dataclasses import replace

from gpusleuth.checks.accounting import normalise
from gpusleuth.model.finding import Finding, Severity

# Node labels a fleet is told apart by, per dimension: the first label present wins.
DIMENSIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("instance type", ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")),
    ("node pool", ("cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "kubernetes.azure.com/agentpool",
                   "karpenter.sh/nodepool", "alpha.eksctl.io/nodegroup-name", "node-pool", "nodepool", "pool")),
    ("GPU product", ("nvidia.com/gpu.product",)),
    ("driver version", ("nvidia.com/cuda.driver-version.full", "nvidia.com/cuda.driver.major")),
    ("kernel", ("feature.node.kubernetes.io/kernel-version.full",)),
)


def node_labels(nodes: dict) -> dict[str, dict[str, str]]:
    """node name -> {dimension: value} from what the artifacts show of each node (labels, nodeInfo)."""
    out: dict[str, dict[str, str]] = {}
    for name, node in nodes.items():
        labels = getattr(node, "labels", None) or {}
        dims: dict[str, str] = {}
        for dim, keys in DIMENSIONS:
            value = next((str(labels[k]) for k in keys if labels.get(k) not in (None, "")), None)
            if dim == "driver version" and value and keys[1] in labels and keys[0] not in labels:
                value = ".".join(str(labels.get(f"nvidia.com/cuda.driver.{p}", "")) for p in ("major", "minor", "rev")).strip(".")
            if dim == "kernel" and not value:
                value = getattr(node, "kernel_version", None)
            if value:
                dims[dim] = value
        out[name] = dims
    return out


def cause_key(f: Finding) -> tuple:
    """What makes two findings the same cause: code, role, component, what ranking linked it to, and the
    decisive message."""
    title = f.title.replace(f.node, "<node>") if f.node else f.title
    return (f.code, f.role, f.component, f.caused_by, normalise(title))


def group(roots: list[Finding], findings: list[Finding], fleet_nodes: list[str], labels: dict[str, dict[str, str]]
          ) -> tuple[list[Finding], list[Finding], dict | None]:
    """(root causes, findings, fleet summary) with every cause seen on several nodes made one finding.
    Without such a cause, the inputs come back unchanged and the summary is None."""
    members: dict[tuple, list[Finding]] = {}
    for f in findings:
        if f.node:
            members.setdefault(cause_key(f), []).append(f)
    grouped = {k: fs for k, fs in members.items() if len({f.node for f in fs}) > 1}
    if not grouped:
        return roots, findings, None
    known = sorted(set(fleet_nodes) | {f.node for f in findings if f.node})
    merged = {k: _merge(fs, len(known), labels) for k, fs in grouped.items()}
    out_findings = _collapse(findings, merged)
    out_roots = _collapse(roots, merged)
    # Top causes first: what breaks GPUs, then the causes on most nodes; rank's order otherwise.
    order = {id(f): i for i, f in enumerate(out_roots)}
    out_roots.sort(key=lambda f: (f.severity.weight < Severity.ERROR.weight, bool(f.caused_by), -_count(f), order[id(f)]))
    summary = _summary(out_roots, out_findings, known, labels)
    return out_roots, out_findings, summary


def _count(f: Finding) -> int:
    fleet = f.facts.get("fleet") if isinstance(f.facts, dict) else None
    return len(fleet["nodes"]) if fleet else 1


def _collapse(findings: list[Finding], merged: dict[tuple, Finding]) -> list[Finding]:
    """Each grouped cause once, where its first member stood; the other members dropped."""
    out, done = [], set()
    for f in findings:
        k = cause_key(f) if f.node else None
        if k in merged:
            if k not in done:
                done.add(k)
                out.append(merged[k])
            continue
        out.append(f)
    return out


def _merge(fs: list[Finding], of_nodes: int, labels: dict[str, dict[str, str]]) -> Finding:
    example = fs[0]
    nodes = sorted({f.node for f in fs})
    fleet = {
        "nodes": nodes,
        "of_nodes": of_nodes,
        "example_node": example.node,
        "groups": _groups(nodes, labels),
        "differs": _differs(nodes, labels),
        "members": [{"id": f.id, "node": f.node, "component": f.component, "title": f.title,
                     "evidence": [e.to_dict() for e in f.evidence]} for f in fs],
    }
    title = f"{example.title} — on {len(nodes)} of {of_nodes} nodes"
    return replace(example, title=title, facts={**example.facts, "fleet": fleet})


def _groups(nodes: list[str], labels: dict[str, dict[str, str]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for dim, _ in DIMENSIONS:
        counts: dict[str, int] = {}
        for n in nodes:
            v = labels.get(n, {}).get(dim)
            if v:
                counts[v] = counts.get(v, 0) + 1
        if counts:
            out[dim] = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return out


def _differs(nodes: list[str], labels: dict[str, dict[str, str]]) -> list[dict]:
    """Label values every affected node has and at most a quarter of the other labelled nodes have."""
    affected = set(nodes)
    others = [n for n in labels if n not in affected]
    out = []
    for dim, _ in DIMENSIONS:
        values = {labels.get(n, {}).get(dim) for n in nodes}
        if len(values) != 1 or None in values:
            continue
        value = values.pop()
        labelled = [n for n in others if labels[n].get(dim)]
        same = sum(1 for n in labelled if labels[n][dim] == value)
        if labelled and same * 4 <= len(labelled):
            out.append({"label": dim, "value": value, "affected": len(nodes), "others_with_it": same, "others": len(labelled)})
    return out


def _summary(roots: list[Finding], findings: list[Finding], known: list[str], labels: dict[str, dict[str, str]]) -> dict:
    """The fleet table: per root cause how many nodes; how many nodes show no finding at error or above."""
    failing = {m["node"] for f in findings if f.severity.weight >= Severity.ERROR.weight
               for m in (f.facts.get("fleet", {}).get("members") or [{"node": f.node}]) if m["node"]}
    rows = []
    for f in roots:
        fleet = f.facts.get("fleet")
        rows.append({"id": f.id, "code": f.code, "title": f.title.rsplit(" — on ", 1)[0] if fleet else f.title, "severity": f.severity.value,
                     "nodes": len(fleet["nodes"]) if fleet else (1 if f.node else None),
                     "example_node": fleet["example_node"] if fleet else f.node,
                     "differs": [f"{d['label']} {d['value']}" for d in fleet["differs"]] if fleet else []})
    return {"nodes": len(known), "failing_nodes": len(failing), "without_errors": len(known) - len(failing),
            "labelled_nodes": sum(1 for n in known if labels.get(n)), "causes": rows}


def focus(roots: list[Finding], findings: list[Finding], node: str) -> tuple[list[Finding], list[Finding]]:
    """One node in full: its findings and the cluster-wide ones, ungrouped."""
    keep = lambda f: f.node is None or f.node == node  # noqa: E731
    return [f for f in roots if keep(f)], [f for f in findings if keep(f)]
