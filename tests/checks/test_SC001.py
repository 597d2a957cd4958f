"""SC001 pods-pending-insufficient-gpu: Pending on Insufficient nvidia.com/gpu, explained from below."""

from pathlib import Path

from gpusleuth.analysis.engine import run_checks
from gpusleuth.checks import get_check
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Role
from gpusleuth.model.k8s import Event, Node, Pod

SMI = (Path(__file__).parent.parent / "fixtures" / "nvidia_smi" / "h100_r535_table.txt").read_text()
MSG = ("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint "
       "{node-role.kubernetes.io/control-plane: }. preemption: 0/3 nodes are available: 1 No preemption victims found "
       "for incoming pod, 2 Preemption is not helpful for scheduling.")


def _event(msg=MSG, line=3):
    return Event("FailedScheduling", msg, "Warning", "ml", "pod/llm-train-0", "default-scheduler", age="4m (x3 over 14m)",
                 evidence=Evidence("events.txt", line, f"4m   Warning   FailedScheduling   pod/llm-train-0   {msg[:60]}"))


def _pod():
    return Pod("llm-train-0", "ml", status="Pending", ready="0/1", gpu_request=8,
               evidence=Evidence("pods.txt", 4, "llm-train-0   0/1   Pending   0   14m"))


def _node(gpus="0"):
    ev = {"allocatable:nvidia.com/gpu": Evidence("node.txt", 49, f"  nvidia.com/gpu:     {gpus}")}
    return Node("gpu-node-3", capacity={"nvidia.com/gpu": gpus}, allocatable={"nvidia.com/gpu": gpus}, evidence=ev, artifact="node.txt")


def _run(facts_of, *objs, files=None):
    facts = facts_of(files or {"README.txt": "nothing"})
    for o in objs:
        facts.add(o)
    findings, _ = run_checks(facts, checks=[get_check("SC001")])
    return findings


def test_pending_pod_is_a_symptom_of_the_node_advertising_no_gpu(facts_of):
    [f] = _run(facts_of, _event(), _pod(), _node("0"), files={"nvidia-smi.txt": SMI})
    assert f.role == Role.SYMPTOM and f.layer.value == "scheduler"
    assert "gpu-node-3 advertises nvidia.com/gpu: 0 although 8 GPU(s) are visible" in f.explanation
    assert [e.cite() for e in f.evidence][:2] == ["pods.txt:4", "events.txt:3"]
    assert "node.txt:49" in [e.cite() for e in f.evidence]
    assert f.facts["nodes_available"] == 0 and f.facts["nodes_total"] == 3
    assert "taint {node-role.kubernetes.io/control-plane:}" in f.explanation
    assert "requesting 8 nvidia.com/gpu" in f.explanation


def test_without_a_visible_lower_cause_it_is_a_low_confidence_root_cause(facts_of):
    [f] = _run(facts_of, _event(), _pod(), _node("8"))
    assert f.role == Role.ROOT_CAUSE and f.confidence <= 0.5
    assert "Nothing below the scheduler is visibly broken" in f.explanation


def test_silent_for_other_scheduling_failures_and_without_events(facts_of):
    cpu = _event("0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")
    assert _run(facts_of, cpu, _pod()) == []
    assert _run(facts_of, _pod(), _node("0")) == []
