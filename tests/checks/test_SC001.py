"""SC001 pods-pending-insufficient-gpu: Pending on Insufficient nvidia.com/gpu, explained from below."""

import operand_seed as seed
from node_texts import DESCRIBE_NODE, SMI

from gpusleuth.analysis.engine import run_checks
from gpusleuth.checks import get_check
from gpusleuth.model.finding import Role

PODS = """\
$ kubectl get pods -n ml
NAME          READY   STATUS    RESTARTS   AGE
llm-train-0   0/1     Pending   0          14m
"""
EVENTS = """\
$ kubectl get events -n ml
LAST SEEN   TYPE      REASON             OBJECT            MESSAGE
4m          Warning   FailedScheduling   pod/llm-train-0   0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.
"""
CPU_EVENTS = """\
$ kubectl get events -n ml
LAST SEEN   TYPE      REASON             OBJECT            MESSAGE
4m          Warning   FailedScheduling   pod/llm-train-0   0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.
"""


def _run(files):
    findings, _ = run_checks(seed.facts_from(files), checks=[get_check("SC001")])
    return findings


def test_pending_pod_is_a_symptom_of_the_node_advertising_no_gpu():
    [f] = _run({"pods.txt": PODS, "events.txt": EVENTS, "node.txt": DESCRIBE_NODE, "nvidia-smi.txt": SMI})
    assert f.role == Role.SYMPTOM and f.layer.value == "scheduler"
    assert "gpu-node-3 advertises nvidia.com/gpu: 0 although 8 GPU(s) are visible" in f.explanation
    cites = [e.cite() for e in f.evidence]
    assert cites[:2] == ["pods.txt:3", "events.txt:3"] and "node.txt:20" in cites
    assert f.facts["nodes_available"] == 0 and f.facts["nodes_total"] == 3
    assert "taint {node-role.kubernetes.io/control-plane:}" in f.explanation


def test_without_a_visible_lower_cause_it_is_a_low_confidence_root_cause():
    [f] = _run({"pods.txt": PODS, "events.txt": EVENTS})
    assert f.role == Role.ROOT_CAUSE and f.confidence <= 0.5
    assert "Nothing below the scheduler is visibly broken" in f.explanation


def test_silent_for_other_scheduling_failures_and_without_events():
    assert _run({"pods.txt": PODS, "events.txt": CPU_EVENTS}) == []
    assert _run({"pods.txt": PODS, "node.txt": DESCRIBE_NODE}) == []
