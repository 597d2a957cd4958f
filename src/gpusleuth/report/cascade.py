"""The operand cascade as a picture: the failed component in a box at the top, arrows labelled
with the readiness marker it would have created, the components blocked behind it beneath, the ones running
with errors aside, a dependency-chain summary and a legend. Text (box drawing, fits `width` columns) and
Mermaid (for Markdown). Drawn from the report's components alone, so it works for any operand graph.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict

from gpusleuth.model.finding import Component, ComponentState

WIDTH = 100
_SMALL = 30  # a box in a row of up to three
_PER_ROW = 3
_WORD = {
    ComponentState.FAILED: "FAILED",
    ComponentState.BLOCKED: "BLOCKED",
    ComponentState.DEGRADED: "ERRORS",
    ComponentState.OK: "OK",
    ComponentState.UNKNOWN: "UNKNOWN",
}
_CHAIN_WORD = {
    ComponentState.FAILED: "FAILS",
    ComponentState.BLOCKED: "WAITS",
    ComponentState.DEGRADED: "RUNS but ERRORS",
    ComponentState.OK: "OK",
    ComponentState.UNKNOWN: "NOT SEEN",
}
# (up, down, left, right) -> the box-drawing character joining those directions
_JOIN = {
    (False, False, True, True): "─", (True, True, False, False): "│", (True, False, False, False): "│",
    (False, True, False, False): "│", (False, True, False, True): "┌", (False, True, True, False): "┐",
    (True, False, False, True): "└", (True, False, True, False): "┘", (True, False, True, True): "┴",
    (False, True, True, True): "┬", (True, True, False, True): "├", (True, True, True, False): "┤",
    (True, True, True, True): "┼", (False, False, True, False): "─", (False, False, False, True): "─",
}


def _key(c: Component) -> tuple[str, str | None]:
    return (c.name, c.node)


def _short(marker: str | None) -> str:
    return marker.rsplit("/", 1)[-1] if marker else "?"


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


class _Canvas:
    def __init__(self, width: int):
        self.width = width
        self.lines: list[str] = []
        self.rails: set[int] = set()  # columns where a vertical bus runs down beside the boxes

    def put(self, line: str = "") -> None:
        chars = list(line.ljust(self.width)[: self.width])
        for x in self.rails:
            if chars[x] == " ":
                chars[x] = "│"
        self.lines.append("".join(chars).rstrip())

    def at(self, col: int, text: str) -> None:
        self.put(" " * col + text)


def _join_line(width: int, ups: set[int], downs: set[int]) -> str:
    cols = ups | downs
    lo, hi = min(cols), max(cols)
    out = []
    for x in range(width):
        if lo <= x <= hi:
            out.append(_JOIN.get((x in ups, x in downs, x > lo, x < hi), "─"))
        else:
            out.append(" ")
    return "".join(out)


def _box_lines(c: Component, width: int, wide: bool) -> list[str]:
    inner = width - 4
    rows: list[str] = []
    head = f"{_WORD[c.state]}  " + ("FIRST TO FAIL  " if wide and c.state == ComponentState.FAILED else "")
    if wide:
        rows.append(_fit(f"{head}{c.name}  ·  {c.layer.value}", inner))
        if c.pod:
            rows.append(_fit(f"pod      {c.pod}" + (f"  (ns {c.namespace})" if c.namespace else ""), inner))
        if c.status:
            rows.append(_fit(f"status   {c.status}", inner))
        if c.state == ComponentState.BLOCKED and c.waiting_on:
            rows.append(_fit(f"waits on {c.waiting_on}", inner))
        if c.reason and c.state in (ComponentState.FAILED, ComponentState.DEGRADED, ComponentState.UNKNOWN):
            label = "error    " if c.state != ComponentState.UNKNOWN else "note     "
            for i, part in enumerate(textwrap.wrap(c.reason, inner - 9)[:2]):
                rows.append(_fit((label if i == 0 else " " * 9) + part, inner))
        cite = next((e.cite() for e in reversed(c.evidence)), None)
        if cite:
            rows.append(_fit(f"evidence {cite}", inner))
    else:
        rows.append(_WORD[c.state])
        rows.extend(_wrap_name(c.name, inner))
        if c.status:
            rows.append(_fit(c.status, inner))
        if c.state == ComponentState.BLOCKED:
            rows.append(_fit(f"waits {_short(c.waiting_on)}" if c.waiting_on else "waits (unknown)", inner))
        elif c.reason:
            rows.append(_fit(c.reason, inner))
    return ["┌" + "─" * (width - 2) + "┐", *(f"│ {r.ljust(inner)} │" for r in rows), "└" + "─" * (width - 2) + "┘"]


def _wrap_name(name: str, width: int) -> list[str]:
    """Break a long component name after its dashes (gpu-feature-/discovery), as a person would."""
    out, cur = [], ""
    for part in name.replace("-", "-\0").split("\0"):
        if cur and len(cur) + len(part) > width:
            out.append(cur)
            cur = ""
        cur += part
    out.append(cur)
    return [_fit(x, width) for x in out]


def _row(canvas: _Canvas, kids: list[Component], source: int, label: str, children: dict) -> None:
    """Arrow from `source` labelled `label`, then the kids: one wide box, or rows of small boxes fed by a
    fan-out; a bus down the right edge feeds later rows. Kids with kids of their own follow below."""
    w = canvas.width
    canvas.at(source, "│")
    text = f"│ {label}"
    canvas.at(source if source + len(text) <= w else max(0, source - len(text) + 1), _fit(text, w - source) if source + len(text) <= w else text[2:] + " │")
    placed: list[tuple[Component, int]] = []
    if len(kids) == 1:
        canvas.at(source, "▼")
        for ln in _box_lines(kids[0], w, wide=True):
            canvas.put(ln)
        placed.append((kids[0], w // 2))
    else:
        gap = max(1, (w - 2 - _PER_ROW * _SMALL) // _PER_ROW)
        bus = w - 2
        rows = [kids[i : i + _PER_ROW] for i in range(0, len(kids), _PER_ROW)]
        up = source
        for r, row in enumerate(rows):
            more = r < len(rows) - 1
            offset = (w - 2 - (len(row) * _SMALL + (len(row) - 1) * gap)) // 2  # centred, clear of the bus
            xs = [offset + i * (_SMALL + gap) for i in range(len(row))]
            centers = [x + _SMALL // 2 for x in xs]
            downs = set(centers) | ({bus} if more else set())
            canvas.rails.discard(bus)
            canvas.put(_join_line(w, {up}, downs))
            if more:
                canvas.rails.add(bus)
            canvas.put("".join("▼".rjust(c - (centers[i - 1] if i else -1)) for i, c in enumerate(centers)))
            boxes = [_box_lines(k, _SMALL, wide=False) for k in row]
            height = max(len(b) for b in boxes)
            for b in boxes:  # same height for the row: pad before the bottom edge
                b[-1:-1] = [f"│{' ' * (_SMALL - 2)}│"] * (height - len(b))
            for i in range(height):
                canvas.put("".join(" " * (xs[j] - (xs[j - 1] + _SMALL if j else 0)) + boxes[j][i] for j in range(len(row))))
            placed.extend(zip(row, centers))
            up = bus
        canvas.rails.discard(bus)
    followers = [(k, x) for k, x in placed if children.get(_key(k))]
    for n, (k, x) in enumerate(followers):
        if n:  # a second sub-cascade cannot hang from its box by a line: name where it starts
            canvas.put()
            canvas.at(max(0, x - 2), f"from {k.name}:")
        _fan(canvas, k, x, children)


def _fan(canvas: _Canvas, parent: Component, source: int, children: dict) -> None:
    kids = children.get(_key(parent), [])
    if not kids:
        return
    markers = list(dict.fromkeys(_short(k.waiting_on) for k in kids))
    _row(canvas, kids, source, "creates " + ", ".join(markers) if markers != ["?"] else "blocks", children)


def _tree(children: dict, c: Component, prefix: str, last: bool, out: list[str], width: int, seen: set) -> None:
    kids = children.get(_key(c), [])
    for i, k in enumerate(kids):
        end = i == len(kids) - 1
        what = f"{_CHAIN_WORD[k.state]} on {_short(k.waiting_on)}" if k.state == ComponentState.BLOCKED else _CHAIN_WORD[k.state]
        out.append(_fit(f"{prefix}{'└' if end else '├'}──► {k.name} ({what})", width))
        if _key(k) not in seen:
            seen.add(_key(k))
            _tree(children, k, prefix + ("      " if end else "│     "), end, out, width, seen)


def _children(components: list[Component]) -> tuple[dict, list[Component]]:
    """Who blocks whom, and the tops of the cascades (failed or unknown components that block others,
    failed ones with nothing behind them, blocked ones whose blocker is not known)."""
    by_key = {_key(c): c for c in components}
    children: dict = defaultdict(list)
    for c in components:
        if c.state == ComponentState.BLOCKED and c.blocked_by:
            parent = by_key.get((c.blocked_by, c.node)) or next((p for p in components if p.name == c.blocked_by), None)
            if parent is not None and parent is not c:
                children[_key(parent)].append(c)
                continue
    blocked_with_parent = {_key(k) for ks in children.values() for k in ks}
    tops = [c for c in components if _key(c) not in blocked_with_parent and (
        c.state == ComponentState.FAILED or c.state == ComponentState.BLOCKED or children.get(_key(c)))]
    tops.sort(key=lambda c: (c.state != ComponentState.FAILED, c.layer.rank, c.name))
    return children, tops


def _node_groups(components: list[Component]) -> list[tuple[list[str | None], list[Component]]]:
    """Nodes with the same cascade are drawn once."""
    per_node: dict[str | None, list[Component]] = defaultdict(list)
    for c in components:
        per_node[c.node].append(c)
    groups: dict[tuple, tuple[list, list]] = {}
    for node, comps in per_node.items():
        shape = tuple(sorted((c.name, c.state.value, c.blocked_by or "", c.waiting_on or "") for c in comps))
        if shape in groups:
            groups[shape][0].append(node)
        else:
            groups[shape] = ([node], comps)
    return list(groups.values())


def render_text(components: list[Component] | tuple[Component, ...], width: int = WIDTH) -> str:
    """The cascade picture for any set of components; empty when nothing failed, waits or errs."""
    components = list(components)
    if not any(c.state in (ComponentState.FAILED, ComponentState.BLOCKED, ComponentState.DEGRADED) for c in components):
        return ""
    out: list[str] = []
    for nodes, comps in _node_groups(components):
        if not any(c.state in (ComponentState.FAILED, ComponentState.BLOCKED, ComponentState.DEGRADED) for c in comps):
            continue
        canvas = _Canvas(width)
        named = [n for n in nodes if n]
        canvas.put(_fit("Node " + ", ".join(named) if named else "Node not shown in the artifacts (a pod listing without -o wide)", width))
        canvas.put()
        children, tops = _children(comps)
        for top in tops:
            for ln in _box_lines(top, width, wide=True):
                canvas.put(ln)
            _fan(canvas, top, width // 2, children)
            canvas.put()
        degraded = [c for c in comps if c.state == ComponentState.DEGRADED]
        if degraded:
            canvas.put("Aside, running but with errors (not blocked; reports what is missing above):")
            for c in degraded:
                for ln in _box_lines(c, width, wide=True):
                    canvas.put(ln)
            canvas.put()
        canvas.put("Dependency chain:")
        seen: set = set()
        for top in tops:
            canvas.put(_fit(f"  {top.name} ({_CHAIN_WORD[top.state]}{': ' + top.status if top.status else ''})", width))
            _tree(children, top, "   ", True, canvas.lines, width, seen)
        for c in degraded:
            canvas.put(_fit(f"  {c.name} ({_CHAIN_WORD[c.state]})", width))
        ok = [c.name for c in comps if c.state == ComponentState.OK]
        unseen = [c.name for c in comps if c.state == ComponentState.UNKNOWN and not children.get(_key(c))]
        if ok:
            canvas.put()
            for i, part in enumerate(textwrap.wrap(", ".join(ok), width - 9)):
                canvas.put(("Healthy  " if i == 0 else " " * 9) + part)
        if unseen:
            for i, part in enumerate(textwrap.wrap(", ".join(unseen), width - 9)):
                canvas.put(("No data  " if i == 0 else " " * 9) + part)
        out.extend(canvas.lines)
        out.append("")
    out.extend(_LEGEND)
    return "\n".join(line.rstrip() for line in out) + "\n"


_LEGEND = [
    "Legend:",
    "  FAILED   the pod crashed or cannot start; FIRST TO FAIL when nothing it waits on is failing",
    "  BLOCKED  waiting (Init:N/M, not ready) on a marker the component above never created",
    "  ERRORS   running, but its log shows errors",
    "  │ creates X ▼   X is the readiness marker the component above writes when healthy",
]


def render_mermaid(components: list[Component] | tuple[Component, ...]) -> str:
    """The same cascade as a Mermaid flowchart (GitHub and most Markdown viewers draw it)."""
    components = list(components)
    ids = {_key(c): f"c{i}" for i, c in enumerate(components)}
    lines = ["flowchart TD"]
    per_node: dict[str | None, list[Component]] = defaultdict(list)
    for c in components:
        per_node[c.node].append(c)
    for node, comps in per_node.items():
        indent = "  "
        if len(per_node) > 1:
            lines.append(f'  subgraph {ids[_key(comps[0])]}_node["node {_mm(node or "unknown")}"]')
            indent = "    "
        for c in comps:
            detail = c.status or ("no pod seen" if c.state == ComponentState.UNKNOWN else "")
            if c.state == ComponentState.DEGRADED:
                detail = f"{detail} · errors".strip(" ·")
            label = f"{_WORD[c.state]}: {c.name}" + (f"<br/>{detail}" if detail else "")
            lines.append(f'{indent}{ids[_key(c)]}["{_mm(label)}"]:::{c.state.value}')
        if len(per_node) > 1:
            lines.append("  end")
    children, _ = _children(components)
    for parent_key, kids in children.items():
        for k in kids:
            lines.append(f'  {ids[parent_key]} -->|"{_mm(_short(k.waiting_on))}"| {ids[_key(k)]}')
    lines += [
        "  classDef failed fill:#f8d7da,stroke:#c0392b,color:#000",
        "  classDef blocked fill:#fff3cd,stroke:#b7950b,color:#000",
        "  classDef degraded fill:#f3e5f5,stroke:#8e44ad,color:#000",
        "  classDef ok fill:#d4edda,stroke:#1e8449,color:#000",
        "  classDef unknown fill:#eeeeee,stroke:#888888,color:#000",
    ]
    return "\n".join(lines) + "\n"


def _mm(text: str) -> str:
    return text.replace('"', "#quot;").replace("<br/>", "\0").replace("<", "#lt;").replace(">", "#gt;").replace("\0", "<br/>")
