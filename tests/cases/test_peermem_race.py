"""Golden: example:peermem-race (seeds 000-002) — the facts the report must state, by meaning."""

import pytest
from golden import MODPROBE, disguised, line_of, report

NAME = "peermem-race"


@pytest.fixture(scope="module")
def rep():
    return report(f"example:{NAME}")


def test_first_root_cause_is_the_peermem_load_failure_in_the_driver_pod(rep):
    root = rep["root_causes"][0]
    assert root["layer"] == "kernel-driver" and root["code"] == "KD001"
    pod = root["facts"]["pod"]
    assert pod and pod.startswith("nvidia-driver-daemonset-")
    assert any(pod in cmd for fx in root["fixes"] for cmd in fx["commands"])
    cited = [e for e in root["evidence"] if MODPROBE.search(e["text"])]
    assert cited, root["evidence"]
    e = cited[0]
    assert isinstance(e["line"], int) and MODPROBE.search(line_of(NAME, e["artifact"], e["line"]))


def test_components_one_failed_seven_blocked_one_degraded(rep):
    by = {}
    for c in rep["components"]:
        by.setdefault(c["state"], []).append(c)
    assert [c["name"] for c in by["failed"]] == ["nvidia-driver-daemonset"]
    assert len(by["blocked"]) == 7
    assert all(c["blocked_by"] and c["waiting_on"] for c in by["blocked"])
    assert [c["name"] for c in by["degraded"]] == ["nvidia-node-status-exporter"]


def test_the_cascade_and_the_ranked_fixes_are_in_the_report(rep):
    kinds = [fx["kind"] for fx in rep["root_causes"][0]["fixes"]]
    assert kinds[:3] == ["immediate", "workaround", "permanent"]
    blocked = [f for f in rep["findings"] if f["code"] == "OP002"]
    assert len(blocked) == 7 and all(f["caused_by"] == ["KD001"] for f in blocked)


@pytest.mark.parametrize("quote", [False, True], ids=["renamed", "markdown-quoted"])
def test_same_diagnosis_from_renamed_or_quoted_artifacts(tmp_path, quote):
    rep = report(str(disguised(NAME, tmp_path, quote)))
    root = rep["root_causes"][0]
    assert (root["code"], root["layer"]) == ("KD001", "kernel-driver")
    states = [c["state"] for c in rep["components"]]
    assert (states.count("failed"), states.count("blocked"), states.count("degraded")) == (1, 7, 1)
