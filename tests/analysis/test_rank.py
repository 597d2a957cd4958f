"""Bottom-up ranking: the lowest broken layer is the root cause; guesses yield to specific causes."""

from gpusleuth.analysis.rank import rank, verdict
from gpusleuth.model.finding import Finding, Role, Severity
from gpusleuth.model.layers import Layer


def F(code, layer, role=Role.ROOT_CAUSE, node="n1", conf=0.9, sev=Severity.ERROR):
    return Finding(code, code.lower(), f"title {code}", layer, sev, role, "x", node=node, confidence=conf)


def test_root_causes_are_ordered_bottom_up_and_symptoms_linked():
    roots, ordered = rank([F("SC001", Layer.SCHEDULER, Role.SYMPTOM), F("DP001", Layer.DEVICE_PLUGIN), F("KD001", Layer.KERNEL_DRIVER)])
    assert [f.code for f in roots] == ["KD001", "DP001"]
    by = {f.code: f for f in ordered}
    assert by["SC001"].caused_by == ("KD001",)
    assert by["DP001"].caused_by == ("KD001",)


def test_fallback_guess_is_demoted_when_a_specific_cause_exists_on_that_node():
    roots, ordered = rank([F("OP001", Layer.CONTAINER_TOOLKIT, conf=0.4), F("RT002", Layer.CONTAINER_RUNTIME)])
    assert [f.code for f in roots] == ["RT002"]
    demoted = next(f for f in ordered if f.code == "OP001")
    assert demoted.role == Role.SYMPTOM and demoted.caused_by == ("RT002",)


def test_fallback_stays_root_cause_when_nothing_specific_explains_it():
    roots, _ = rank([F("OP001", Layer.CONTAINER_TOOLKIT, conf=0.4), F("RT002", Layer.CONTAINER_RUNTIME, node="other")])
    assert {f.code for f in roots} == {"OP001", "RT002"}


def test_verdict():
    assert verdict([F("KD001", Layer.KERNEL_DRIVER)], 3) == "broken"
    assert verdict([F("KD001", Layer.KERNEL_DRIVER, sev=Severity.WARNING)], 3) == "degraded"
    assert verdict([], 3) == "healthy"
    assert verdict([], 0) == "no-verdict"  # neither an error nor a sign of health
    assert verdict([], 3, partial=True) == "no-verdict"  # input cut short: its silence is not health


def test_unexplained_errors_fail_without_claiming_a_cause():
    guess = Finding("DP900", "unexplained-device-plugin-failure", "t", Layer.DEVICE_PLUGIN, Severity.ERROR, Role.ROOT_CAUSE, "x", confidence=0.3)
    assert verdict([guess], 3) == "failing"
    assert verdict([guess, F("KD001", Layer.KERNEL_DRIVER)], 3) == "broken"


def test_findings_caused_by_a_demoted_fallback_point_at_the_specific_cause():
    from dataclasses import replace

    blocked = replace(F("OP002", Layer.CONTAINER_TOOLKIT, Role.BLOCKED, sev=Severity.WARNING), caused_by=("OP001",))
    roots, ordered = rank([F("OP001", Layer.KERNEL_DRIVER, conf=0.5), F("KD001", Layer.KERNEL_DRIVER), blocked])
    assert [f.code for f in roots] == ["KD001"]
    by = {f.code: f for f in ordered}
    assert by["OP001"].caused_by == ("KD001",)
    assert by["OP002"].caused_by == ("KD001",)


def test_a_warning_low_in_the_stack_does_not_outrank_a_breaking_cause_above_it():
    roots, _ = rank([F("RT008", Layer.CONTAINER_RUNTIME, sev=Severity.WARNING, node=None), F("DP001", Layer.DEVICE_PLUGIN, sev=Severity.CRITICAL)])
    assert [f.code for f in roots] == ["DP001", "RT008"]


def test_a_demoted_guess_is_explained_by_the_breaking_cause_not_by_a_warning_below_it():
    """An end-of-life driver (warning, userspace-driver) sits lower than a CUDA error (cuda-runtime) on
    the same node; the crash-loop guess is explained by the CUDA error alone."""
    roots, ordered = rank([F("UD010", Layer.USERSPACE_DRIVER, sev=Severity.WARNING), F("CU104", Layer.CUDA_RUNTIME),
                           F("OP001", Layer.CUDA_RUNTIME, conf=0.5)])
    assert next(f for f in ordered if f.code == "OP001").caused_by == ("CU104",)
    assert [f.code for f in roots] == ["CU104", "UD010"]


def test_headline_counts_only_independent_breaking_root_causes():
    from dataclasses import replace

    from gpusleuth.analysis.diagnose import _headline

    hw = F("HW001", Layer.HARDWARE)
    explained = replace(F("DP101", Layer.DEVICE_PLUGIN), caused_by=("HW001",))
    eol = F("UD010", Layer.USERSPACE_DRIVER, sev=Severity.WARNING)
    assert _headline([hw, explained, eol], [], ()) == "title HW001 on n1"
    assert _headline([hw, F("RT002", Layer.CONTAINER_RUNTIME, node="n2")], [], ()).endswith("(+1 more root cause(s))")
    assert _headline([replace(hw, title="Xid 79 on n1")], [], ()) == "Xid 79 on n1"


def test_demoted_lookup_is_the_scan_it_replaced():
    """_Demoted.first answers what the scan of every demoted finding answered (first in list order with the code,
    in the finding's scope, not the finding itself), and ranking a fleet's findings repoints as before."""
    import random
    from dataclasses import replace

    from gpusleuth.analysis.rank import _Demoted, _same_scope

    rnd = random.Random(7)
    nodes = [None, "n1", "n2", "n3"]
    codes = ["OP001", "OP002", "KD001"]
    for _ in range(200):
        items = [replace(F(rnd.choice(codes), Layer.KERNEL_DRIVER, Role.SYMPTOM, node=rnd.choice(nodes), conf=0.4),
                         caused_by=(rnd.choice(codes),)) for _ in range(rnd.randint(0, 12))]
        others = [F(rnd.choice(codes), Layer.KERNEL_DRIVER, node=rnd.choice(nodes)) for _ in range(3)]
        d = _Demoted(items)
        for f in items + others:
            for code in codes:
                want = next((g for g in items if g.code == code and g is not f and _same_scope(f, g)), None)
                assert d.first(f, code) is want


def test_a_blocked_operand_is_caused_by_what_fails_on_its_node_whatever_the_layers():
    """dcgm-exporter (userspace-driver) waits in Init for the toolkit (container-toolkit) to be ready: what blocks it
    can sit above it in the stack. A symptom keeps the rule that its cause lies below it."""
    roots, ordered = rank([F("TK001", Layer.CONTAINER_TOOLKIT), F("OP002", Layer.USERSPACE_DRIVER, Role.BLOCKED, sev=Severity.WARNING),
                           F("CU104", Layer.USERSPACE_DRIVER, Role.SYMPTOM), F("OP002", Layer.USERSPACE_DRIVER, Role.BLOCKED, node="n2",
                                                                          sev=Severity.WARNING)])
    by = {(f.code, f.node): f for f in ordered}
    assert by[("OP002", "n1")].caused_by == ("TK001",)
    assert by[("CU104", "n1")].caused_by == ()
    assert by[("OP002", "n2")].caused_by == ()  # nothing fails on its node


def test_a_contributing_condition_is_not_caused_by_a_failure_below_it():
    """A driver past end of life (userspace-driver) on a node whose peermem module fails to load (kernel-driver):
    the failure does not cause the version, and a fleet's nodes with and without the failure share one condition."""
    roots, ordered = rank([F("KD001", Layer.KERNEL_DRIVER), F("UD010", Layer.USERSPACE_DRIVER, Role.CONTRIBUTING, sev=Severity.WARNING)])
    assert next(f for f in ordered if f.code == "UD010").caused_by == ()
