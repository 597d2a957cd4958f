"""Golden acceptance test: the incidents of tests/cases/incidents/ that carry an [expect] table.

The corpus as a whole (every incident, every rendition, the held-out third) is scored by bench/accuracy.py and
held to its floor by test_corpus.py; the incidents here are the ones whose report was also judged line by line.
Each folder holds, in full/, the artifacts a user in the public thread would have pasted, and an
incident.toml with the thread, the real root cause and fix, and [expect]: what an on-call engineer must
get from the report (telling/ and words.txt, the shorter renditions, are not read here; cited artifacts
are resolved under full/). For every incident the first root cause must be on the expected layer (and
node), cite a decisive line at its real line number, and carry a fix that names the real objects;
findings the incident proves wrong must not be root causes; no fix command may keep a placeholder.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.model.finding import Role
from gpusleuth.sources.loose import read_directory

INCIDENTS = Path(__file__).parent / "incidents"
NAMES = sorted(p.name for p in INCIDENTS.iterdir()
               if (p / "incident.toml").is_file() and "expect" in tomllib.loads((p / "incident.toml").read_text(encoding="utf-8")))
_PLACEHOLDER = re.compile(r"<(?:pod|namespace|node|container|release|name)>")


def _squash(text: str) -> str:
    return " ".join(text.split())


def _line(folder: Path, artifact: str, line: int) -> str:
    return (folder / "full" / artifact).read_text(encoding="utf-8").splitlines()[line - 1]


@pytest.fixture(scope="module", params=NAMES)
def incident(request):
    folder = INCIDENTS / request.param
    meta = tomllib.loads((folder / "incident.toml").read_text(encoding="utf-8"))
    return folder, meta, diagnose(read_directory(folder / "full"))


def test_there_are_incidents_from_several_layers():
    layers = {tomllib.loads((INCIDENTS / n / "incident.toml").read_text())["layer"] for n in NAMES}
    assert len(NAMES) >= 6 and len(layers) >= 5


def test_incident_toml_says_where_it_comes_from(incident):
    _, meta, _ = incident
    assert meta["source"].startswith("https://github.com/")
    assert meta["root_cause"].strip() and meta["fix"].strip() and meta["layer"]


def test_first_root_cause_is_the_real_one(incident):
    folder, meta, report = incident
    expect = meta["expect"]
    assert report.verdict == "broken" and report.root_causes, f"{folder.name}: no root cause"
    first = report.root_causes[0]
    assert first.layer.value in expect["first_root_cause_layer"], f"{folder.name}: {first.code} {first.title}"
    if "min_confidence" in expect:
        assert first.confidence >= expect["min_confidence"], f"{folder.name}: {first.code} at {first.confidence}"
    if "first_root_cause_node" in expect:
        assert first.node == expect["first_root_cause_node"], f"{folder.name}: {first.code} on {first.node}"


def test_first_root_cause_cites_the_decisive_line_where_it_is(incident):
    folder, meta, report = incident
    needle = meta["expect"]["evidence_contains"]
    first = report.root_causes[0]
    cited = [e for e in first.evidence if needle in e.text and e.line]
    assert cited, f"{folder.name}: no evidence of {first.code} quotes {needle!r}: {[e.cite() for e in first.evidence]}"
    for e in cited:
        assert needle in _line(folder, e.artifact, e.line), f"{folder.name}: {e.cite()} is not the line that says {needle!r}"


def test_every_cited_line_of_the_first_root_cause_is_that_line(incident):
    """A quoted log or table line (not a summary gpusleuth wrote) is the text of the line it cites."""
    folder, _, report = incident
    for e in report.root_causes[0].evidence:
        if not e.line or not e.text or not (folder / "full" / e.artifact).is_file():
            continue
        quoted = _squash(e.text)
        line = _squash(_line(folder, e.artifact, e.line))
        head = quoted[:30]
        assert head in line or not _looks_quoted(quoted, folder / "full" / e.artifact), f"{folder.name}: {e.cite()} quotes {quoted[:60]!r}, line is {line[:60]!r}"


def _looks_quoted(text: str, path: Path) -> bool:
    """Whether gpusleuth quoted the text from the file (it appears somewhere in it) rather than wrote a summary."""
    return text[:60] in _squash(path.read_text(encoding="utf-8"))


def test_first_root_cause_fix_names_the_real_objects(incident):
    folder, meta, report = incident
    first = report.root_causes[0]
    said = " ".join(f"{x.description} {' '.join(x.commands)} {x.snippet or ''}" for x in first.fixes)
    for want in meta["expect"]["fix_mentions"]:
        assert want in said, f"{folder.name}: {first.code}'s fixes do not mention {want!r}"


def test_no_root_cause_the_incident_proves_wrong(incident):
    folder, meta, report = incident
    forbidden = set(meta["expect"].get("forbid_root_cause_codes", ()))
    wrong = [f.code for f in report.root_causes if f.code in forbidden]
    assert not wrong, f"{folder.name}: {wrong} reported as root cause"


def test_fix_commands_keep_no_placeholders(incident):
    folder, _, report = incident
    for f in report.findings:
        if f.role != Role.ROOT_CAUSE:
            continue
        for x in f.fixes:
            for c in x.commands:
                assert not _PLACEHOLDER.search(c), f"{folder.name}: {f.code} command {c!r}"
