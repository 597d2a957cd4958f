"""RT001: the engine says it has no runtime handler of the name pods ask for."""

from __future__ import annotations

from runtime_samples import CONFIGS_TWO, HELM_DEFAULTS, PS_TWO, SEED003, facts_from, fired

DESCRIBE = (SEED003 / "describe-gpu-textgen.txt").read_text()
PODS = (SEED003 / "kubectl-get-pods.txt").read_text()

EVENTS = """\
root@gpu-1:~# kubectl get events -n gpu-operator
LAST SEEN   TYPE      REASON                   OBJECT                                     MESSAGE
3m45s       Warning   FailedCreatePodSandBox   pod/nvidia-operator-validator-l4754        Failed to create pod sandbox: rpc error: code = Unknown desc = unable to get OCI runtime for sandbox "18073b779521b77e3cbc7752dd5c2f63064efe24cec18807e917cd29f31fdf50": no runtime for "nvidia" is configured
3m44s       Warning   FailedCreatePodSandBox   pod/nvidia-dcgm-exporter-qd6vj             Failed to create pod sandbox: rpc error: code = Unknown desc = unable to get OCI runtime for sandbox "7def1d2c1efd1e16de5eeac923cc4834053b10299bb6eb2a08f5e9dd3e0ebd80": no runtime for "nvidia" is configured
"""

JOURNAL = """\
root@192-18-132-31:~# journalctl -u snap.k8s.containerd.service -n 100
Sep 28 03:40:06 192-18-132-31 k8s.containerd[242547]: time="2025-09-28T03:40:06.218563265Z" level=error msg="CreateContainer within sandbox \\"dc6f2ba7bdb1fb501c7dd5dcd50a48d9dc68c99274a565ae90befd07d7f26dad\\" for &ContainerMetadata{Name:plugin-validation,Attempt:0,} failed" error="failed to get sandbox runtime: no runtime for \\"nvidia\\" is configured"
"""

CRIO_EVENTS = """\
$ oc get events -n gpu-operator
LAST SEEN   TYPE      REASON                   OBJECT                          MESSAGE
2m          Warning   FailedCreatePodSandBox   pod/cuda-vectoradd              Failed to create pod sandbox: rpc error: code = Unknown desc = failed to find runtime handler nvidia from runtime list map[crun:0xc0004dd5f0 runc:0xc0004dd790]
"""

OTHER = """\
root@gpu-1:~# kubectl get events -n default
LAST SEEN   TYPE      REASON                   OBJECT              MESSAGE
1m          Warning   FailedCreatePodSandBox   pod/gpu-textgen     Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "4b1f": plugin type="cilium-cni" failed (add): unable to connect to Cilium daemon
"""


def test_symptom_of_rt002_when_the_setup_explains_it(tmp_path):
    facts = facts_from({"ps.txt": PS_TWO, "configs.txt": CONFIGS_TWO, "helm.txt": HELM_DEFAULTS,
                        "describe.txt": DESCRIBE, "pods.txt": PODS}, tmp_path)
    (f,) = fired(facts, "RT001")
    assert f.role.value == "symptom" and f.caused_by == ("RT002",)
    assert f.node == "192-18-132-31" and f.facts["handler"] == "nvidia" and f.facts["pods"] == ["gpu-textgen"]
    assert f.evidence[0].cite() == "describe.txt:64"


def test_root_cause_guess_from_an_events_table_alone(tmp_path):
    (f,) = fired(facts_from({"events.txt": EVENTS}, tmp_path), "RT001")
    assert f.role.value == "root-cause" and f.confidence <= 0.7 and not f.caused_by
    assert f.facts["pods"] == ["nvidia-dcgm-exporter-qd6vj", "nvidia-operator-validator-l4754"]
    assert [e.cite() for e in f.evidence][:2] == ["events.txt:3", "events.txt:4"]
    assert any("crictl info" in c for fix in f.fixes for c in fix.commands)


def test_journal_line_with_escaped_quotes(tmp_path):
    (f,) = fired(facts_from({"journal.txt": JOURNAL}, tmp_path), "RT001")
    assert f.facts["handler"] == "nvidia" and f.evidence[0].cite() == "journal.txt:2"


def test_crio_lists_the_handlers_it_has(tmp_path):
    (f,) = fired(facts_from({"events.txt": CRIO_EVENTS}, tmp_path), "RT001")
    assert "crun:0xc0004dd5f0" in f.explanation and "container runtime has no 'nvidia' handler" in f.title
    assert "OCI prestart hook" in f.explanation


def test_silent_on_other_sandbox_failures(tmp_path):
    assert fired(facts_from({"events.txt": OTHER, "pods.txt": PODS}, tmp_path), "RT001") == []
