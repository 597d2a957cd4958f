"""FD101 nfd-labels-missing: a GPU node without NFD's NVIDIA PCI label."""

from failure_fixtures import cites, facts_from, node, pod, run

OPERATOR = """\
$ kubectl logs -n gpu-operator gpu-operator-helm-5f7c9d8b6f-2lq4x
1.6662113914293282e+09    INFO    controllers.ClusterPolicy    Couldn't get kernelVersion, did you run the node feature discovery?    {"Request.Namespace": "default", "Request.Name": "Node", "Error": "Label.Node \\"feature.node.kubernetes.io/kernel-version.full\\" not found"}
"""
VALUES = "$ helm get values gpu-operator -n gpu-operator\nUSER-SUPPLIED VALUES:\nnfd:\n  enabled: false\ndriver:\n  enabled: true\n"


def _gpu_node(labels):
    return node("ip-10-0-3-17", labels=labels, capacity={"nvidia.com/gpu": "1"}, allocatable={"nvidia.com/gpu": "1"})


def test_nfd_disabled_and_node_unlabelled():
    facts = facts_from({"operator.log": OPERATOR, "values.txt": VALUES}, _gpu_node({"kubernetes.io/os": "linux"}),
                       pod("gpu-operator-helm-5f7c9d8b6f-2lq4x", node="ip-10-0-3-1"))
    [f] = run("FD101", facts)
    assert "nfd.enabled=False" in f.explanation
    assert cites(f) == ["nodes.txt:6", "values.txt:4", "operator.log:2"]


def test_silent_when_the_pci_label_is_there():
    labelled = _gpu_node({"feature.node.kubernetes.io/pci-10de.present": "true"})
    assert run("FD101", facts_from({}, labelled)) == []


def test_silent_without_the_gpu_operator():
    """k8s-device-plugin#990: a standalone device plugin chart on an unlabelled node; nothing selects by NFD labels."""
    plugin = pod("nvdp-nvidia-device-plugin-drdv2", ns="nvidia-device-plugin", node="ip-10-0-3-17")
    assert run("FD101", facts_from({}, _gpu_node({"kubernetes.io/os": "linux"}), plugin)) == []
