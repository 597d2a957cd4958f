"""RT003: the toolkit is pointed at a containerd kubelet does not use (before anything fails)."""

from __future__ import annotations

from runtime_samples import HELM_DEFAULTS, HELM_FIXED, PS_TWO, facts_from, fired


def test_fires_with_two_instances_and_default_toolkit_settings(tmp_path):
    facts = facts_from({"ps.txt": PS_TWO, "helm.txt": HELM_DEFAULTS}, tmp_path)
    (f,) = fired(facts, "RT003")
    assert f.role.value == "root-cause" and "/etc/containerd/config.toml" in f.title
    cited = {(e.artifact, e.line) for e in f.evidence}
    assert ("ps.txt", 4) in cited and ("ps.txt", 2) in cited and ("helm.txt", 22) in cited
    assert any(x.snippet and "CONTAINERD_SOCKET" in x.snippet for x in f.fixes)


def test_silent_when_the_toolkit_targets_kubelets_containerd(tmp_path):
    facts = facts_from({"ps.txt": PS_TWO, "helm.txt": HELM_FIXED}, tmp_path)
    assert fired(facts, "RT003") == []


def test_silent_with_a_single_standard_containerd(tmp_path):
    ps = "root@n:~# ps -ef | grep [c]ontainerd\nroot  1187  1  0 Sep26 ?  00:03:41 /usr/bin/containerd\n"
    facts = facts_from({"ps.txt": ps, "helm.txt": HELM_DEFAULTS}, tmp_path)
    assert fired(facts, "RT003") == []


def test_only_toolkit_pods_seen_means_assumed_defaults_and_low_confidence(tmp_path):
    pods = ("root@192-18-132-31:~# kubectl get pods -n gpu-operator\n"
            "NAME                                       READY   STATUS    RESTARTS   AGE\n"
            "nvidia-container-toolkit-daemonset-bhqw6   1/1     Running   0          22m\n")
    (f,) = fired(facts_from({"ps.txt": PS_TWO, "pods.txt": pods}, tmp_path), "RT003")
    assert f.confidence == 0.5 and "these are its defaults" in f.explanation
