"""OP103 clusterpolicy-not-ready: the states that are not ready, mapped to their operands."""

from failure_fixtures import cites, facts_from, pod, run, waiting

OPERATOR = """\
$ kubectl logs -n gpu-operator gpu-operator-7bbf8bb6b7-9tw4v
{"level":"info","ts":1741165859.0092173,"logger":"controllers.ClusterPolicy","msg":"ClusterPolicy step completed","state:":"state-cc-manager","status":"disabled"}
{"level":"error","ts":1741165859.009253,"logger":"controllers.ClusterPolicy","msg":"ClusterPolicy is not ready, states not ready: [state-driver state-operator-validation]"}
"""


def test_not_ready_is_a_symptom_of_the_failed_driver():
    driver = pod("nvidia-driver-daemonset-r2k9d", status="CrashLoopBackOff", ready="0/1", restarts=30,
                 containers=(waiting("nvidia-driver-ctr", "CrashLoopBackOff"),))
    [f] = run("OP103", facts_from({"operator.log": OPERATOR}, driver))
    assert f.role.value == "symptom" and f.facts["failed"] == ["nvidia-driver-daemonset"]
    assert cites(f) == ["operator.log:3"] and "state-driver (nvidia-driver-daemonset: failed)" in f.explanation


def test_without_operand_pods_it_says_what_to_collect():
    [f] = run("OP103", facts_from({"operator.log": OPERATOR}))
    assert f.role.value == "root-cause" and "collect the operand pods' status" in f.explanation


def test_silent_when_ready():
    ok = OPERATOR.replace('"level":"error","ts":1741165859.009253,"logger":"controllers.ClusterPolicy","msg":"ClusterPolicy is not ready, states not ready: [state-driver state-operator-validation]"',
                          '"level":"info","ts":1741165859.009253,"logger":"controllers.ClusterPolicy","msg":"ClusterPolicy is ready as all resources have been successfully reconciled"')
    assert run("OP103", facts_from({"operator.log": ok})) == []


def test_a_status_without_states_still_points_at_the_failed_operand():
    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.sources import open_source

    report = diagnose(open_source("example:peermem-race"))
    [f] = [x for x in report.findings if x.code == "OP103"]
    assert f.role.value == "symptom" and "nvidia-driver-daemonset failed" in f.explanation
    assert cites(f) == ["cluster_policy.yaml:125"]
