"""RuntimeSetup and Configuration: instances merged, kubelet's containerd found, toolkit target read."""

from __future__ import annotations

import pytest
from runtime_samples import CONFIGS_TWO, HELM_DEFAULTS, HELM_FIXED, PS_TWO, facts_from

from gpusleuth.errors import NotApplicable
from gpusleuth.facts import Configuration, RuntimeSetup
from gpusleuth.facts.runtime import Layout


def test_seed003_setup(tmp_path):
    s = facts_from({"ps.txt": PS_TWO, "configs.txt": CONFIGS_TWO, "helm.txt": HELM_DEFAULTS}, tmp_path).get(RuntimeSetup)
    std, snap = s.instances
    assert (std.distribution.id, snap.distribution.id) == ("standard", "k8s-snap")
    assert std.config.path == "/etc/containerd/config.toml" and snap.config.path.startswith("/var/lib/k8s-containerd/")
    assert s.kubelet_instance is snap and s.kubelet_instance_how == "kubelet endpoint"
    assert snap.unit == "snap.k8s.containerd.service" and std.unit == "containerd.service"
    assert s.toolkit_instance is std
    assert s.toolkit.config.default and s.toolkit.config.value == "/etc/containerd/config.toml"
    assert s.toolkit.config.evidence.cite() == "helm.txt:22"
    assert s.handler_configured("nvidia", snap) == (False, [snap.config])
    assert s.handler_configured("nvidia", std)[0] is True
    assert s.expected_target(snap)[:2] == (
        "/var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml",
        "/var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock")


def test_service_rows_merge_into_processes_and_kubelet_guess_by_distribution(tmp_path):
    units = ("root@n:~# systemctl list-units --type=service | grep containerd\n"
             "  containerd.service                  loaded active running containerd container runtime\n"
             "  snap.k8s.containerd.service         loaded active running Service for snap application k8s.containerd\n")
    ps = "\n".join(ln for ln in PS_TWO.splitlines() if "kubelet --" not in ln) + "\n"
    s = facts_from({"units.txt": units, "ps.txt": ps}, tmp_path).get(RuntimeSetup)
    assert len(s.instances) == 2 and {i.service for i in s.instances} == {"containerd.service", "snap.k8s.containerd.service"}
    assert s.kubelet is None and s.kubelet_instance.distribution.id == "k8s-snap"
    assert s.kubelet_instance_how.startswith("distribution")


def test_toolkit_target_from_user_values(tmp_path):
    s = facts_from({"ps.txt": PS_TWO, "helm.txt": HELM_FIXED}, tmp_path).get(RuntimeSetup)
    assert not s.toolkit.socket.default and s.toolkit.socket.evidence.cite() == "helm.txt:8"
    assert s.toolkit_instance is s.kubelet_instance


CLUSTER_POLICY = """\
root@gpu-1:~# kubectl get clusterpolicies.nvidia.com cluster-policy -o yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  cdi:
    enabled: false
  toolkit:
    enabled: true
    env:
    - name: CONTAINERD_SOCKET
      value: /run/k3s/containerd/containerd.sock
status:
  state: notReady
"""

TOOLKIT_DS = """\
root@k3s-gpu:~# kubectl get ds -n gpu-operator nvidia-container-toolkit-daemonset -o yaml
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-container-toolkit-daemonset
  namespace: gpu-operator
spec:
  template:
    spec:
      containers:
      - name: nvidia-container-toolkit-ctr
        image: nvcr.io/nvidia/k8s/container-toolkit:v1.17.5-ubuntu20.04
        env:
        - name: RUNTIME
          value: containerd
        - name: CONTAINERD_RUNTIME_CLASS
          value: nvidia
        - name: RUNTIME_CONFIG
          value: /runtime/config-dir/config.toml
        - name: CONTAINERD_CONFIG
          value: /runtime/config-dir/config.toml
        - name: RUNTIME_SOCKET
          value: /runtime/sock-dir/containerd.sock
        - name: CONTAINERD_SOCKET
          value: /runtime/sock-dir/containerd.sock
        volumeMounts:
        - mountPath: /runtime/config-dir/
          name: containerd-config
        - mountPath: /runtime/sock-dir/
          name: containerd-socket
      volumes:
      - hostPath:
          path: /var/lib/rancher/k3s/agent/etc/containerd
          type: DirectoryOrCreate
        name: containerd-config
      - hostPath:
          path: /run/k3s/containerd
          type: ""
        name: containerd-socket
"""


def test_clusterpolicy_wins_over_helm_values(tmp_path):
    conf = facts_from({"helm.txt": HELM_FIXED, "cp.yaml": CLUSTER_POLICY}, tmp_path).get(Configuration)
    assert conf.env("toolkit", "CONTAINERD_SOCKET").evidence.cite() == "cp.yaml:13"
    assert conf.env("toolkit", "CONTAINERD_CONFIG").explicit is False  # the ClusterPolicy's env list lacks it
    assert conf.enabled("cdi.enabled") is False and conf.setting("cdi.enabled").evidence.cite() == "cp.yaml:8"
    assert conf.policy_name == "cluster-policy" and conf.release.name == "gpu-operator-1758912452"


def test_daemonset_env_is_mapped_back_to_host_paths(tmp_path):
    s = facts_from({"ds.yaml": TOOLKIT_DS}, tmp_path).get(RuntimeSetup)
    assert s.toolkit.socket.value == "/run/k3s/containerd/containerd.sock" and s.toolkit.socket.evidence.cite() == "ds.yaml:25"
    assert s.toolkit.config.value == "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"
    assert s.toolkit.runtime_class.value == "nvidia" and not s.toolkit.runtime_class.default


def test_release_name_and_namespace_from_pod_names(tmp_path):
    from gpusleuth.model.evidence import Evidence
    from gpusleuth.model.k8s import Pod
    pod = Pod(name="gpu-operator-1758912452-node-feature-discovery-worker-7kv2n", namespace="gpu-operator",
              evidence=Evidence("pods.txt", 6, "gpu-operator   gpu-operator-1758912452-node-feature-discovery-worker-7kv2n"))
    plain = "toolkit:\n  env: []\ndriver:\n  enabled: false\n"
    conf = facts_from({"values.yaml": plain}, tmp_path, [pod]).get(Configuration)
    assert (conf.release.name, conf.release.namespace) == ("gpu-operator-1758912452", "gpu-operator")


def test_nothing_runtime_related_is_not_applicable(tmp_path):
    with pytest.raises(NotApplicable):
        facts_from({"notes.txt": "hello\n"}, tmp_path).get(RuntimeSetup)


@pytest.mark.parametrize("layout,config,socket,values", [
    (Layout("{base}/k8s-containerd/etc/containerd/config.toml", "{base}/k8s-containerd/run/containerd/containerd.sock"),
     None, "/ck8s/k8s-containerd/run/containerd/containerd.sock", {"base": "/ck8s"}),
    (Layout("/var/snap/microk8s/{rev}/args/containerd.toml", "/var/snap/microk8s/common/run/containerd.sock"),
     "/var/snap/microk8s/7229/args/containerd.toml", None, {"rev": "7229"}),
    (Layout("/etc/containerd/config.toml", "/run/containerd/containerd.sock"), "/etc/k0s/containerd.toml", None, None),
])
def test_layout_placeholders(layout, config, socket, values):
    assert layout.match(config, socket) == values


def test_template_and_unknown_path_become_gaps(tmp_path):
    tmpl = ("root@k3s:~# cat /var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl\n{{ template \"base\" . }}\n"
            '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n  runtime_type = "io.containerd.runc.v2"\n')
    anonymous = 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n'
    facts = facts_from({"tmpl.txt": tmpl, "pasted.txt": anonymous}, tmp_path)
    facts.get(RuntimeSetup)
    gaps = [str(g) for g in facts.gaps]
    assert any(g.startswith("tmpl.txt:2: Go template") for g in gaps)
    assert any(g.startswith("pasted.txt:1: which host file") for g in gaps)


NIC_POLICY = """\
root@gpu-1:~# kubectl get nicclusterpolicies.mellanox.com nic-cluster-policy -o yaml
apiVersion: mellanox.com/v1alpha1
kind: NicClusterPolicy
metadata:
  name: nic-cluster-policy
spec:
  ofedDriver:
    image: doca-driver
    repository: nvcr.io/nvidia/mellanox
    version: 25.01-0.6.0.0-0
"""


def test_nic_cluster_policy_settings(tmp_path):
    conf = facts_from({"ncp.yaml": NIC_POLICY}, tmp_path).get(Configuration)
    s = conf.nic_setting("ofedDriver.version")
    assert s.value == "25.01-0.6.0.0-0" and s.evidence.cite() == "ncp.yaml:10" and s.source == "NicClusterPolicy nic-cluster-policy"
    assert conf.cluster_policy is None and conf.setting("driver.rdma.enabled") is None


RKE2_FILE = """\
root@gpu-worker-1:~# cat /var/lib/rancher/rke2/agent/etc/containerd/config.toml
# File generated by rke2. DO NOT EDIT. Use config.toml.tmpl instead.
version = 2

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
"""


def test_rke2_config_is_rke2_not_k3s_and_its_default_runtime_is_runc_when_unset(tmp_path):
    """k3s and RKE2 share {data}/agent/etc/containerd/config.toml; the header and data dir decide."""
    s = facts_from({"c.txt": RKE2_FILE}, tmp_path).get(RuntimeSetup)
    (inst,) = s.instances
    assert inst.distribution.id == "rke2" and inst.socket == "/run/k3s/containerd/containerd.sock"
    d = s.default_runtime_of(inst)
    assert d.name == "runc" and d.implicit and d.evidence.cite() == "c.txt:6"
    assert "sets no default_runtime_name" in d.evidence.text


def test_default_runtime_from_a_drop_in_or_a_grepped_crictl_info_wins(tmp_path):
    drop = ("root@n:~# cat /var/lib/rancher/rke2/agent/etc/containerd/conf.d/99-nvidia.toml\nversion = 2\n"
            "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n  default_runtime_name = \"nvidia\"\n")
    main = RKE2_FILE.replace("version = 2\n", "version = 2\nimports = [\"/var/lib/rancher/rke2/agent/etc/containerd/conf.d/*.toml\"]\n")
    s = facts_from({"c.txt": main, "d.txt": drop}, tmp_path / "a").get(RuntimeSetup)
    assert s.default_runtime_of(s.kubelet_instance).name == "nvidia"
    grep = ("root@n:~# crictl --runtime-endpoint unix:///run/k3s/containerd/containerd.sock info | grep defaultRuntimeName\n"
            '    "defaultRuntimeName": "runc",\n')
    s = facts_from({"c.txt": main, "d.txt": drop, "g.txt": grep}, tmp_path / "b").get(RuntimeSetup)
    (inst,) = s.instances
    d = s.default_runtime_of(inst)
    assert d.name == "runc" and not d.implicit and d.evidence.cite() == "g.txt:2"
    assert inst.config is not None and s.handler_configured("runc", inst)[0] is True  # a grep says nothing of runtimes
