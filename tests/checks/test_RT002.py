"""RT002: kubelet's containerd lacks the nvidia runtime that another containerd's config has (seed 003)."""

from __future__ import annotations

from runtime_samples import CONFIGS_TWO, ETC_CONFIG, HELM_DEFAULTS, HELM_FIXED, PS_TWO, SNAP_CONFIG, SNAP_DROP_IN, facts_from, fired


def test_fires_on_the_seed003_node(tmp_path):
    facts = facts_from({"ps.txt": PS_TWO, "configs.txt": CONFIGS_TWO, "helm.txt": HELM_DEFAULTS}, tmp_path)
    (f,) = fired(facts, "RT002")
    assert f.role.value == "root-cause" and f.layer.value == "container-runtime"
    cited = {(e.artifact, e.line) for e in f.evidence}
    assert ("ps.txt", 4) in cited  # kubelet --container-runtime-endpoint
    assert ("configs.txt", 39) in cited  # kubelet's containerd config: runc only
    assert ("configs.txt", 69) in cited and ("configs.txt", 73) in cited  # nvidia in /etc/containerd/config.toml
    assert ("helm.txt", 22) in cited  # toolkit.env: []
    assert "snap.k8s.containerd.service" in f.title and "/etc/containerd/config.toml" in f.title
    permanent = next(x for x in f.fixes if x.kind.value == "permanent")
    assert "value: /var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml" in permanent.snippet
    assert "value: /var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock" in permanent.snippet
    assert permanent.commands == (
        "helm upgrade gpu-operator-1758912452 nvidia/gpu-operator -n gpu-operator --reuse-values -f gpusleuth-toolkit-values.yaml",)
    patch = next(x for x in f.fixes if x.kind.value == "workaround")
    assert patch.commands[0].startswith("kubectl patch clusterpolicies.nvidia.com/cluster-policy --type merge -p '{\"spec\"")


def test_silent_when_kubelets_containerd_has_it_in_a_drop_in(tmp_path):
    facts = facts_from({"ps.txt": PS_TWO, "configs.txt": CONFIGS_TWO, "dropin.txt": SNAP_DROP_IN, "helm.txt": HELM_FIXED}, tmp_path)
    assert fired(facts, "RT002") == []


def test_silent_when_nothing_corroborates(tmp_path):
    # kubelet's config without nvidia, but no error, no other config with it, and the toolkit pointed right
    facts = facts_from({"ps.txt": PS_TWO, "configs.txt": SNAP_CONFIG, "helm.txt": HELM_FIXED}, tmp_path)
    assert fired(facts, "RT002") == []


def test_single_containerd_standard_node_with_runtime_is_silent(tmp_path):
    ps = "root@n:~# ps -ef | grep [c]ontainerd\nroot  1187  1  0 Sep26 ?  00:03:41 /usr/bin/containerd\n"
    facts = facts_from({"ps.txt": ps, "etc.txt": ETC_CONFIG, "helm.txt": HELM_DEFAULTS}, tmp_path)
    assert fired(facts, "RT002") == []
