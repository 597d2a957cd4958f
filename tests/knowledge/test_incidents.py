"""knowledge/incidents/: the public incidents as data, each row checkable, none from the held-out evaluation set."""

from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path

import pytest

from gpusleuth.analysis.seen_before import line_shape, tokens
from gpusleuth.knowledge.incidents import COMPONENTS, Range, incidents, parse_file
from gpusleuth.model.layers import Layer

CASES = Path(__file__).resolve().parents[1] / "cases" / "incidents"
FOLDER = Path(__file__).resolve().parents[2] / "src" / "gpusleuth" / "knowledge" / "incidents"


def held_out_threads() -> set[str]:
    """The `source` and `related` links of the held-out evaluation incidents (read from those two keys only)."""
    out: set[str] = set()
    for case in sorted(CASES.iterdir()) if CASES.is_dir() else ():
        if int(hashlib.sha256(case.name.encode()).hexdigest(), 16) % 3 != 0:
            continue
        toml = case / "incident.toml"
        if not toml.exists():
            continue
        for line in toml.read_text(encoding="utf-8").splitlines():
            if re.match(r"\s*(source|related)\s*=", line):
                out.update(u.rstrip("/") for u in re.findall(r"https?://[^\"\s\],]+", line))
    return out


def test_the_corpus_loads_and_is_large():
    corpus = incidents()
    assert len(corpus.incidents) >= 280
    assert len(corpus.projects()) >= 12


def test_no_thread_of_a_held_out_incident_is_in_the_corpus():
    held = held_out_threads()
    assert held, "the held-out incidents name their threads"
    leaked = sorted(i.link for i in incidents().incidents if i.link.rstrip("/") in held)
    assert leaked == []


def test_every_file_says_why_threads_are_excluded():
    for f in sorted(FOLDER.glob("*.toml")):
        head = f.read_text(encoding="utf-8")[:2500]
        assert "Excluded on purpose" in head and "held-out" in head, f.name


def test_links_are_unique_and_rows_complete():
    seen: dict[str, str] = {}
    for inc in incidents().incidents:
        assert inc.link.startswith("https://github.com/") and inc.link not in seen, inc.link
        seen[inc.link] = inc.id
        assert isinstance(inc.layer, Layer)
        assert inc.lines or inc.terms, inc.id
        assert len(inc.cause) > 40 and len(inc.fix) > 20, inc.id
        for comp in [*inc.versions, *inc.fixed]:
            assert comp in COMPONENTS


def test_lines_are_stored_normalised_and_say_something():
    for inc in incidents().incidents:
        for line in inc.lines:
            assert line_shape(line) == line, (inc.id, line)
            assert len(tokens(line)) >= 2 and len(line) >= 15, (inc.id, line)


def test_fixed_in_is_outside_the_affected_range():
    for inc in incidents().incidents:
        for comp, fixed in inc.fixed.items():
            if comp in inc.versions:
                assert not inc.versions[comp].holds(fixed), inc.id


def test_range_bounds():
    r = Range.parse(">=1.14.0,<1.14.4")
    assert r.holds("1.14.0") and r.holds("v1.14.3") and not r.holds("1.14.4") and not r.holds("1.13.9")
    assert Range.parse("==535").holds("535.183.01") and not Range.parse("==535").holds("550.54.15")
    assert Range.parse("<2.1.2").holds("2.1.1") and not Range.parse("<2.1.2").holds("2.1.2")
    assert not r.holds("unknown")
    with pytest.raises(ValueError):
        Range.parse("about 1.2")


def test_a_row_with_an_unknown_key_or_component_is_refused():
    row = '[[incident]]\nlink = "https://github.com/a/b/issues/1"\ntitle = "t"\nlayer = "operator"\nlines = []\ncause = "c"\nfix = "f"\n'
    assert parse_file("x", row)[0][0].id == "x/1"
    with pytest.raises(ValueError):
        parse_file("x", row + "colour = \"red\"\n")
    with pytest.raises(ValueError):
        parse_file("x", row + 'fixed = { frobnicator = "1.0" }\n')


def test_known_issues_table_is_well_formed():
    from gpusleuth.checks.known_issues import known_issues

    rows = known_issues()
    assert len(rows) >= 40
    assert len({r.id for r in rows}) == len(rows)
    for r in rows:
        assert r.severity in ("info", "warning") and r.source.startswith("https://")
        if r.fixed_in:
            assert not r.affects.holds(r.fixed_in), r.id
    raw = tomllib.loads((FOLDER.parent / "known_issues.toml").read_text(encoding="utf-8"))
    assert len(raw["issue"]) == len(rows)
