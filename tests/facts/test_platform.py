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


def test_a_pitfall_of_some_nodes_is_told_only_where_a_sign_shows_it():
    """A pitfall with `when` (an OS image, a version) needs a sign the platform was recognised by that matches it."""
    import re

    from gpusleuth.checks.stated_common import platform_note

    for p in platforms():
        for pit in p.pitfalls:
            if "when" in pit:
                re.compile(pit["when"])
    gke = {"labels": {"cloud.google.com/gke-nodepool": "gpu"}}
    on_ubuntu = facts_from({}, Node("gpu-1", os_image="Ubuntu 22.04.4 LTS", kubelet_version="v1.31.2", **gke,
                                    evidence={"label:cloud.google.com/gke-nodepool": Evidence("nodes.yaml", 4, "gke-nodepool: gpu")})).get(Platform)
    assert on_ubuntu.row.id == "gke" and on_ubuntu.pitfall is None
    assert "Known pitfall" not in platform_note(on_ubuntu)  # what the runtime and toolkit findings say of the platform
    on_cos = facts_from({}, Node("gpu-1", os_image="Container-Optimized OS from Google", kubelet_version="v1.33.2-gke.1240000", **gke,
                                 evidence={"os_image": Evidence("nodes.yaml", 7, "osImage: Container-Optimized OS from Google")})).get(Platform)
    assert on_cos.row.id == "gke" and "Container-Optimized OS" in on_cos.pitfall["text"]
    assert "Known pitfall on Google Kubernetes Engine" in platform_note(on_cos)
    eks = {"labels": {"eks.amazonaws.com/nodegroup": "gpu"}}
    al2023 = facts_from({}, Node("gpu-1", os_image="Amazon Linux 2023.6.20241010", kernel_version="6.1.112-122.189.amzn2023.x86_64", **eks)).get(Platform)
    assert al2023.row.id == "eks" and "Amazon Linux 2023" in al2023.pitfall["text"]
    v133 = facts_from({}, Node("gpu-1", kubelet_version="v1.33.1-eks-1a2b3c4", **eks)).get(Platform)
    assert "EKS 1.33" in v133.pitfall["text"]
    al2 = facts_from({}, Node("gpu-1", kernel_version="5.10.226-214.880.amzn2.x86_64", kubelet_version="v1.30.4-eks-a737599", **eks)).get(Platform)
    assert "AL2 GPU AMI" in al2.pitfall["text"]


def test_platform_fixes_give_the_settings_first_and_what_the_platform_ships_last():
    """A summary quotes a root cause's first lasting fix: the toolkit paths, not the GKE install notes."""
    from gpusleuth.checks.stated_common import platform_fixes

    gke = facts_from({}, Node("gpu-1", labels={"cloud.google.com/gke-nodepool": "gpu"},
                              evidence={"label:cloud.google.com/gke-nodepool": Evidence("nodes.yaml", 4, "gke-nodepool: gpu")})).get(Platform)
    fixes = platform_fixes(gke)
    assert fixes[0].description.startswith("Give the GPU Operator's toolkit the Google Kubernetes Engine")
    assert fixes[-1].description.startswith("On Google Kubernetes Engine") and "driver.enabled=false" in fixes[-1].description
