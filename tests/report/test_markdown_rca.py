"""The Markdown RCA as a document to hand on: a short title, no line over 200 characters (wrapped so the
Markdown still means the same: commands still run), each gap once, an incident window and action items."""

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.report import markdown
from gpusleuth.report.markdown import MAX_LINE, _split_command
from gpusleuth.sources import example_names, open_source

INCIDENTS = Path(__file__).parent.parent / "cases" / "incidents"


def _shown(slug: str) -> bool:
    """A third of the corpus is held out from tuning; these tests use only the rest."""
    return int(hashlib.sha256(slug.encode()).hexdigest(), 16) % 3 != 0


CORPUS = sorted(p.name for p in INCIDENTS.iterdir() if p.is_dir() and _shown(p.name))[:6] if INCIDENTS.is_dir() else []
SOURCES = [f"example:{n}" for n in example_names()] + [str(INCIDENTS / slug / "full") for slug in CORPUS]
_CACHE: dict = {}


def rendered(source: str):
    if source not in _CACHE:
        rep = diagnose(open_source(source))
        _CACHE[source] = rep, markdown.render(rep)
    return _CACHE[source]


def section(md: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", md, re.M | re.S)
    assert m, f"no section {title!r}"
    return m.group(1)


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.split(":")[-1].split("/")[-2] if s.endswith("/full") else s)
def test_short_title_and_no_line_over_200(source):
    rep, md = rendered(source)
    title = md.splitlines()[0]
    assert title.startswith("# GPU root-cause analysis: ") and len(title) <= 110, title
    assert rep.headline not in title or len(rep.headline) <= 80
    assert rep.headline.split()[0] in md  # the full headline is still there, below the title
    long = [ln for ln in md.splitlines() if len(ln) > MAX_LINE]
    assert long == [], long[:3]
    assert md.count("```") % 2 == 0


@pytest.mark.parametrize("source", SOURCES[:3])
def test_gaps_are_listed_once(source):
    rep, md = rendered(source)
    gaps = section(md, "Gaps: what could not be seen")
    items = [ln for ln in gaps.splitlines() if ln.startswith("- ")]
    assert len(items) == len(set(items))
    for c in rep.checks:
        if c.status == "skipped" and c.reason:
            said = sum(it.count(c.reason) for it in items) or sum(
                markdown._md(c.reason) in it for it in items)
            assert said == 1, (c.code, c.reason)
    assert "skipped:" not in gaps  # no line per skipped check repeating a reason


def test_incident_window_places_the_failure_in_time():
    rep, md = rendered("example:peermem-race")
    window = section(md, "Incident window")
    assert "**First event in the artifacts**: 2025-11-21 " in window and "**Last event in the artifacts**" in window
    assert "**First failure**" in window and "Span: 3 h 29 min" in window
    assert md.index("## Incident window") < md.index("## Root cause")


def test_incident_window_without_timestamps_says_so(tmp_path):
    (tmp_path / "pods.txt").write_text(
        "NAMESPACE      NAME                                   READY   STATUS             RESTARTS   AGE\n"
        "gpu-operator   nvidia-device-plugin-daemonset-abcde   0/1     CrashLoopBackOff   12         40m\n")
    md = markdown.render(diagnose(open_source(str(tmp_path))))
    assert "carry no timestamps" in section(md, "Incident window")


def test_action_items_are_a_checklist_from_the_fixes():
    rep, md = rendered("example:device-plugin-unregistered")
    actions = section(md, "Action items")
    items = [ln for ln in actions.splitlines() if ln.startswith("- [ ] ")]
    top = rep.root_causes[0]
    first = top.fixes[0]
    assert items[0].startswith(f"- [ ] **Now** (`{top.code}`, immediate)")
    assert first.commands[0] in " ".join(actions.split())
    assert any("**Verify**" in it and top.code in it for it in items)
    assert any("**Fill the gaps**" in it for it in items) == bool(rep.gaps)


@pytest.mark.skipif(not shutil.which("bash"), reason="bash is needed to run the commands")
def test_a_long_command_split_over_lines_still_gives_the_same_words():
    cmd = ("kubectl patch clusterpolicies.nvidia.com/cluster-policy --type merge -p '{\"spec\":{\"toolkit\":{\"env\":["
           + ",".join(f'{{"name":"V{i}","value":"/var/lib/k8s-containerd/{"x" * 20}/{i}"}}' for i in range(8))
           + "]}}}' --field-manager \"gpu sleuth\" " + " ".join(f"--arg-{i}=v{i}" for i in range(30)))
    lines = _split_command(cmd)
    assert len(lines) > 1 and all(len(ln) <= MAX_LINE for ln in lines)

    def words(text: str) -> str:
        return subprocess.run(["bash", "-c", "printf '%s\\n' " + text.split(" ", 1)[1]], capture_output=True, text=True,
                              check=True).stdout

    assert words("\n".join(lines)) == words(cmd)
