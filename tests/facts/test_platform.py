"""facts/platform.py and knowledge/runtimes.toml [[platform]]: which distribution or node image, from which sign."""

from failure_fixtures import facts_from, node

from gpusleuth.errors import NotApplicable
from gpusleuth.facts import Platform
from gpusleuth.facts.platform import platforms
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.k8s import Node

import pytest

REQUIRED = {"k3s", "rke2", "k0s", "microk8s", "k8s-snap", "openshift", "kubespray", "kubeadm", "eks", "aks", "gke", "kind"}


def test_the_table_covers_the_distributions_each_with_its_sources():
    rows = {p.id: p for p in platforms()}
    assert REQUIRED <= set(rows)
    for p in rows.values():
        assert p.source.startswith("https://"), p.id
        assert p.config and p.socket and p.runtime in ("containerd", "cri-o"), p.id
        assert p.recognise.get("words"), p.id
        assert p.pitfalls and all(x["source"].startswith("https://") for x in p.pitfalls), p.id
        assert p.toolkit_env or p.toolkit_note, p.id
    assert rows["k3s"].edit_target().endswith("config.toml.tmpl") and rows["kubeadm"].edit_target() == "/etc/containerd/config.toml"
    assert rows["k0s"].toolkit_env["CONTAINERD_SOCKET"] == "/run/k0s/containerd.sock"
    assert rows["openshift"].runtime == "cri-o" and rows["openshift"].socket == "/var/run/crio/crio.sock"


def _node(name, **kw):
    ev = {k: Evidence("nodes.txt", i + 1, f"{k}: {v}") for i, (k, v) in enumerate(kw.items())}
    return Node(name, evidence=ev, **kw)


def test_kubelet_version_suffix_is_machine_evidence():
    p = facts_from({}, _node("gpu-1", kubelet_version="v1.28.5+rke2r1", container_runtime="containerd://1.7.11-k3s2")).get(Platform)
    assert p.row.id == "rke2" and not p.stated and "kubelet version v1.28.5+rke2r1" in p.how
    assert p.evidence[0].cite() == "nodes.txt:1"


def test_a_managed_node_image_by_its_labels():
    n = node("ip-10-0-1-5", labels={"eks.amazonaws.com/nodegroup": "gpu", "kubernetes.io/os": "linux"})
    p = facts_from({}, n).get(Platform)
    assert p.row.id == "eks" and p.nodes == ("ip-10-0-1-5",)
    assert "driver.enabled=false" in p.row.preinstalled


def test_machine_signs_beat_what_a_ticket_says():
    n = node("gpu-1", labels={"cloud.google.com/gke-nodepool": "l4-pool"})
    p = facts_from({"ticket.txt": "We run this on k3s in the lab and on GKE in production.\n"}, n).get(Platform)
    assert p.row.id == "gke" and not p.stated


def test_a_platform_only_named_in_a_sentence_is_stated():
    p = facts_from({"ticket.txt": "On our MicroK8s 1.29 cluster the GPU pods never start.\n"}).get(Platform)
    assert p.row.id == "microk8s" and p.stated and p.name.endswith("(stated)")
    assert p.evidence[0].cite().endswith("ticket.txt:1")


def test_no_sign_no_platform():
    with pytest.raises(NotApplicable):
        facts_from({"ticket.txt": "The GPU pods never start.\n"}).get(Platform)


def test_a_node_image_from_os_release():
    text = 'NAME="Container-Optimized OS"\nID=cos\nPRETTY_NAME="Container-Optimized OS from Google"\nVERSION_ID=117\n'
    p = facts_from({"os-release": text}).get(Platform)
    assert p.row.id == "gke" and not p.stated and "/etc/os-release Container-Optimized OS from Google" in p.how
