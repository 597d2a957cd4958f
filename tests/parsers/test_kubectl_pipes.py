"""`kubectl get ... -o yaml | yq '<path>'` fragments and `--show-labels | tr ',' '\\n'` label lists."""

from __future__ import annotations

import pytest

from conftest import docs_from_text
from gpusleuth.errors import UnusableData
from gpusleuth.model.k8s import DaemonSet, K8sObject, Node
from gpusleuth.parsers.base import NO, SURE
from gpusleuth.parsers.kubectl_pipes import parse_fragment, parse_labels, sniff_fragment, sniff_labels

# k8s-device-plugin#1934, as pasted
PROJECTION = """\
$ kubectl get ds -n kube-system nvidia-device-plugin -o yaml | yq '.spec.template.spec | {"affinity": .affinity, "tolerations": .tolerations}'
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            - key: feature.node.kubernetes.io/pci-10de.present
              operator: In
              values:
                - "true"
tolerations:
  - key: CriticalAddonsOnly
    operator: Exists
  - effect: NoSchedule
    key: nvidia.com/gpu
    operator: Exists
$ kubectl get ds -n kube-system nvidia-device-plugin-node-feature-discovery-worker -o yaml | yq '.spec.template.spec.tolerations'
- effect: NoSchedule
  key: nvidia.com/gpu
  operator: Equal
  value: present
"""


def test_projection_is_placed_under_its_path_with_lines():
    proj, tol = docs_from_text(PROJECTION, "daemonsets.yaml")
    assert sniff_fragment(proj) == SURE
    ds, obj = parse_fragment.parse(proj)
    assert isinstance(obj, K8sObject) and (obj.kind, obj.name, obj.namespace) == ("DaemonSet", "nvidia-device-plugin", "kube-system")
    assert obj.get("spec.template.spec.tolerations.1.key") == "nvidia.com/gpu"
    assert obj.key_lines["spec.template.spec.tolerations"] == 11
    assert obj.key_lines["spec.template.spec.affinity.nodeAffinity"] == 3
    assert obj.evidence("spec.template.spec.tolerations.1").line == 14
    assert isinstance(ds, DaemonSet) and ds.tolerations[0] == {"key": "CriticalAddonsOnly", "operator": "Exists"}
    assert ds.desired is None  # the fragment says nothing about scheduling


def test_plain_path_list_fragment():
    _, tol = docs_from_text(PROJECTION, "daemonsets.yaml")
    ds, obj = parse_fragment.parse(tol)
    assert ds.name == "nvidia-device-plugin-node-feature-discovery-worker" and ds.tolerations[0]["value"] == "present"
    assert ds.tolerations_evidence.cite() == "daemonsets.yaml:18"
    assert obj.get("spec.template.spec.tolerations.0.operator") == "Equal" and obj.key_lines["spec.template.spec.tolerations.0"] == 18


def test_jq_labels_of_a_node_from_json():
    [doc] = docs_from_text("$ kubectl get node gpu-1 -o json | jq '.metadata.labels'\n{\n  \"nvidia.com/gpu.present\": \"true\"\n}\n")
    [obj] = parse_fragment.parse(doc)
    assert obj.kind == "Node" and obj.get("metadata.labels.nvidia.com/gpu.present") == "true"
    assert obj.key_lines["metadata.labels.nvidia.com/gpu.present"] == 3


@pytest.mark.parametrize("cmd", [
    "kubectl get ds -n kube-system x -o yaml | yq '.spec.template.spec.containers[0].env'",
    "kubectl get ds -n kube-system x -o yaml | yq '.items[] | select(.a)'",
    "kubectl get ds -A -o yaml | yq '.spec'",
    "kubectl get ds x -o yaml | grep -A5 tolerations",
])
def test_complex_expressions_stay_unrecognised(cmd):
    [doc] = docs_from_text(f"$ {cmd}\n- a: 1\n")
    assert sniff_fragment(doc) == NO


def test_null_output_is_unusable():
    [doc] = docs_from_text("$ kubectl get ds x -n y -o yaml | yq '.spec.template.spec.tolerations'\nnull\n")
    with pytest.raises(UnusableData):
        list(parse_fragment.parse(doc))


LABELS = """\
ubuntu@ip-172-31-9-210:~$ kubectl get node ip-172-31-9-210 --show-labels | tr ',' '\\n' | grep -E 'os_release|pci-10de'
feature.node.kubernetes.io/pci-10de.present=true
feature.node.kubernetes.io/system-os_release.ID=ubuntu
feature.node.kubernetes.io/system-os_release.VERSION_ID=24.04
nvidia.com/gpu.deploy.driver=true
"""


def test_show_labels_one_per_line():
    [doc] = docs_from_text(LABELS, "node-labels.txt")
    assert sniff_labels(doc) == SURE
    [n] = parse_labels.parse(doc)
    assert isinstance(n, Node) and n.name == "ip-172-31-9-210"
    assert n.labels["feature.node.kubernetes.io/system-os_release.VERSION_ID"] == "24.04"
    assert n.evidence["label:nvidia.com/gpu.deploy.driver"].cite() == "node-labels.txt:5"


def test_show_labels_unfiltered_keeps_the_label_after_the_columns():
    text = ("$ kubectl get nodes gpu-1 --show-labels | tr ',' '\\n'\n"
            "NAME    STATUS   ROLES    AGE   VERSION   LABELS\n"
            "gpu-1   Ready    <none>   2d    v1.30.1   beta.kubernetes.io/arch=amd64\n"
            "nvidia.com/gpu.present=true\n")
    [doc] = docs_from_text(text)
    [n] = parse_labels.parse(doc)
    assert n.labels == {"beta.kubernetes.io/arch": "amd64", "nvidia.com/gpu.present": "true"}


def test_labels_without_the_tr_are_not_this_parser():
    [doc] = docs_from_text("$ kubectl get node gpu-1 --show-labels\nNAME STATUS\n")
    assert sniff_labels(doc) == NO
