"""The timeline as an SVG a person would paste into a postmortem: one lane per operator/component, a time
axis in UTC, exact events as dots, untimed lines as the interval their neighbours allow, and each race
window shaded with the measured gap written on it.

Geometry is computed here; the markup is a small jinja2 template with autoescaping on, so log text can never
inject markup. No plotting library: the picture has to stay the same across machines. Every text is measured
(text_width, DejaVu Sans advance widths, the widest of the fonts named) and placed so that it stays on the
canvas and clear of every other text; only SVG 1.1 is used (a label's white halo is a second text drawn
under it, not SVG 2's paint-order), so browsers, librsvg and cairosvg draw the same picture.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jinja2 import Environment

from gpusleuth.facts.timeline import sort_time, when
from gpusleuth.model.report import TimelineEntry
from gpusleuth.report.timeline_text import _runs

UTC = timezone.utc
WIDTH = 1280
LEFT = 280  # lane labels
RIGHT = 40
TOP = 96  # first lane, with one race label above it (each further race label adds RACE_H)
RACE_H = 16
TRACK_H = 17  # one row of a lane: a dot or bar with its label
LABEL_MAX = 52  # characters of an event label before it is shortened with "…"
_STEPS = [timedelta(seconds=s) for s in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200)] + \
    [timedelta(days=d) for d in (1, 2, 7, 14, 28, 56, 112)]
MAX_TICKS = 10
# Advance widths of DejaVu Sans in em (the first font named; Helvetica/Arial are narrower, so boxes are upper bounds).
_EM = {**dict.fromkeys("il.,:;|!'`", 0.32), **dict.fromkeys("fjrtI()[]", 0.42), " ": 0.32, "-": 0.37, "/": 0.34, "_": 0.5,
       **dict.fromkeys("0123456789", 0.64), **dict.fromkeys("mw", 0.98), **dict.fromkeys("MW", 1.0), "…": 1.0, "≥": 0.84,
       "×": 0.84, "~": 0.84, "=": 0.84, "+": 0.84}
_COLORS = {"fail": "#d62728", "set": "#2ca02c", "unset": "#ff7f0e", "wait": "#c49000", "start": "#1f77b4", "other": "#6b6b6b"}

_TEMPLATE = """<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{{ w }}" height="{{ h }}" viewBox="0 0 {{ w }} {{ h }}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
  <rect x="0" y="0" width="{{ w }}" height="{{ h }}" fill="#ffffff"/>
  <text x="20" y="30" font-size="18" font-weight="bold" fill="#222">{{ title }}</text>
  <text x="20" y="52" font-size="12" fill="#555">{{ subtitle }}</text>
  {% for lane in lanes %}
  <rect x="{{ left }}" y="{{ lane.y }}" width="{{ plot_w }}" height="{{ lane.h }}" fill="{{ '#f6f7f9' if loop.index is odd else '#ffffff' }}"/>
  <text x="{{ left - 12 }}" y="{{ lane.y + 18 }}" font-size="12" font-weight="bold" fill="#222" text-anchor="end">{{ lane.component }}</text>
  <text x="{{ left - 12 }}" y="{{ lane.y + 33 }}" font-size="11" fill="#666" text-anchor="end">{{ lane.operator }}</text>
  <line x1="{{ left }}" y1="{{ lane.y + lane.h }}" x2="{{ left + plot_w }}" y2="{{ lane.y + lane.h }}" stroke="#dddddd"/>
  {% endfor %}
  {% for t in ticks %}
  <line x1="{{ t.x }}" y1="{{ top }}" x2="{{ t.x }}" y2="{{ axis_y }}" stroke="#e4e4e4" stroke-dasharray="2,3"/>
  <line x1="{{ t.x }}" y1="{{ axis_y }}" x2="{{ t.x }}" y2="{{ axis_y + 6 }}" stroke="#444"/>
  <text x="{{ t.x }}" y="{{ axis_y + 20 }}" font-size="11" fill="#333" text-anchor="middle">{{ t.label }}</text>
  {% endfor %}
  <line x1="{{ left }}" y1="{{ axis_y }}" x2="{{ left + plot_w }}" y2="{{ axis_y }}" stroke="#444"/>
  {% for r in races %}
  <rect x="{{ r.x1 }}" y="{{ r.y1 }}" width="{{ r.x2 - r.x1 }}" height="{{ r.y2 - r.y1 }}" fill="#d62728" fill-opacity="0.07" stroke="#d62728" stroke-dasharray="5,3"/>
  <line x1="{{ r.x2 }}" y1="{{ r.y1 - 4 }}" x2="{{ r.x2 }}" y2="{{ axis_y }}" stroke="#2ca02c" stroke-width="2"/>
  <line x1="{{ r.x2 }}" y1="{{ axis_y }}" x2="{{ r.x2 }}" y2="{{ axis_y + 24 }}" stroke="#2ca02c" stroke-width="2"/>
  {% if r.first %}<text x="{{ r.first_x }}" y="{{ axis_y + 36 }}" font-size="11" fill="#1d7a1d">{{ r.first }}</text>{% endif %}
  <text x="{{ r.label_x }}" y="{{ r.label_y }}" font-size="12" font-weight="bold" fill="#b00000">{{ r.label }}</text>
  {% endfor %}
  {% for b in bars %}
  <rect x="{{ b.x1 }}" y="{{ b.y - 4 }}" width="{{ [b.x2 - b.x1, 2] | max }}" height="8" rx="3" fill="{{ b.color }}" fill-opacity="0.35" stroke="{{ b.color }}"{% if b.open %} stroke-dasharray="3,2"{% endif %}><title>{{ b.tip }}</title></rect>
  {% endfor %}
  {% for d in dots %}
  <circle cx="{{ d.x }}" cy="{{ d.y }}" r="{{ d.r }}" fill="{{ d.color }}"{% if d.ring %} stroke="#7a0000" stroke-width="2"{% endif %}><title>{{ d.tip }}</title></circle>
  {% endfor %}
  {% for l in labels %}
  <text x="{{ l.x }}" y="{{ l.y }}" font-size="11" fill="#ffffff" stroke="#ffffff" stroke-width="3" stroke-opacity="0.85" class="halo"{% if l.bold %} font-weight="bold"{% endif %}>{{ l.text }}</text>
  <text x="{{ l.x }}" y="{{ l.y }}" font-size="11" fill="{{ l.color }}"{% if l.bold %} font-weight="bold"{% endif %}>{{ l.text }}</text>
  {% endfor %}
  {% for item in legend %}
  <circle cx="{{ item.x }}" cy="{{ legend_y }}" r="5" fill="{{ item.color }}"/>
  <text x="{{ item.x + 10 }}" y="{{ legend_y + 4 }}" font-size="11" fill="#333">{{ item.label }}</text>
  {% endfor %}
  {% for line in footer %}
  <text x="20" y="{{ footer_y + loop.index0 * 16 }}" font-size="11" fill="#444">{{ line }}</text>
  {% endfor %}
</svg>
"""

_ENV = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
_TPL = _ENV.from_string(_TEMPLATE)


def text_width(text: str, size: float = 11, bold: bool = False) -> float:
    """Width in px of TEXT at SIZE px (an upper bound for the fonts the picture names)."""
    em = sum(_EM.get(ch, 0.72 if ch.isupper() else 0.62 if ch.isascii() else 1.0) for ch in text)
    return em * size * (1.1 if bold else 1.0)


def fit(text: str, max_w: float, size: float = 11, bold: bool = False) -> str:
    """TEXT, shortened with "…" until it is at most MAX_W px wide."""
    if text_width(text, size, bold) <= max_w:
        return text
    while text and text_width(text + "…", size, bold) > max_w:
        text = text[:-1]
    return text.rstrip() + "…"


def _kind(tag: str | None) -> str:
    if tag is None:
        return "other"
    if any(w in tag for w in ("failed", "crash", "error", "missing", "xid")):
        return "fail"
    if tag in ("marker-set", "install-end", "module-loaded", "plugin-registered"):
        return "set"
    if tag in ("marker-unset", "container-restart"):
        return "unset"
    if "wait" in tag:
        return "wait"
    if tag in ("component-start", "compile-start", "compile-end", "install-start", "pod-scheduled"):
        return "start"
    return "other"


def _range(entries: list[TimelineEntry]) -> tuple[datetime, datetime] | None:
    points = []
    for e in entries:
        if e.time and not e.approximate:
            points.append(e.time)
        elif e.earliest:
            points.append(e.earliest)
            if e.latest and e.latest - e.earliest <= timedelta(minutes=30):
                points.append(e.latest)
        elif e.latest:
            points.append(e.latest)
    if not points:
        return None
    t0, t1 = min(points), max(points)
    if t1 - t0 < timedelta(seconds=30):
        t0, t1 = t0 - timedelta(seconds=15), t1 + timedelta(seconds=15)
    pad = (t1 - t0) * 0.03
    return t0 - pad, t1 + pad


def _ticks(t0: datetime, t1: datetime, x) -> list[dict]:
    """At most MAX_TICKS ticks on round times (1 s ... 16 weeks apart). Labels: seconds below a minute, hours and
    minutes below a day (with the date where it changes, when the span crosses midnight), dates above."""
    span = t1 - t0
    step = next((s for s in _STEPS if span / s <= MAX_TICKS), _STEPS[-1])
    if step < timedelta(days=1):
        base = datetime(t0.year, t0.month, t0.day, tzinfo=UTC)
    else:  # whole days (weeks start on a Monday)
        base = datetime(t0.year, t0.month, t0.day, tzinfo=UTC) - timedelta(days=t0.weekday() if step >= timedelta(days=7) else 0)
    t = base + step * ((t0 - base) // step + 1)
    if step < timedelta(minutes=1):
        fmt = "%H:%M:%S"
    elif step < timedelta(days=1):
        fmt = "%H:%M"
    else:
        fmt = "%b %d"
    multi_day = t0.date() != t1.date()
    out, last_day = [], None
    while t < t1:
        label = t.strftime(fmt)
        if multi_day and step < timedelta(days=1) and t.date() != last_day:
            label = t.strftime("%b %d ") + label
        last_day = t.date()
        out.append({"x": round(x(t), 1), "label": label})
        t += step
    return out


def render_svg(entries: list[TimelineEntry], violations: list[dict] = (), title: str = "gpusleuth timeline",
               lanes_order: list[str] | None = None, focus: bool = True) -> str:
    """The picture of the tagged entries (neighbour lines only bound them; they are not drawn).

    With focus and a race, the picture spans the race lanes' activity up to the awaited event (plus a margin),
    so minutes stay readable when the artifacts cover hours; what falls outside is counted in the footer."""
    timed = [e for e in entries if sort_time(e) and e.source and e.tag]
    left_out = 0
    if focus and violations:
        window = _focus(timed, violations)
        if window:
            kept = [e for e in timed if _overlaps(e, *window)]
            left_out, timed = len(timed) - len(kept), kept
    rng = _range(timed) or (datetime.now(UTC), datetime.now(UTC) + timedelta(minutes=1))
    lanes = lanes_order or _lane_order(timed, violations)
    plot_w = WIDTH - LEFT - RIGHT
    t0, t1 = rng

    def x(t: datetime) -> float:
        t = min(max(t, t0), t1)
        return LEFT + (t - t0) / (t1 - t0) * plot_w

    offenders = {(v["then"]["artifact"], v["then"]["line"]) for v in violations}
    # Each lane is laid out in tracks (rows): an item takes the first track free at its left edge, and keeps
    # its dot or bar and its label on that track, so nothing is drawn over anything else.
    placed: dict[str, list[dict]] = {lane: [] for lane in lanes}
    repeats: dict[tuple, dict] = {}
    # Runs of one lane's lines with the same signature and time collapse into one item "(×N)", as in the text timeline.
    runs: dict[int, int] = {}
    folded: set[int] = set()
    for lane in lanes:
        for run in _runs(sorted((e for e in timed if e.source == lane), key=sort_time), violations):
            runs[id(run[0])] = len(run)
            folded.update(id(e) for e in run[1:])
    for e in sorted(timed, key=sort_time):
        if e.source not in placed:
            continue
        exact = bool(e.time and not e.approximate)
        lo = e.time if exact else (e.earliest or e.latest)
        hi = e.time if exact else (e.latest or e.earliest)
        x1, x2 = x(lo), x(hi)
        key = (e.source, e.text, when(e))
        if id(e) in folded:  # drawn as part of its run (see below)
            continue
        if key in repeats:  # the same line again at the same time (a polling loop): one item, counted
            repeats[key]["count"] += 1
            repeats[key]["text"] = repeats[key]["text"].split(" (×")[0] + f" (×{repeats[key]['count']})"
            continue
        run = runs.get(id(e), 1)
        offender = (e.artifact, e.line) in offenders
        text = f"{when(e)} {e.text}"
        text = text if len(text) <= LABEL_MAX else text[:LABEL_MAX - 1] + "…"
        suffix = f" (×{run})" if run > 1 else ""
        # after the dot or bar; before it when that runs off the right edge; else on the roomier side, shortened
        after, before = LEFT + plot_w - (x2 + 8), (x1 - 8) - (LEFT + 2)
        width = text_width(text + suffix, bold=offender)
        if width > after and width > before:
            text = fit(text, max(after, before) - text_width(suffix, bold=offender), bold=offender)
            width = text_width(text + suffix, bold=offender)
        label_x = x2 + 8 if width <= after else x1 - 8 - width
        occupied = (min(x1, label_x) - 6, max(x2, label_x + width) + 6)
        items = placed[e.source]
        track = 0
        while any(it["track"] == track and it["span"][0] < occupied[1] and occupied[0] < it["span"][1] for it in items):
            track += 1
        item = {"e": e, "x1": x1, "x2": x2, "exact": exact, "open": (hi or t1) > t1, "text": text + suffix, "label_x": label_x,
                "span": occupied, "track": track, "offender": offender, "count": run}
        items.append(item)
        repeats[key] = item
    lane_geo = {}
    top = TOP + RACE_H * max(0, len(violations) - 1)  # one line above the lanes for each race label
    y = top
    for lane in lanes:
        operator, _, component = lane.rpartition("/")
        operator, component = fit(operator, LEFT - 32), fit(component or lane, LEFT - 32, size=12, bold=True)
        tracks = max((it["track"] for it in placed[lane]), default=0) + 1
        h = max(52, 14 + tracks * TRACK_H)
        lane_geo[lane] = {"y": y, "h": h, "operator": operator, "component": component}
        y += h
    axis_y = y + 4
    dots, bars, labels = [], [], []
    for lane, items in placed.items():
        g = lane_geo[lane]
        for it in items:
            e = it["e"]
            cy = g["y"] + 14 + it["track"] * TRACK_H
            color = _COLORS[_kind(e.tag)]
            tip = f"{when(e)}  {e.text}  [{e.artifact}:{e.line}]" + (f"  ({e.note})" if e.note else "")
            if it["exact"] or it["x2"] - it["x1"] < 3:
                dots.append({"x": round(it["x1"], 1), "y": cy, "r": 6 if it["offender"] else 4.5, "color": color, "ring": it["offender"], "tip": tip})
            else:
                bars.append({"x1": round(it["x1"], 1), "x2": round(it["x2"], 1), "y": cy, "color": color, "open": it["open"], "tip": tip})
            text = it["text"]
            labels.append({"x": round(it["label_x"], 1), "y": cy + 4, "text": text, "color": "#b00000" if it["offender"] else "#333",
                           "bold": it["offender"]})
    races = []
    for v in violations:
        lo, hi = (datetime.fromisoformat(t) if t else None for t in v["window"])
        involved = [lane_geo[lane] for lane in v["lanes"] if lane in lane_geo]
        if not (lo and hi and involved):
            continue
        x1, x2 = round(x(lo), 1), round(x(hi), 1)
        label = fit(f"race: {v['summary']}", WIDTH - 40, size=12, bold=True)
        width = text_width(label, 12, True)
        label_x = min(max((x1 + x2) / 2 - width / 2, 20), WIDTH - 20 - width)  # centred on the window, kept on the canvas
        first = f"awaited event {v['first']['when']}" if v.get("first") else None
        first_x = None
        if first:
            fw = text_width(first)
            first_x = round(x2 + 6 if x2 + 6 + fw <= WIDTH - 10 else x2 - 6 - fw, 1)
        races.append({"x1": x1, "x2": x2, "y1": min(g["y"] for g in involved) + 2, "y2": max(g["y"] + g["h"] for g in involved) - 2,
                      "label": label, "label_x": round(label_x, 1), "label_y": TOP - 8 + RACE_H * len(races),
                      "first": first, "first_x": first_x})
    legend = [{"x": LEFT + i * 150, "color": _COLORS[k], "label": label} for i, (k, label) in enumerate(
        (("start", "start / step"), ("set", "done / marker set"), ("unset", "unset / restart"), ("wait", "waiting"), ("fail", "failure"), ("other", "other")))]
    footer = ["Dots: exact times. Bars: lines without a timestamp, placed between their timestamped neighbours (dashed: open-ended);",
              "≥ marks a line known only to come after its last timestamped neighbour. Shaded: a race window, from the late event to",
              "the event it had to wait for (knowledge/ordering.toml). Times in UTC."]
    if left_out:
        footer.append(f"{left_out} entries outside the race's time span are not drawn (gpusleuth timeline --since/--until shows any span).")
    return _TPL.render(
        w=WIDTH, h=axis_y + 90 + 16 * len(footer), title=fit(title, WIDTH - 40, 18, True), subtitle=f"{t0:%Y-%m-%d} · {len(timed)} events in {len(lanes)} lanes · times in UTC",
        lanes=list(lane_geo.values()), left=LEFT, plot_w=plot_w, top=top, axis_y=axis_y, ticks=_ticks(t0, t1, x), races=races,
        bars=bars, dots=dots, labels=labels, legend=legend, legend_y=axis_y + 58, footer=footer, footer_y=axis_y + 86,
    )


def _focus(entries: list[TimelineEntry], violations: list[dict]) -> tuple[datetime, datetime] | None:
    lanes = {lane for v in violations for lane in v["lanes"] if lane}
    starts = [sort_time(e) for e in entries if e.source in lanes]
    ends = [datetime.fromisoformat(t) for v in violations for t in v["window"] if t]
    if not starts or not ends:
        return None
    lo, hi = min(starts), max(ends)
    pad = max((hi - lo) * 0.1, timedelta(minutes=1))
    return lo - pad, hi + pad


def _overlaps(e: TimelineEntry, lo: datetime, hi: datetime) -> bool:
    a = e.time if e.time and not e.approximate else (e.earliest or e.latest)
    b = e.time if e.time and not e.approximate else (e.latest or e.earliest)
    return a <= hi and b >= lo


def _lane_order(entries: list[TimelineEntry], violations: list[dict]) -> list[str]:
    """The lanes in a race first, the waited-for side on top (the Network Operator left of the GPU Operator in a peermem race)."""
    first = [lane for v in violations for lane in v["lanes"] if lane]
    return list(dict.fromkeys(first + [e.source for e in entries if e.source]))


__all__ = ["render_svg"]
