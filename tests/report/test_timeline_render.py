"""Renderings of the timeline: terminal lanes with the race marked, the Markdown event sequence, the SVG
(well-formed, escaped, race window drawn), and the `gpusleuth timeline` command with its filters."""

import json
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.cli import cli
from gpusleuth.model.report import TimelineEntry
from gpusleuth.report.timeline_svg import render_svg
from gpusleuth.report.timeline_text import parse_when, render_lanes, render_markdown_timeline, render_text_timeline, select
from gpusleuth.sources.loose import read_directory

FIXTURE = Path(__file__).parent.parent / "fixtures" / "peermem_race"
UTC = timezone.utc


@pytest.fixture(scope="module")
def report():
    return diagnose(read_directory(FIXTURE))


def test_report_carries_the_contract_timeline(report):
    d = report.to_dict()
    assert d["timeline"] and {"time", "source", "artifact", "line", "text", "tag"} <= set(d["timeline"][0])
    assert report.extras["ordering"]["violations"][0]["summary"].startswith("nvidia-peermem load attempted 1m58s before")


def test_terminal_lanes_mark_the_race(report):
    text = render_lanes(list(report.timeline), report.extras["ordering"]["violations"], width=200)
    header = text.splitlines()[0]
    assert header.index("network-operator") < header.index("gpu-operator")  # one lane per operator, waited-for side first
    by_component = render_lanes(list(report.timeline), report.extras["ordering"]["violations"], width=200, by_operator=False)
    head = by_component.splitlines()[0]
    assert head.index("network-operator/mofed") < head.index("gpu-operator/nvidia-driver-daemonset")
    race_row = next(ln for ln in text.splitlines() if "✖ RACE" in ln)
    assert "could not insert" in race_row and race_row.lstrip().startswith("≈11:56:41")
    assert sum("race window" in ln for ln in text.splitlines()) >= 2


def test_text_section_has_phases_boxes_markers_and_notes(report):
    text = render_text_timeline(report, width=160)
    assert "Network Operator: 7m33s from start to .driver-ready" in text
    assert "WHAT SHOULD HAVE HAPPENED" in text and "WHAT ACTUALLY HAPPENED" in text
    assert "✗ NOT checked by: nvidia-driver-ctr" in text and "✓ checked by: nvidia-peermem-ctr" in text
    assert "How the clocks were lined up" in text


def test_markdown_event_sequence(report):
    md = render_markdown_timeline(report)
    assert md.startswith("**Race (certain):**")
    from gpusleuth.report.markdown import render

    assert "## Event sequence\n\n**Race (certain):**" in render(report)
    assert "Synchronized Timeline (all times UTC):" in md
    assert "├─ 11:51:06 - " in md and "❌" in md
    assert "**Race (certain):** nvidia-peermem load attempted 1m58s before MOFED set .driver-ready at 11:58:39" in md


def test_svg_is_well_formed_escaped_and_shows_the_race(report):
    entries = list(report.timeline) + [TimelineEntry(datetime(2025, 11, 21, 11, 52, tzinfo=UTC), '<script>alert("x")</script> & more',
                                                     "evil.log", 1, tag="component-start", source="other/evil")]
    svg = render_svg(entries, report.extras["ordering"]["violations"], title="t & <b>")
    root = ET.fromstring(svg)  # parses: nothing unescaped
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert any(t.startswith("race: nvidia-peermem load attempted 1m58s") for t in texts)
    assert any("mofed" == t for t in texts) and any("nvidia-driver-daemonset" == t for t in texts)
    assert any(r.get("stroke-dasharray") == "5,3" for r in root.iter("{http://www.w3.org/2000/svg}rect"))


def test_filters():
    day = datetime(2025, 11, 21, 9, tzinfo=UTC)
    assert parse_when("11:55", day) == datetime(2025, 11, 21, 11, 55, tzinfo=UTC)
    assert parse_when("2025-11-21T11:55:00Z", None) == datetime(2025, 11, 21, 11, 55, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_when("noon", day)
    e1 = TimelineEntry(datetime(2025, 11, 21, 11, 50, tzinfo=UTC), "a", "x", 1, tag="t", source="gpu-operator/nvidia-driver-daemonset", node="n1")
    e2 = TimelineEntry(None, "b", "x", 2, tag="t", source="network-operator/mofed", earliest=datetime(2025, 11, 21, 11, 54, tzinfo=UTC),
                       latest=datetime(2025, 11, 21, 11, 57, tzinfo=UTC), approximate=True)
    assert select([e1, e2], since=datetime(2025, 11, 21, 11, 55, tzinfo=UTC)) == [e2]  # its interval reaches past 11:55
    assert select([e1, e2], until=datetime(2025, 11, 21, 11, 53, tzinfo=UTC)) == [e1]
    assert select([e1, e2], node="n2") == [e2]  # node unknown stays
    assert select([e1, e2], components=("mofed",)) == [e2]


def test_timeline_command(tmp_path):
    runner = CliRunner()
    svg = tmp_path / "t.svg"
    res = runner.invoke(cli, ["timeline", str(FIXTURE), "--svg", str(svg), "--no-color"], env={"COLUMNS": "180"})
    assert res.exit_code == 0, res.output
    assert "RACE on gpu-node-1: nvidia-peermem load attempted 1m58s before MOFED set .driver-ready at 11:58:39" in res.output
    ET.parse(svg)
    res = runner.invoke(cli, ["timeline", str(FIXTURE), "--format", "json", "--component", "mofed", "--since", "11:56", "--until", "11:59"])
    doc = json.loads(res.output)
    assert doc["schema"] == "gpusleuth/timeline/v1"
    assert doc["timeline"] and all(e["source"] == "network-operator/mofed" for e in doc["timeline"])
    assert all((e["time"] or e["latest"]) >= "2025-11-21T11:56" for e in doc["timeline"])
    assert doc["ordering"]["violations"][0]["rule"] == "peermem-after-mofed-ready"
    bad = runner.invoke(cli, ["timeline", str(FIXTURE), "--since", "noon"])
    assert bad.exit_code == 2 and "cannot read time" in bad.output
