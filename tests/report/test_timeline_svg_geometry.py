"""The timeline picture's geometry: every text on the canvas and clear of every other, runs collapsed, ticks
that make sense from seconds to weeks, and only SVG 1.1 (librsvg/cairosvg draw what browsers draw)."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.model.report import TimelineEntry
from gpusleuth.report.timeline_svg import MAX_TICKS, _ticks, render_svg, text_width
from gpusleuth.sources import example_names, open_source

SVG = "{http://www.w3.org/2000/svg}"
UTC = timezone.utc
T0 = datetime(2025, 11, 21, 11, 50, tzinfo=UTC)


def _boxes(svg: str) -> tuple[list[tuple], float, float]:
    """(x0, y0, x1, y1, text) of every drawn text (a label's halo is the same box), the canvas width and height."""
    root = ET.fromstring(svg)
    out = []
    for t in root.iter(SVG + "text"):
        if t.get("class") == "halo":
            continue
        size, text = float(t.get("font-size")), t.text or ""
        w = text_width(text, size, t.get("font-weight") == "bold")
        x, y = float(t.get("x")), float(t.get("y"))
        x0 = {"start": x, "middle": x - w / 2, "end": x - w}[t.get("text-anchor", "start")]
        out.append((x0, y - size * 0.8, x0 + w, y + size * 0.25, text))
    return out, float(root.get("width")), float(root.get("height"))


def _assert_clean(svg: str) -> None:
    boxes, w, h = _boxes(svg)
    for x0, y0, x1, y1, text in boxes:
        assert 0 <= x0 and x1 <= w and 0 <= y0 and y1 <= h, f"off the canvas ({w}x{h}): {text!r} at {x0:.0f},{y0:.0f}-{x1:.0f},{y1:.0f}"
    for a, b in itertools.combinations(boxes, 2):
        overlap = min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5
        assert not overlap, f"{a[4]!r} overlaps {b[4]!r}"


def _svg_1_1(svg: str) -> None:
    root = ET.fromstring(svg)
    allowed = {"xmlns", "width", "height", "viewBox", "font-family", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx",
               "fill", "fill-opacity", "stroke", "stroke-width", "stroke-opacity", "stroke-dasharray", "font-size", "font-weight",
               "text-anchor", "class"}
    used = {a for el in root.iter() for a in el.attrib}
    assert used <= allowed, used - allowed  # no paint-order, vector-effect, href, ... (SVG 2)
    assert {el.tag.removeprefix(SVG) for el in root.iter()} <= {"svg", "rect", "text", "line", "circle", "title"}


@pytest.fixture(scope="module", params=example_names())
def example_svg(request):
    report = diagnose(open_source(f"example:{request.param}"))
    return render_svg(list(report.timeline), report.extras.get("ordering", {}).get("violations", []),
                      title=f"gpusleuth timeline — example:{request.param}")


def test_each_example_picture_keeps_its_texts_on_the_canvas_and_apart(example_svg):
    _assert_clean(example_svg)
    _svg_1_1(example_svg)


def _e(t, text, source="gpu-operator/nvidia-driver-daemonset", sig=None, tag="component-start", line=1, **kw):
    return TimelineEntry(t, text, "driver.log", line, tag=tag, source=source, signature=sig, **kw)


def test_crowded_lanes_long_names_and_races_stay_apart():
    long_lane = "gpu-operator/nvidia-sandbox-device-plugin-daemonset-with-a-very-long-name-indeed"
    entries = [_e(T0 + timedelta(seconds=i % 3), f"message {i} " + "x" * 80, line=i) for i in range(30)]
    entries += [_e(T0 + timedelta(minutes=9, seconds=59), "at the right edge " + "y" * 60, source=long_lane, line=100 + i) for i in range(4)]
    entries += [_e(None, "untimed " + "z" * 40, earliest=T0 + timedelta(minutes=2), latest=T0 + timedelta(minutes=9, seconds=59), approximate=True, line=200)]
    violations = [{"lanes": [long_lane, "gpu-operator/nvidia-driver-daemonset"], "summary": "a race with a summary far too long " * 6,
                   "window": [(T0 + timedelta(minutes=1)).isoformat(), (T0 + timedelta(minutes=9, seconds=59)).isoformat()],
                   "then": {"artifact": "driver.log", "line": 5}, "first": {"when": "11:59:59"}},
                  {"lanes": ["gpu-operator/nvidia-driver-daemonset"], "summary": "a second race", "then": {"artifact": "driver.log", "line": 6},
                   "window": [T0.isoformat(), (T0 + timedelta(minutes=5)).isoformat()], "first": {"when": "11:55:00"}}]
    svg = render_svg(entries, violations, title="a title far too long for the picture " * 6)
    _assert_clean(svg)
    _svg_1_1(svg)
    texts = [b[4] for b in _boxes(svg)[0]]
    assert sum(t.startswith("race: ") for t in texts) == 2


def test_runs_of_one_signature_collapse_as_in_the_text_timeline():
    lines = [_e(T0, f"Skipping BTF generation for /usr/src/mod{i}.ko", sig="btf-skip", line=10 + i) for i in range(5)]
    other = _e(T0 + timedelta(minutes=1), "Starting installation", sig="install-start", line=20)
    texts = [b[4] for b in _boxes(render_svg(lines + [other]))[0]]
    btf = [t for t in texts if "Skipping BTF" in t]
    assert len(btf) == 1 and btf[0].endswith("(×5)")
    assert any("Starting installation" in t for t in texts)


def _tick_set(span: timedelta, start: datetime = T0):
    x = lambda t: 280 + (t - start) / span * 960  # noqa: E731
    return _ticks(start, start + span, x)


@pytest.mark.parametrize("span,pattern,step", [
    (timedelta(seconds=10), r"^\d\d:\d\d:\d\d$", timedelta(seconds=1)),
    (timedelta(hours=2), r"^(\w{3} \d\d )?\d\d:\d\d$", timedelta(minutes=15)),
    (timedelta(days=10), r"^\w{3} \d\d$", timedelta(days=1)),
    (timedelta(weeks=9), r"^\w{3} \d\d$", timedelta(days=7)),
])
def test_ticks_are_round_evenly_spaced_and_readable(span, pattern, step):
    ticks = _tick_set(span)
    assert 3 <= len(ticks) <= MAX_TICKS, [t["label"] for t in ticks]
    gaps = {round(b["x"] - a["x"], 0) for a, b in itertools.pairwise(ticks)}
    assert max(gaps) - min(gaps) <= 1  # evenly spaced
    assert all(re.match(pattern, t["label"]) for t in ticks), [t["label"] for t in ticks]
    assert len({t["label"] for t in ticks}) == len(ticks)  # no two say the same
    assert all(text_width(t["label"]) + 8 < min(gaps) for t in ticks)  # labels never touch
    assert (ticks[1]["x"] - ticks[0]["x"]) / 960 * span.total_seconds() == pytest.approx(step.total_seconds(), rel=0.01)


def test_ticks_crossing_midnight_name_the_day():
    labels = [t["label"] for t in _tick_set(timedelta(hours=4), datetime(2025, 11, 21, 22, 10, tzinfo=UTC))]
    assert labels[0].startswith("Nov 21 ") and any(lb.startswith("Nov 22 ") for lb in labels)


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="rsvg-convert (Debian librsvg2-bin) is not installed")
def test_librsvg_draws_each_example(example_svg, tmp_path):
    src = tmp_path / "t.svg"
    src.write_text(example_svg)
    proc = subprocess.run(["rsvg-convert", str(src), "-o", str(tmp_path / "t.png")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    png = (tmp_path / "t.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == int(ET.fromstring(example_svg).get("width"))


def test_cairosvg_draws_each_example(example_svg, tmp_path):
    cairosvg = pytest.importorskip("cairosvg", reason="cairosvg (PyPI) is not installed")
    png = cairosvg.svg2png(bytestring=example_svg.encode())
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == int(ET.fromstring(example_svg).get("width"))
