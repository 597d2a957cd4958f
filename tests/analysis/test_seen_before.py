"""analysis/seen_before.py: ranking the public incidents against a source, and the Seen before section."""

from __future__ import annotations

import json

import pytest

from gpusleuth.analysis.seen_before import Query, link_findings, match, summary_line
from gpusleuth.facts.inuse import InUse, VersionsInUse
from gpusleuth.knowledge.incidents import incidents
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Finding, Role, Severity
from gpusleuth.model.layers import Layer


def q(*lines: str, versions: VersionsInUse | None = None) -> Query:
    return Query.from_lines([(ln, Evidence("paste.txt", n, ln)) for n, ln in enumerate(lines, 1)], versions)


K3S_PLUGIN = (
    "I0117 15:43:15.907336       1 factory.go:107] Detected non-NVML platform: could not load NVML library: "
    "libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
    "W0117 15:43:15.907261       1 factory.go:31] No valid resources detected, creating a null CDI handler",
)


def test_a_paste_of_the_lines_of_a_thread_ranks_that_thread_first_with_the_lines():
    found = match(q(*K3S_PLUGIN))
    assert found[0].incident.link == "https://github.com/NVIDIA/k8s-device-plugin/issues/1011"
    assert len(found[0].lines) == 2 and all(sim >= 0.95 for _, _, sim in found[0].lines)
    assert found[0].lines[0][1].evidence.artifact == "paste.txt"


def test_variable_parts_do_not_matter():
    a = match(q("Error: nvml: Driver/library version mismatch", "Failed to initialize NVML: Function Not Found"))
    b = match(q("Error: nvml: Driver/library version mismatch", "Failed to initialize NVML: Function Not Found") )
    assert [m.incident.link for m in a] == [m.incident.link for m in b]
    assert a[0].incident.link == "https://github.com/NVIDIA/nvidia-docker/issues/584"


def test_a_paste_that_matches_nothing_says_so():
    query = q("the quick brown fox jumps over the lazy dog", "lorem ipsum dolor sit amet")
    assert match(query) == []
    assert summary_line([], {"incidents": 300, "lines": 2}).startswith("No incident seen before matches the 2 line(s)")


def test_a_near_match_names_the_condition_that_did_not_hold():
    rke2 = VersionsInUse(versions=(), platforms=(("rke2", Evidence("nodes.txt", 2, "v1.30.4+rke2r1")),))
    k3s = VersionsInUse(versions=(), platforms=(("k3s", Evidence("nodes.txt", 2, "v1.30.4+k3s1")),))
    near = next(m for m in match(q(*K3S_PLUGIN), limit=0, minimum=0) if m.incident.link.endswith("/1011"))
    assert near.not_held == ()
    shown_rke2 = next(m for m in match(q(*K3S_PLUGIN, versions=rke2), limit=0, minimum=0) if m.incident.link.endswith("/1011"))
    shown_k3s = next(m for m in match(q(*K3S_PLUGIN, versions=k3s), limit=0, minimum=0) if m.incident.link.endswith("/1011"))
    assert shown_rke2.not_held and "platform k3s" in shown_rke2.not_held[0] and "rke2" in shown_rke2.not_held[0]
    assert shown_k3s.held and shown_k3s.score > shown_rke2.score


def test_fixed_in_is_compared_with_the_version_in_use():
    line = "Error watching fields: This request is serviced by a module of DCGM that is not currently loaded"
    old = VersionsInUse(versions=(InUse("dcgm-exporter", "2.0.13", "image"),))
    new = VersionsInUse(versions=(InUse("dcgm-exporter", "3.3.5", "image"),))
    m_old = next(m for m in match(q(line, versions=old)) if m.incident.link.endswith("/120"))
    assert m_old.fixed[0]["state"] == "in use is older than the fix" and m_old.fixed[0]["fixed_in"] == "2.1.2"
    m_new = next(m for m in match(q(line, versions=new), minimum=0, limit=0) if m.incident.link.endswith("/120"))
    assert m_new.fixed[0]["state"] == "in use has the fix" and m_new.not_held  # the range <2.1.2 does not hold


def test_every_incident_finds_itself_from_its_own_lines():
    """Self-retrieval over the whole corpus: an incident's own lines rank it at the top score (with the shipped
    rapidfuzz similarity; the word-set fallback of a checkout without it ties more often)."""
    pytest.importorskip("rapidfuzz")
    missed = []
    for inc in incidents().incidents:
        if not inc.lines:
            continue
        found = match(q(*inc.lines), limit=0, minimum=0)
        top = found[0].score if found else 0
        mine = next((m.score for m in found if m.incident is inc), 0)
        if mine < top - 1e-9:
            missed.append(inc.id)
    assert missed == []


def test_ranking_is_deterministic():
    a = [(m.incident.id, round(m.score, 6)) for m in match(q("Failed to initialize NVML: Unknown Error"), limit=0, minimum=0)]
    b = [(m.incident.id, round(m.score, 6)) for m in match(q("Failed to initialize NVML: Unknown Error"), limit=0, minimum=0)]
    assert a == b and len(a) >= 3


def test_a_finding_is_linked_to_the_incidents_its_class_names():
    f = Finding("KD102", "x", "t", Layer.KERNEL_DRIVER, Severity.ERROR, Role.ROOT_CAUSE, "e")
    linked = link_findings(match(q("Could not resolve Linux kernel version")), [f])
    m = next(m for m in linked if m.incident.link.endswith("gpu-operator/issues/85"))
    assert m.findings == ("KD102",) and m.score > 0
    only_class = link_findings([], [f])
    assert any(m.incident.link.endswith("gpu-operator/issues/85") and m.score == 0 for m in only_class)


def test_seen_before_in_every_report_format(tmp_path):
    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.report import json_report, markdown, text
    from gpusleuth.sources import open_source

    (tmp_path / "plugin.log").write_text("\n".join(K3S_PLUGIN) + "\n", encoding="utf-8")
    report = diagnose(open_source(str(tmp_path)))
    data = json.loads(json_report.render(report))
    assert data["seen_before"][0]["link"] == "https://github.com/NVIDIA/k8s-device-plugin/issues/1011"
    first = data["seen_before"][0]
    assert {"score", "lines", "cause", "fix", "fixed_in", "conditions_not_held"} <= set(first)
    assert first["lines"][0]["artifact"] == "plugin.log" and first["lines"][0]["line"] == 1
    assert all(f["code"] != "SEEN" for f in data["root_causes"])  # a match is never a root cause
    assert "## Seen before" in markdown.render(report) and "k8s-device-plugin/issues/1011" in markdown.render(report)
    out = text.render(report)
    assert "Seen before" in out and "k8s-device-plugin/issues/1011" in out


def test_words_alone_need_two_specific_whole_words_and_rank_below_printed_lines():
    prose = q("we run gvisor with runsc and a custom toolkit installDir, gpu pods do not start")
    found = {m.incident.link: m for m in match(prose, limit=0)}
    m = found["https://github.com/NVIDIA/nvidia-container-toolkit/issues/1880"]
    assert set(m.terms) >= {"gvisor", "runsc"} and m.lines == () and 0.5 <= m.score <= 0.6
    generic = q("rke2 cluster, pods in CrashLoopBackOff, config.toml.tmpl edited")  # one specific word, one platform
    assert "https://github.com/NVIDIA/gpu-operator/issues/473" not in {m.incident.link for m in match(generic, limit=0)}
    one_word = q("mps")
    assert all(len(m.terms) >= 2 or m.lines for m in match(one_word, limit=0))
