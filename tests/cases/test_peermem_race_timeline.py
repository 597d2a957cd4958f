"""Golden: the timeline of example:peermem-race (seeds 001/002) — the seed's sequence in order, the phase
durations, and the race stated as honestly as the artifacts allow, also from disguised copies."""

from datetime import datetime, timezone

import pytest
from golden import disguised, line_of

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.sources import open_source

NAME = "peermem-race"
UTC = timezone.utc


def at(h, m, s=0):
    return datetime(2025, 11, 21, h, m, s, tzinfo=UTC)


def first(report, needle):
    return next(e for e in report.timeline if e.tag and needle in e.text)


@pytest.fixture(scope="module")
def rep():
    return diagnose(open_source(f"example:{NAME}"))


def test_the_seed_sequence_in_order(rep):
    mofed = first(rep, "NVIDIA driver container exec start")
    gpu = first(rep, "Starting driver uninstallation process")
    assert mofed.time == gpu.time == at(11, 51, 6)
    assert first(rep, "Starting compilation of driver version").time == at(11, 51, 23)
    assert first(rep, "DTK driver build script end").time == at(11, 53, 43)
    assert first(rep, "Storing the check sum for build artifacts").time == at(11, 56, 8)
    hca = first(rep, "Loading HCA driver and Access Layer")
    assert hca.approximate and (hca.earliest, hca.latest) == (at(11, 56, 8), at(11, 57, 55))
    ready = first(rep, "Setting driver ready state")
    assert ready.time == at(11, 58, 39)
    failure = first(rep, "could not insert 'nvidia_peermem'")
    assert failure.earliest == at(11, 56, 44) and failure.earliest < ready.time  # after the last `date` line of nvidia-driver-ctr
    order = list(rep.timeline)
    assert order.index(mofed) < order.index(first(rep, "DTK driver build script end")) < order.index(failure) < order.index(ready)


def test_phases(rep):
    phases = rep.extras["phases"]
    assert any(p.startswith("Network Operator: 7m33s from start to .driver-ready") for p in phases)
    assert any(p.startswith("MOFED compile: 2m20s") for p in phases)
    assert any(p.startswith("MOFED install: 2m31s") for p in phases)


def test_race_finding_with_gap_and_both_sides(rep):
    (f,) = [f for f in rep.findings if f.code == "OP101"]
    # nvidia-driver-ctr's log has no stamp after 11:56:44, so the order is probable, not proven
    assert f.title.endswith("(probably)") and f.confidence < 0.6
    assert "before MOFED set .driver-ready at 11:58:39, by at most 1m55s" in f.explanation
    cites = {(e.artifact, e.line) for e in f.evidence}
    mofed_log = "network_operand_pod_mofed-rhcos4.18-554bdbd7cf-ds-7qh2l.log"
    assert (mofed_log, 1222) in cites and "Setting driver ready state" in line_of(NAME, mofed_log, 1222)
    driver_log = "gpu_operand_pod_nvidia-driver-daemonset-418.94.202510230424-0-564xm.log"
    late = [line for a, line in cites if a == driver_log]
    assert late and all("peer" in line_of(NAME, driver_log, n).lower() for n in late)


def test_markdown_section(rep):
    from gpusleuth.report.timeline_text import render_markdown_timeline

    md = render_markdown_timeline(rep)
    assert "**Race (probable):** nvidia-peermem load attempted probably before MOFED set .driver-ready at 11:58:39" in md


@pytest.mark.parametrize("quote", [False, True], ids=["renamed", "markdown-quoted"])
def test_same_timeline_from_disguised_copies(tmp_path, rep, quote):
    other = diagnose(open_source(str(disguised(NAME, tmp_path, quote))))

    def seq(r):
        return [(e.time, e.earliest, e.latest, e.source, e.text) for e in r.timeline if e.tag]

    assert seq(other) == seq(rep)
    assert [v["summary"] for v in other.extras["ordering"]["violations"]] == [v["summary"] for v in rep.extras["ordering"]["violations"]]
