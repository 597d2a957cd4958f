"""RT001: the engine says it has no runtime handler of the name pods ask for."""

from __future__ import annotations

from runtime_samples import CONFIGS_TWO, HELM_DEFAULTS, PS_TWO, facts_from, fired

from gpusleuth.model.evidence import Evidence
from gpusleuth.model.k8s import Event, Pod
from gpusleuth.model.logs import ContainerLog, LogLine

SANDBOX = ('Warning  FailedCreatePodSandBox  3m12s (x94 over 23m)   kubelet            Failed to create pod sandbox: rpc error: '
           'code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured')


def _event(message: str, line: int = 62, pod: str = "gpu-textgen") -> Event:
    return Event(reason="FailedCreatePodSandBox", message=message.split("kubelet", 1)[-1].strip(), type="Warning",
                 namespace="default", object=f"pod/{pod}", source="kubelet", age="3m12s (x94 over 23m)",
                 evidence=Evidence("describe.txt", line, message))


def _pod() -> Pod:
    return Pod(name="gpu-textgen", namespace="default", node="192-18-132-31", status="ContainerCreating",
               evidence=Evidence("pods.txt", 3, "default  gpu-textgen  0/1  ContainerCreating  0  23m"))


def test_symptom_of_rt002_when_the_setup_explains_it(tmp_path):
    facts = facts_from({"ps.txt": PS_TWO, "configs.txt": CONFIGS_TWO, "helm.txt": HELM_DEFAULTS}, tmp_path, [_event(SANDBOX), _pod()])
    (f,) = fired(facts, "RT001")
    assert f.role.value == "symptom" and f.caused_by == ("RT002",)
    assert f.node == "192-18-132-31" and f.facts["handler"] == "nvidia" and f.facts["pods"] == ["gpu-textgen"]
    assert [e.cite() for e in f.evidence][:2] == ["describe.txt:62", "pods.txt:3"]


def test_root_cause_guess_when_nothing_else_is_known(tmp_path):
    facts = facts_from({}, tmp_path, [_event(SANDBOX)])
    (f,) = fired(facts, "RT001")
    assert f.role.value == "root-cause" and f.confidence <= 0.7 and not f.caused_by
    assert any("crictl info" in c for fix in f.fixes for c in fix.commands)


def test_journal_line_with_escaped_quotes(tmp_path):
    raw = ('Sep 28 03:40:06 192-18-132-31 k8s.containerd[242547]: time="2025-09-28T03:40:06.218563265Z" level=error '
           'msg="CreateContainer within sandbox \\"dc6f2ba7\\" for &ContainerMetadata{Name:plugin-validation,Attempt:0,} failed" '
           'error="failed to get sandbox runtime: no runtime for \\"nvidia\\" is configured"')
    log = ContainerLog("journal.txt", (LogLine("journal.txt", 4, raw, raw.split(": ", 1)[1]),), kind="journal")
    facts = facts_from({}, tmp_path, [log])
    (f,) = fired(facts, "RT001")
    assert f.facts["handler"] == "nvidia" and f.evidence[0].cite() == "journal.txt:4"


def test_crio_lists_the_handlers_it_has(tmp_path):
    msg = ("Warning  FailedCreatePodSandBox  2m  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = "
           "failed to find runtime handler nvidia from runtime list map[crun:0xc0004dd5f0 runc:0xc0004dd790]")
    facts = facts_from({}, tmp_path, [_event(msg)])
    (f,) = fired(facts, "RT001")
    assert "crun" in f.explanation and "container runtime has no 'nvidia' handler" in f.title


def test_silent_on_other_sandbox_failures(tmp_path):
    other = ('Warning  FailedCreatePodSandBox  1m  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = '
             'failed to setup network for sandbox "4b1f": plugin type="cilium-cni" failed (add): unable to connect to Cilium daemon')
    facts = facts_from({}, tmp_path, [_event(other), _pod()])
    assert fired(facts, "RT001") == []
