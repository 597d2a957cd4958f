"""Happens-before rules on the timeline: certain, probable, held, and not evaluable (a gap, never a pass)."""

from datetime import datetime, timezone

from gpusleuth.analysis.ordering import Ordering, marker_tree, rules, should_vs_happened
from gpusleuth.facts import Facts
from gpusleuth.facts.logs import signatures
from gpusleuth.facts.timeline import STATUS_STARTED, STATUS_TERMINATED
from gpusleuth.knowledge import table
from gpusleuth.model.logs import ContainerLog, LogLine

UTC = timezone.utc


def facts_with(*objs) -> Facts:
    """Facts holding these model objects, as parsers would have produced them."""
    facts = Facts("test")
    for o in objs:
        facts.add(o)
    return facts


DRIVER = "nvidia-driver-daemonset-7x2kq"
MOFED = "mofed-ubuntu22.04-6f8d7c9b5-ds-q4w2n"


def at(h, m, s=0):
    return datetime(2025, 11, 21, h, m, s, tzinfo=UTC)


def log(artifact, pod, container, rows):
    """rows: (text, time or None); MOFED-style naive times are given aware here: zones are not the point."""
    lines = tuple(LogLine(artifact, i, t, t, when, "rfc3339" if when else None, None, pod, container) for i, (t, when) in enumerate(rows, 1))
    return ContainerLog(artifact, lines, pod=pod, container=container)


def mofed(ready_at=(11, 58, 39), unset=True):
    rows = [("NVIDIA driver container exec start", at(11, 51, 6))]
    if unset:
        rows.append(("Unsetting driver ready state", at(11, 51, 6)))
    rows += [("Loading HCA driver and Access Layer:[  OK  ]", None), ("Setting driver ready state", at(*ready_at))]
    return log("mofed.log", MOFED, "mofed-container", rows)


def driver(rows):
    return log("driver.log", DRIVER, "nvidia-driver-ctr", rows)


def result(facts, rule="peermem-after-mofed-ready"):
    return next(r for r in facts.get(Ordering).results if r.rule.id == rule)


def test_certain_violation_with_measured_gap_and_both_sides():
    facts = facts_with(mofed(), driver([("Fri Nov 21 11:56:05 UTC 2025", at(11, 56, 5)),
                                        ("Loading NVIDIA Peer Memory kernel module...", None),
                                        ("+ modprobe -a nvidia-peermem", None),
                                        ("modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument", None),
                                        ("Fri Nov 21 11:56:08 UTC 2025", at(11, 56, 8))]))
    r = result(facts)
    assert r.status == "violated"
    v = r.violation
    assert v.certain and v.confidence == 0.9
    assert v.gap == (151.0, 154.0)
    assert v.describe() == "nvidia-peermem load attempted ≈2m32s before MOFED set .driver-ready at 11:58:39"
    cited = {(e.artifact, e.line) for e in v.evidence()}
    assert ("mofed.log", 4) in cited and ("mofed.log", 2) in cited  # set, and the unset in force
    assert {("driver.log", 2), ("driver.log", 3), ("driver.log", 4)} <= cited


def test_an_interval_that_straddles_the_ready_time_is_only_probable():
    facts = facts_with(mofed(), driver([("Fri Nov 21 11:56:05 UTC 2025", at(11, 56, 5)),
                                        ("+ modprobe -a nvidia-peermem", None),
                                        ("Fri Nov 21 12:05:00 UTC 2025", at(12, 5))]))
    v = result(facts).violation
    assert not v.certain and v.confidence < 0.6 and v.gap == (0.0, 154.0)
    assert v.describe() == ("nvidia-peermem load attempted probably before MOFED set .driver-ready at 11:58:39, by at most 2m34s "
                            "(its time is only known to lie in 11:56:05–12:05:00)")


def test_load_after_ready_holds():
    facts = facts_with(mofed(ready_at=(11, 50)), driver([("Fri Nov 21 11:56:05 UTC 2025", at(11, 56, 5)),
                                                         ("+ modprobe -a nvidia-peermem", None),
                                                         ("Fri Nov 21 11:56:09 UTC 2025", at(11, 56, 9))]))
    facts.add(log("mofed-order.log", MOFED, "mofed-container", []))
    r = result(facts)
    assert r.status in ("held", "violated")
    # unset at 11:51:06 came after the 11:50 set: at 11:56 the marker was absent, and set again never
    assert r.status == "violated" and r.violation.first is None and r.violation.certain


def test_set_without_a_later_unset_holds():
    facts = facts_with(mofed(ready_at=(11, 52), unset=False),
                       driver([("Fri Nov 21 11:56:05 UTC 2025", at(11, 56, 5)), ("+ modprobe -a nvidia-peermem", None),
                               ("Fri Nov 21 11:56:09 UTC 2025", at(11, 56, 9))]))
    assert result(facts).status == "held"


def test_marker_never_seen_absent_lowers_confidence():
    facts = facts_with(mofed(unset=False), driver([("Fri Nov 21 11:56:05 UTC 2025", at(11, 56, 5)), ("+ modprobe -a nvidia-peermem", None),
                                                   ("Fri Nov 21 11:56:09 UTC 2025", at(11, 56, 9))]))
    v = result(facts).violation
    assert v.certain and v.confidence == 0.75  # it may have been set before the logs begin


def test_missing_first_side_is_a_gap_not_a_pass():
    facts = facts_with(driver([("Fri Nov 21 11:56:05 UTC 2025", at(11, 56, 5)), ("+ modprobe -a nvidia-peermem", None)]))
    r = result(facts)
    assert r.status == "not-evaluated" and "no 'MOFED set .driver-ready' line" in r.reason
    assert any("peermem-after-mofed-ready" in str(g) for g in facts.gaps)


def test_untimed_then_side_is_a_gap():
    facts = facts_with(mofed(), ContainerLog("paste.txt", (LogLine("paste.txt", 1, "+ modprobe -a nvidia-peermem", "+ modprobe -a nvidia-peermem"),)))
    r = result(facts)
    assert r.status == "not-evaluated" and "carries no time" in r.reason


def test_window_rule_ignores_starts_before_the_toolkit_ran():
    toolkit = log("toolkit.log", "nvidia-container-toolkit-daemonset-sxfkr", "nvidia-container-toolkit-ctr", [
        ("Starting 'setup' for nvidia-toolkit", at(12, 0)), ("Sending SIGHUP signal to containerd", at(12, 1))])
    plugin_old = log("plugin-old.log", "nvidia-device-plugin-daemonset-abcde", "nvidia-device-plugin", [("Starting FS watcher.", at(11, 0))])
    plugin = log("plugin.log", "nvidia-device-plugin-daemonset-v46gq", "nvidia-device-plugin", [("Starting FS watcher.", at(12, 0, 30))])
    facts = facts_with(toolkit, plugin_old, plugin)
    r = result(facts, "gpu-pods-after-containerd-restart")
    assert r.status == "violated" and r.violation.then.artifact == "plugin.log"
    assert r.violation.describe() == "GPU operand container started 30s before toolkit restarted containerd at 12:01:00"


def test_should_vs_happened_and_marker_tree():
    facts = facts_with(mofed(), driver([("Fri Nov 21 11:56:05 UTC 2025", at(11, 56, 5)), ("+ modprobe -a nvidia-peermem", None),
                                        ("Fri Nov 21 11:56:08 UTC 2025", at(11, 56, 8))]),
                       log("peermem.log", DRIVER, "nvidia-peermem-ctr", [("waiting for mellanox ofed and nvidia drivers to be installed", None)]))
    ordering = facts.get(Ordering)
    (pic,) = should_vs_happened(ordering)
    assert pic["should"]["then"][-2:] == ["wait for .driver-ready", "nvidia-peermem load attempted"]
    assert pic["should"]["first"][-1] == "MOFED set .driver-ready"
    assert pic["happened"]["then"][-1][2] is False and pic["happened"]["first"][-1] == ("11:58:39", "MOFED set .driver-ready", True)
    (ready,) = [m for m in marker_tree(ordering) if m["path"] == "/run/mellanox/drivers/.driver-ready"]
    assert ready["status"] == "created 11:58:39" and ready["producer"] == "mofed"
    assert {c["container"] for c in ready["checked_by"]} >= {"nvidia-peermem-ctr", "k8s-driver-manager"}
    assert [n["container"] for n in ready["not_checked_by"]] == ["nvidia-driver-ctr"]
    assert ready["unset"][0]["cite"] == "mofed.log:2"


def test_every_rule_names_signatures_that_exist():
    ids = {s.id for s in signatures()[0]} | {STATUS_STARTED, STATUS_TERMINATED}
    tags = {s.tag for s in signatures()[0]}
    assert rules()
    for r in rules():
        for sel in filter(None, (r.first, r.then, r.window, r.revoked_by)):
            assert sel.signatures <= ids, (r.id, sel.signatures - ids)
            assert sel.tags <= tags, (r.id, sel.tags - tags)
        assert r.explanation and r.title and r.role.value in ("root-cause", "contributing")
    for p in table("ordering")["phase"]:
        for side in ("start", "end"):
            assert set(p[side].get("signatures", ())) <= ids, p["name"]
    for row in table("ordering")["same_event"]:
        assert set(row["a"]) | set(row["b"]) <= ids
