"""RT002: kubelet's containerd lacks the nvidia runtime that another containerd's config has (seed 003)."""

from __future__ import annotations

from runtime_samples import CONFIGS_TWO, ETC_CONFIG, HELM_DEFAULTS, HELM_FIXED, PS_TWO, SEED003, SNAP_CONFIG, SNAP_DROP_IN, facts_from, fired


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


CRICTL_SNAP = """\
root@192-18-132-31:~# crictl --runtime-endpoint unix:///var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock info
{
  "status": {"conditions": [{"type": "RuntimeReady", "status": true, "reason": "", "message": ""}]},
  "config": {
    "containerd": {
      "snapshotter": "overlayfs",
      "defaultRuntimeName": "runc",
      "runtimes": {
        "runc": {"runtimeType": "io.containerd.runc.v2", "options": {"SystemdCgroup": true}}
      }
    },
    "enableCDI": false,
    "containerdEndpoint": "/var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock"
  },
  "lastCNILoadStatus": "OK"
}
"""


def test_crictl_info_of_kubelets_socket_is_the_live_answer(tmp_path):
    facts = facts_from({"ps.txt": PS_TWO, "crictl.txt": CRICTL_SNAP, "etc.txt": ETC_CONFIG, "helm.txt": HELM_DEFAULTS}, tmp_path)
    (f,) = fired(facts, "RT002")
    cited = [e.cite() for e in f.evidence]
    assert "crictl.txt:9" in cited and "etc.txt:22" in cited
    assert "crictl info" in f.explanation


def test_a_drop_in_nobody_imports_gets_an_imports_fix(tmp_path):
    ps = "root@n:~# ps -ef | grep [c]ontainerd\nroot  1187  1  0 Sep26 ?  00:03:41 /usr/bin/containerd\n"
    main = SNAP_CONFIG.replace("/var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml", "/etc/containerd/config.toml").replace(
        'imports = ["/var/lib/k8s-containerd/k8s-containerd/etc/containerd/conf.d/*.toml"]\n', "")
    drop = SNAP_DROP_IN.replace("/var/lib/k8s-containerd/k8s-containerd/etc/containerd/conf.d/", "/etc/containerd/conf.d/")
    helm = HELM_DEFAULTS
    (f,) = fired(facts_from({"ps.txt": ps, "main.txt": main, "dropin.txt": drop, "helm.txt": helm}, tmp_path), "RT002")
    assert "does not read (its config has no `imports` line that matches it)" in f.explanation
    assert "it is configured in /etc/containerd/conf.d/99-nvidia.toml" in f.title
    (fix,) = f.fixes
    assert fix.snippet == 'imports = ["/etc/containerd/conf.d/*.toml"]\n' and fix.commands == ("sudo systemctl restart containerd.service",)


def test_without_a_process_listing_the_distributions_containerd_is_assumed(tmp_path):
    describe = (SEED003 / "describe-gpu-textgen.txt").read_text()
    facts = facts_from({"configs.txt": CONFIGS_TWO, "helm.txt": HELM_DEFAULTS, "describe.txt": describe}, tmp_path)
    (f,) = fired(facts, "RT002")
    assert f.confidence < 0.9 and "distribution (Canonical Kubernetes (k8s snap)" in f.explanation
    assert "assumed from /var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml" in f.explanation
    assert "value: /var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock" in f.fixes[0].snippet
