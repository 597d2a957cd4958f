"""The timeline as people read it: one lane per operator/component, the race window marked,
"what should have happened vs what happened", the marker-file tree, and the Markdown report's "Event
Sequence".

Every function takes plain data (timeline entries and the dicts analysis/ordering.py builds for the report),
so the terminal command, the text report and the Markdown report render the same thing.
"""

from __future__ import annotations

import io
import textwrap
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from gpusleuth.facts.timeline import sort_time, when
from gpusleuth.model.report import Report, TimelineEntry

if TYPE_CHECKING:  # rich is imported where a table is drawn: the Markdown report's timeline needs none (~35 ms)
    from rich.text import Text

UTC = timezone.utc
# How each kind of entry is marked in a lane: presentation only, the meaning is in the tag.
_MARK = {
    "component-start": ("▶", "bold"), "compile-start": ("⚙", "cyan"), "compile-end": ("⚙", "cyan"),
    "install-start": ("⇩", "cyan"), "install-end": ("✔", "green"), "module-loaded": ("✔", "green"),
    "marker-set": ("⚑", "bold green"), "marker-unset": ("⚐", "yellow"), "waiting": ("⏳", "yellow"),
    "container-restart": ("↻", "magenta"), "pod-scheduled": ("◆", ""), "plugin-registered": ("✔", "green"),
}
_FAIL_WORDS = ("failed", "crash", "error", "missing", "xid")


def _mark(tag: str | None) -> tuple[str, str]:
    if tag is None:
        return "·", "grey50"
    if tag in _MARK:
        return _MARK[tag]
    return ("✖", "bold red") if any(w in tag for w in _FAIL_WORDS) else ("•", "")


def in_window(e: TimelineEntry, violations: list[dict]) -> dict | None:
    """The violation whose race window (late event .. the event it had to wait for) this entry falls in."""
    t = sort_time(e)
    if t is None:
        return None
    for v in violations:
        lo, hi = (datetime.fromisoformat(x) if x else None for x in v["window"])
        if lo and hi and lo <= t <= hi and e.source in v["lanes"]:
            return v
    return None


def _is_offender(e: TimelineEntry, violations: list[dict]) -> bool:
    return any(v["then"]["artifact"] == e.artifact and v["then"]["line"] == e.line for v in violations)


def render_lanes(entries: list[TimelineEntry], violations: list[dict] = (), width: int = 140, color: bool = False,
                 max_lanes: int = 4, by_operator: bool = True) -> str:
    """The timeline as a table: time, one column per lane, the race state, and where each line is.

    Lanes are operators by default (a peermem race has two: Network Operator, GPU Operator), each entry prefixed
    with its component; by_operator=False gives one lane per component. Runs of the same signature in a
    lane collapse into one row ("×5") citing the line range."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buf = io.StringIO()
    con = Console(file=buf, width=width, force_terminal=color, color_system="truecolor" if color else None, highlight=False)
    lane_of = _operator if by_operator else (lambda source: source)
    timed = [e for e in entries if sort_time(e)]
    shown_v = [{**v, "lanes": [lane_of(x) for x in v["lanes"] if x]} for v in violations]
    lanes = _lanes(timed, shown_v, lane_of)[:max_lanes]
    hidden = {lane_of(e.source) for e in timed if e.source} - set(lanes)
    mixed = {lane for lane in lanes if len({e.source for e in timed if e.source and lane_of(e.source) == lane}) > 1}
    table = Table(show_edge=False, box=None, pad_edge=False, expand=True, show_lines=False, header_style="bold")
    table.add_column("time", no_wrap=True, min_width=12)
    for lane in lanes:
        table.add_column(lane, overflow="fold", ratio=3)  # wrapped, never cut: the message is what the user reads
    table.add_column("", no_wrap=True, min_width=13)
    table.add_column("line", no_wrap=True, min_width=30, style="grey50")
    last_when = None
    for run in _runs([e for e in timed if e.source and lane_of(e.source) in lanes], violations):
        e, n, last = run[0], len(run), run[-1]
        stamp = when(e)
        lane = lane_of(e.source)
        cells = [Text("") for _ in lanes]
        mark, style = _mark(e.tag)
        offender = any(_is_offender(x, violations) for x in run)
        cell = Text(f"{mark} ", style=style)
        if lane in mixed:
            cell.append(f"{_component(e.source)}: ", style="grey50")
        cell.append(e.text + (f" (×{n})" if n > 1 else ""), style="bold red" if offender else ("grey50" if e.tag is None else ""))
        cells[lanes.index(lane)] = cell
        state = Text("")
        if offender:
            state = Text("✖ RACE", style="bold red")
        elif in_window(e, violations):
            state = Text("┃ race window", style="red")
        table.add_row(Text(stamp if stamp != last_when else ""), *cells, state, _cite(e, last if n > 1 else None))
        last_when = stamp
    con.print(table)
    if hidden:
        con.print(Text(f"(+{len(hidden)} more lane(s) not shown: {', '.join(sorted(hidden))}; use --component)", style="grey50"))
    rel = [e for e in entries if not sort_time(e)]
    if rel:
        con.rule("Not on the clock (relative or unknown time)")
        for e in rel:
            con.print(Text(f"  {e.source or '-'}  {e.artifact}:{e.line}  ({e.note})"), soft_wrap=True)
            con.print(Text(f"      {e.text}"), soft_wrap=True)
    return buf.getvalue()


def _operator(source: str | None) -> str | None:
    return source.split("/", 1)[0] if source else source


def _component(source: str) -> str:
    """`gpu-operator/nvidia-driver-daemonset` -> `driver`: the component's name without the usual affixes."""
    name = source.rsplit("/", 1)[-1]
    for affix in ("nvidia-", "gpu-operator-"):
        name = name.removeprefix(affix)
    return name.removesuffix("-daemonset")


def _runs(entries: list[TimelineEntry], violations: list[dict]) -> list[list[TimelineEntry]]:
    """Consecutive entries of one lane, signature and time that say the same thing (five `Skipping BTF
    generation` lines), as one run; the entries a race finding names always stand alone."""
    runs: list[list[TimelineEntry]] = []
    for e in entries:
        prev = runs[-1][-1] if runs else None
        if (prev is not None and e.signature and e.signature == prev.signature and e.source == prev.source
                and e.artifact == prev.artifact and when(e) == when(prev)
                and not _is_offender(e, violations) and not _is_offender(prev, violations)):
            runs[-1].append(e)
        else:
            runs.append([e])
    return runs


def _cite(e: TimelineEntry, last: TimelineEntry | None = None) -> Text:
    """artifact:line (or line range), the file name shortened from the middle so the line number shows."""
    from rich.text import Text

    name = e.artifact.rsplit("/", 1)[-1]
    if len(name) > 26:
        name = name[:12] + "…" + name[-13:]
    return Text(f"{name}:{e.line}" + (f"–{last.line}" if last is not None and last.line != e.line else ""))


def _lanes(entries: list[TimelineEntry], violations: list[dict], lane_of=lambda source: source) -> list[str]:
    """Lanes in reading order: those in a race first (the waited-for side on the left), then by
    number of tagged entries."""
    first = [lane for v in violations for lane in v["lanes"] if lane]
    counts: dict[str, int] = {}
    for e in entries:
        if e.source:
            lane = lane_of(e.source)
            counts[lane] = counts.get(lane, 0) + (1 if e.tag else 0)
    rest = sorted((lane for lane in counts if lane not in first), key=lambda lane: -counts[lane])
    return list(dict.fromkeys(first + rest))


def render_should_vs_happened(pictures: list[dict], width: int = 110) -> str:
    """The "should have happened" and "happened" boxes, per violation."""
    out = []
    col = (width - 8) // 2
    for p in pictures:
        left, right = p["first_lane"] or "-", p["then_lane"] or "-"
        out.append(_box("WHAT SHOULD HAVE HAPPENED", left, right,
                        [f"{i}. {_short(s)}" for i, s in enumerate(p["should"]["first"], 1)],
                        [f"{i}. {_short(s)}" for i, s in enumerate(p["should"]["then"], 1)],
                        f"(sequential: {p['should']['arrow'][0]}  ──>  {p['should']['arrow'][1]})", col))
        out.append(_box("WHAT ACTUALLY HAPPENED", left, right,
                        [f"{'✓' if ok else '✗'} {w:<12} {_short(s)}" for w, s, ok in p["happened"]["first"]],
                        [f"{'✓' if ok else '✗'} {w:<12} {_short(s, 90)}" for w, s, ok in p["happened"]["then"]],
                        f"(missed: {p['missed']})", col))
    return "\n".join(out)


def _box(title: str, left: str, right: str, a: list[str], b: list[str], footer: str, col: int) -> str:
    inner = col * 2 + 4
    lines = ["┌" + "─" * inner + "┐", "│" + title.center(inner) + "│", "├" + "─" * inner + "┤",
             "│ " + left[:col].ljust(col) + "  " + right[:col].ljust(col) + " │",
             "│ " + ("─" * min(len(left), col)).ljust(col) + "  " + ("─" * min(len(right), col)).ljust(col) + " │"]
    wrapped_a = [w for s in a for w in _wrap(s, col)]
    wrapped_b = [w for s in b for w in _wrap(s, col)]
    for i in range(max(len(wrapped_a), len(wrapped_b))):
        x = wrapped_a[i] if i < len(wrapped_a) else ""
        y = wrapped_b[i] if i < len(wrapped_b) else ""
        lines.append("│ " + x.ljust(col) + "  " + y.ljust(col) + " │")
    for f in _wrap(footer, inner - 2):
        lines.append("│ " + f.center(inner - 2) + " │")
    lines.append("└" + "─" * inner + "┘")
    return "\n".join(lines)


def _short(s: str, n: int = 56) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _wrap(s: str, n: int) -> list[str]:
    if len(s) <= n:
        return [s]
    out, cur = [], ""
    for word in s.split(" "):
        if cur and len(cur) + 1 + len(word) > n:
            out.append(cur)
            cur = " " * 15 + word
        else:
            cur = f"{cur} {word}" if cur else word
    out.append(cur)
    return [x[:n] for x in out]


def render_marker_tree(markers: list[dict]) -> str:
    """The 'Files Being Checked (or not checked)' tree, grouped by directory."""
    if not markers:
        return ""
    by_dir: dict[str, list[dict]] = {}
    for m in sorted(markers, key=lambda m: m["path"]):
        d, _, name = m["path"].rpartition("/")
        by_dir.setdefault(d, []).append(m)
    out = ["Host filesystem"]
    dirs = list(by_dir)
    for di, d in enumerate(dirs):
        last_dir = di == len(dirs) - 1
        out.append(("└─ " if last_dir else "├─ ") + d + "/")
        pad = "   " if last_dir else "│  "
        items = by_dir[d]
        for mi, m in enumerate(items):
            last = mi == len(items) - 1
            name = m["path"].rsplit("/", 1)[-1]
            who = m["producer_container"] or m["producer"] or "?"
            ok = bool(m["set"])
            out.append(pad + ("└─ " if last else "├─ ") + f"{name:<28} ← {'created by' if ok else 'should be created by'} {who}"
                       + (f" ({m['producer']})" if m["producer"] and m["producer"] != who else ""))
            sub = pad + ("   " if last else "│  ") + " " * 31
            out.append(sub + ("✓ " if ok else "✗ ") + m["status"] + (f"  [{m['set'][-1]['cite']}]" if ok else ""))
            for u in m["unset"]:
                out.append(sub + f"⚐ removed {u['when']} by {u['container'] or '?'}  [{u['cite']}]")
            checked = list(dict.fromkeys(c["container"] for c in m["checked_by"]))
            for c in checked:
                seen = [w for w in m["waited"] if w["container"] == c]
                out.append(sub + f"✓ checked by: {c}" + (f"  [{seen[0]['cite']}]" if seen else ""))
            for n in m["not_checked_by"]:
                out.append(sub + f"✗ NOT checked by: {n['container'] or n['component']}  [{n['cite']}]")
    return "\n".join(out)


def select(entries: list[TimelineEntry], since: datetime | None = None, until: datetime | None = None,
           node: str | None = None, components: tuple[str, ...] = ()) -> list[TimelineEntry]:
    """The entries the `timeline` command's filters keep: within [since, until] (an interval overlapping it
    counts), on node (entries whose node is unknown stay), in one of the components (lane or its last part)."""
    out = []
    for e in entries:
        lo, hi = (e.time, e.time) if e.time and not e.approximate else (e.earliest, e.latest)
        if since and (hi or lo) and (hi or lo) < since:
            continue
        if until and (lo or hi) and (lo or hi) > until:
            continue
        if node and e.node not in (node, None):
            continue
        if components and not any(c == e.source or (e.source or "").endswith("/" + c) or c in (e.container or "") for c in components):
            continue
        out.append(e)
    return out


def parse_when(value: str | None, day: datetime | None) -> datetime | None:
    """--since/--until: `11:55`, `11:55:30` (UTC, on the timeline's first day) or ISO 8601."""
    if not value:
        return None
    v = value.strip()
    if "T" in v or v.count("-") >= 2:
        t = datetime.fromisoformat(v.replace("Z", "+00:00"))
        return t if t.tzinfo else t.replace(tzinfo=UTC)
    parts = v.split(":")
    if not (2 <= len(parts) <= 3 and all(p.isdigit() for p in parts)):
        raise ValueError(f"cannot read time {value!r}: use HH:MM, HH:MM:SS or ISO 8601")
    base = (day or datetime.now(UTC)).astimezone(UTC)
    return base.replace(hour=int(parts[0]), minute=int(parts[1]), second=int(parts[2]) if len(parts) == 3 else 0, microsecond=0)


def render_timeline_command(report: Report, since, until, node, components, fmt: str, color: bool, width: int):
    """What `gpusleuth timeline` prints: (text, the entries kept, the violations) so --svg draws the same."""
    import json

    ordering = report.extras.get("ordering") or {}
    violations = [v for v in ordering.get("violations", []) if not node or v["node"] in (node, None)]
    entries = select(list(report.timeline), since, until, node, components)
    if fmt == "json":
        doc = {
            "schema": "gpusleuth/timeline/v1",
            "source": report.source.get("description"),
            "timeline": [e.to_dict() for e in entries],
            "phases": report.extras.get("phases", []),
            "ordering": ordering,
            "markers": report.extras.get("markers", []),
            "notes": report.extras.get("timeline_notes", []),
            "gaps": [str(g) for g in report.gaps],
        }
        return json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n", entries, violations
    fleet = report.extras.get("fleet")
    if fleet and not node:  # the lanes of hundreds of nodes, one under the other, are no timeline of anything
        return _fleet_races(report, fleet, width), [], violations
    parts = [render_lanes(entries, violations, width=width, color=color, by_operator=not components)]
    if report.extras.get("phases"):
        parts.append("Phases:\n" + "\n".join(f"  {p}" for p in report.extras["phases"]))
    for v in violations:
        parts.append(f"{'RACE' if v['certain'] else 'PROBABLE RACE'} on {v['node'] or 'the node'}: {v['summary']}\n"
                     f"  late:     {v['then']['artifact']}:{v['then']['line']}  {v['then']['text']}\n"
                     + (f"  awaited:  {v['first']['artifact']}:{v['first']['line']}  {v['first']['text']}" if v["first"] else ""))
    if ordering.get("should_vs_happened"):
        parts.append(render_should_vs_happened(ordering["should_vs_happened"], width=min(width, 120)))
    tree = render_marker_tree(report.extras.get("markers") or [])
    if tree:
        parts.append(tree)
    if report.extras.get("timeline_notes"):
        parts.append("How the clocks were lined up:\n" + "\n".join(f"  - {n}" for n in report.extras["timeline_notes"]))
    not_evaluated = [r for r in ordering.get("results", []) if r["status"] == "not-evaluated"]
    if not_evaluated:
        parts.append("Ordering rules not evaluated (gaps):\n" + "\n".join(f"  - {r['rule']}: {r['reason']}" for r in not_evaluated))
    return "\n\n".join(p.rstrip("\n") for p in parts) + "\n", entries, violations


def _fleet_races(report: Report, fleet: dict, width: int) -> str:
    """A fleet's timeline without --node: its races grouped by rule, the nodes each broke on, and how to see one node."""
    from gpusleuth.report.fleet_view import NODES_SHOWN, node_command, race_groups

    out = [f"{fleet['nodes']} nodes: each has its own timeline. One node's lanes, races and markers: "
           f"{node_command(report, 'timeline')}"]
    groups = race_groups(report)
    if not groups:
        out.append("No ordering rule was broken on any node.")
    for g in groups:
        more = f" and {len(g.nodes) - NODES_SHOWN} more" if len(g.nodes) > NODES_SHOWN else ""
        out.append(f"{'RACE' if g.certain else 'PROBABLE RACE'} on {len(g.nodes)} node(s): {g.title}\n"
                   + textwrap.fill(f"e.g. {g.example['node'] or 'the node'}: {g.example['summary']}", width, initial_indent="  ",
                                   subsequent_indent="    ")
                   + "\n" + textwrap.fill(f"nodes: {', '.join(g.nodes[:NODES_SHOWN])}{more}", width, initial_indent="  ",
                                          subsequent_indent="    "))
    return "\n\n".join(out) + "\n"


def render_text_timeline(report: Report, width: int = 110) -> str:
    """The whole timeline section for the text report (lanes, phases, races, markers, clock notes)."""
    ordering = report.extras.get("ordering") or {}
    parts = [render_lanes(list(report.timeline), ordering.get("violations", []), width=width)]
    if report.extras.get("phases"):
        parts.append("Phases:\n" + "\n".join(f"  {p}" for p in report.extras["phases"]))
    if ordering.get("should_vs_happened"):
        parts.append(render_should_vs_happened(ordering["should_vs_happened"], width=width))
    tree = render_marker_tree(report.extras.get("markers") or [])
    if tree:
        parts.append(tree)
    if report.extras.get("timeline_notes"):
        parts.append("How the clocks were lined up:\n" + "\n".join(f"  - {n}" for n in report.extras["timeline_notes"]))
    return "\n\n".join(parts) + "\n"


def render_markdown_timeline(report: Report) -> str:
    """The body of the Markdown report's "Event Sequence" section (the Markdown report adds the heading): the race, the
    synchronized timeline, phases, should-vs-happened, the marker tree and how the clocks were lined up."""
    entries = [e for e in report.timeline if e.tag]
    if not entries:
        return ""
    ordering = report.extras.get("ordering") or {}
    violations = ordering.get("violations", [])
    out: list[str] = []
    for v in violations:
        out.append(f"**Race ({'certain' if v['certain'] else 'probable'}):** {v['summary']} "
                   f"(`{v['then']['artifact']}:{v['then']['line']}` vs `{v['first']['artifact']}:{v['first']['line']}`)." if v["first"]
                   else f"**Race:** {v['summary']} (`{v['then']['artifact']}:{v['then']['line']}`).")
        out.append("")
    out += ["```", "Synchronized Timeline (all times UTC):"]
    groups: list[tuple[str, list[TimelineEntry]]] = []
    for e in entries:
        if not sort_time(e):
            continue
        stamp = when(e)
        if groups and groups[-1][0] == stamp:
            groups[-1][1].append(e)
        else:
            groups.append((stamp, [e]))
    for gi, (stamp, items) in enumerate(groups):
        last_group = gi == len(groups) - 1
        head = "└─ " if last_group else "├─ "
        cont = "   " if last_group else "│  "
        for i, e in enumerate(items):
            flag = " ❌" if _is_offender(e, violations) else (" ⚠️" if in_window(e, violations) else "")
            prefix = (head + f"{stamp} - ") if i == 0 else (cont + " " * (len(stamp) + 3))
            out.append(f"{prefix}{e.source or '-'}: {e.text[:110]}{flag}  [{e.artifact.rsplit('/', 1)[-1]}:{e.line}]")
        if not last_group:
            out.append("│")
    out.append("```")
    if report.extras.get("phases"):
        out += ["", "**Phases:**", ""] + [f"- {p}" for p in report.extras["phases"]]
    if ordering.get("should_vs_happened"):
        out += ["", "```", render_should_vs_happened(ordering["should_vs_happened"]), "```"]
    tree = render_marker_tree(report.extras.get("markers") or [])
    if tree:
        out += ["", "**Files being checked (or not checked):**", "", "```", tree, "```"]
    if report.extras.get("timeline_notes"):
        out += ["", "<details><summary>How the clocks were lined up</summary>", ""]
        out += [f"- {n}" for n in report.extras["timeline_notes"]]
        out += ["", "</details>"]
    return "\n".join(out) + "\n"


__all__ = ["in_window", "parse_when", "render_lanes", "render_timeline_command", "select", "render_marker_tree", "render_markdown_timeline", "render_should_vs_happened",
           "render_text_timeline"]
