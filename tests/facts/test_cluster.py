"""The Cluster view: one object per pod/node/daemonset/event whatever mix of tables, describes and JSON
described it, fragments attributed only on evidence, owners resolved only on evidence."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from gpusleuth.errors import NotApplicable
from gpusleuth.facts import Cluster

K = FIXTURES / "kubectl"
DRIVER = "nvidia-driver-daemonset-418.94.202510230424-0-564xm"
DRIVER_DESCR = f"must-gather/gpu_operand_pod_{DRIVER}.descr"


def read(name: str) -> str:
    return (K / name).read_text(encoding="utf-8")


def cluster_of(facts_of, files: dict[str, str]):
    facts = facts_of(files)
    return facts.get(Cluster), facts


def test_one_pod_from_a_table_a_describe_and_json(facts_of):
    # files are read in name order: the table first (no namespace), then the describe, then the JSON
    cluster, facts = cluster_of(facts_of, {
        "a_get_pods.txt": read("seed001_gpu_operator_pods.txt"),
        "b_describe.txt": read(DRIVER_DESCR),
        "c_pods.json": read("pods.json"),
    })
    matches = [p for p in cluster.pods if p.name == DRIVER]
    assert len(matches) == 1
    pod = matches[0]
    assert pod.namespace == "nvidia-gpu-operator"  # the table had none
    assert pod.node == "gh200-worker-1" and pod.last_restart == "4m7s"  # describe's node, the table's "(4m7s ago)"
    assert pod.evidence.artifact == "a_get_pods.txt" and pod.evidence.line == 2
    names = [c.name for c in pod.containers]
    assert names == ["k8s-driver-manager", "nvidia-driver-ctr", "nvidia-peermem-ctr", "openshift-driver-toolkit-ctr", "nvidia-fs-ctr"]
    ctr = pod.container("nvidia-driver-ctr")
    assert (ctr.reason, ctr.last_reason, ctr.last_exit_code) == ("CrashLoopBackOff", "Error", 1)
    assert ctr.message.startswith("back-off 5m0s")  # only the JSON carries the waiting message
    assert ctr.evidence.artifact == "b_describe.txt"
    assert pod.env["GPU_DIRECT_RDMA_ENABLED"] == "true" and pod.env["OPENSHIFT_VERSION"] == "4.18"
    toolkit = cluster.pod("nvidia-container-toolkit-daemonset-sxfkr")
    assert toolkit.namespace == "nvidia-gpu-operator" and toolkit.container("driver-validation").state == "running"
    assert len([p for p in cluster.pods if p.name == "nvidia-container-toolkit-daemonset-sxfkr"]) == 1
    assert not facts.errors


def test_node_from_a_table_a_describe_and_labels(facts_of):
    labels = "gpu-node-01\n- nvidia.com/gpu.deploy.dcgm=true\n- nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3\n\n"
    cluster, _ = cluster_of(facts_of, {
        "a_nodes.txt": read("get_nodes_wide.txt"),
        "b_describe.txt": read("describe_node_gpu-node-01.txt"),
        "gpu_nodes.labels": labels,
    })
    node = cluster.nodes["gpu-node-01"]
    assert len(node.conditions) == 5  # the table's lone Ready and the describe's five conditions are one list
    ready = next(c for c in node.conditions if c.type == "Ready")
    assert (ready.status, ready.reason) == ("True", "KubeletReady") and ready.evidence.artifact == "a_nodes.txt"
    assert node.capacity["nvidia.com/gpu"] == "8" and node.evidence["capacity:nvidia.com/gpu"].artifact == "b_describe.txt"
    assert node.labels["nvidia.com/gpu.deploy.dcgm"] == "true" and node.evidence["label:nvidia.com/gpu.deploy.dcgm"].artifact == "gpu_nodes.labels"
    assert len(node.taints) == 2
    assert node.unschedulable is False  # first view wins: the table says schedulable, the describe disagrees
    assert cluster.node_names() == ["cpu-node-01", "gpu-node-01", "gpu-node-02", "gpu-node-03"]
    assert [p.name for p in cluster.pods_on("gpu-node-01")][:1] == ["calico-node-6q7tj"]


def test_unnamed_node_fragment_goes_to_the_only_node(facts_of):
    single = "NAME          STATUS   ROLES    AGE   VERSION\ngpu-worker-7  Ready    <none>   9d    v1.31.2\n"
    cluster, facts = cluster_of(facts_of, {"a_nodes.txt": single, "b_fragment.txt": read("describe_fragment_node_capacity.txt")})
    node = cluster.nodes["gpu-worker-7"]
    assert node.capacity["nvidia.com/gpu"] == "4" and node.allocatable["nvidia.com/gpu"] == "0"
    assert node.evidence["allocatable:nvidia.com/gpu"].artifact == "b_fragment.txt"
    assert not cluster.fragments and not [g for g in facts.gaps if g.what == "node"]


def test_unnamed_node_fragment_with_several_nodes_is_kept_apart(facts_of):
    cluster, facts = cluster_of(facts_of, {"a_nodes.txt": read("get_nodes_wide.txt"), "b_fragment.txt": read("describe_fragment_node_capacity.txt")})
    assert all(n.capacity.get("nvidia.com/gpu") != "4" for n in cluster.nodes.values())
    (frag,) = cluster.fragments
    assert frag.name is None and frag.capacity["nvidia.com/gpu"] == "4"
    (gap,) = [g for g in facts.gaps if g.what == "node"]
    assert "4 nodes" in gap.why and gap.artifact.startswith("b_fragment.txt:")


def test_unnamed_pod_fragment_is_kept_apart(facts_of):
    cluster, facts = cluster_of(facts_of, {"frag.txt": read("describe_fragment_containers.txt"), "pods.txt": read("seed001_gpu_operator_pods.txt")})
    (frag,) = cluster.fragments
    assert frag.containers[0].reason == "CrashLoopBackOff"
    assert all(p.name for p in cluster.pods) and len(cluster.pods) == 9
    assert any(g.what == "pod" and g.artifact == "frag.txt:1" for g in facts.gaps)


def test_owner_from_a_daemonset_seen_elsewhere(facts_of):
    alone, _ = cluster_of(facts_of, {"pods.txt": read("seed001_gpu_operator_pods.txt")})
    assert alone.pod("gpu-feature-discovery-hnr8w").owner is None  # a name alone decides nothing
    cluster, _ = cluster_of(facts_of, {
        "gpu_operand_pods.status": read("must-gather/gpu_operand_pods.status"),
        "gpu_operand_ds.status": read("must-gather/gpu_operand_ds.status"),
    })
    assert cluster.pod("gpu-feature-discovery-hnr8w").owner == "DaemonSet/gpu-feature-discovery"
    assert cluster.pod("nvidia-dcgm-m25d9").owner == "DaemonSet/nvidia-dcgm"
    assert cluster.pod("gpu-operator-7c9d8f6b54-fq2rn").owner is None  # a Deployment's pod


def test_owner_from_the_daemonset_table_of_get_all(facts_of):
    cluster, _ = cluster_of(facts_of, {"all.txt": read("get_all.txt")})
    assert cluster.pod("gpu-feature-discovery-hnr8w").owner == "DaemonSet/gpu-feature-discovery"
    assert cluster.pod("gpu-operator-node-feature-discovery-worker-tnqzd").owner == "DaemonSet/gpu-operator-node-feature-discovery-worker"
    assert cluster.pod("gpu-operator-687f46747c-whzzw").owner is None  # the Deployment's pod


def test_owner_needs_the_same_namespace_or_a_created_pod_event(facts_of):
    ds = "NAMESPACE   NAME                    DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE\nother       gpu-feature-discovery   1         1         1       1            1           <none>          2d\n"
    event = (
        "NAMESPACE      LAST SEEN   TYPE     REASON             OBJECT                            MESSAGE\n"
        "gpu-operator   27m         Normal   SuccessfulCreate   daemonset/nvidia-dcgm-exporter    Created pod: nvidia-dcgm-exporter-zb2zm\n"
    )
    cluster, _ = cluster_of(facts_of, {"a.txt": read("seed003_get_pods_A.txt"), "b.txt": ds, "c.txt": event})
    assert cluster.pod("gpu-feature-discovery-6hbp9").owner is None  # that DaemonSet lives in another namespace
    assert cluster.pod("nvidia-dcgm-exporter-zb2zm").owner == "DaemonSet/nvidia-dcgm-exporter"
    assert cluster.pod("nvidia-cuda-validator-btjl6").owner is None


def test_the_same_event_from_three_artifacts_is_one_event(facts_of):
    cluster, _ = cluster_of(facts_of, {
        "a_describe.txt": read("describe_pods_default.txt"),
        "b_events.txt": read("get_events_A.txt"),
        "c_events.json": read("events_core_v1.json"),
    })
    sandbox = [e for e in cluster.events if e.reason == "FailedCreatePodSandBox"]
    assert len(sandbox) == 1
    ev = sandbox[0]
    assert (ev.count, ev.source, ev.node) == (93, "kubelet", "192-18-132-31")
    assert ev.time.isoformat() == "2025-09-26T19:22:21+00:00"  # only the JSON has the timestamp
    assert ev.evidence.artifact == "a_describe.txt"
    assert [e.reason for e in cluster.events_for("gpu-textgen")].count("Scheduled") == 1


def test_daemonsets_from_a_status_table_and_yaml(facts_of):
    cluster, _ = cluster_of(facts_of, {"gpu_operand_ds.status": read("must-gather/gpu_operand_ds.status"), "gpu_operand_ds.yaml": read("must-gather/gpu_operand_ds.yaml")})
    toolkits = [d for d in cluster.daemonsets if d.name == "nvidia-container-toolkit-daemonset"]
    assert len(toolkits) == 1 and toolkits[0].namespace == "nvidia-gpu-operator" and toolkits[0].age == "2d22h"
    assert len(cluster.daemonsets) == 9


def test_whole_fixture_folder(facts_of):
    facts = facts_of(K)
    cluster = facts.get(Cluster)
    assert not facts.errors
    assert cluster.pod("gpu-textgen").runtime_class == "nvidia"
    assert {"gpu-node-01", "gpu-node-02", "gh200-worker-1"} <= set(cluster.nodes)


def test_nothing_to_combine(facts_of):
    facts = facts_of({"notes.txt": "just some words\n"})
    with pytest.raises(NotApplicable):
        facts.get(Cluster)


def test_a_pod_without_a_node_column_is_placed_by_its_scheduled_event(facts_of):
    """`get pods` without -o wide and a describe cut to its events: the Scheduled event names the node."""
    table = ("$ kubectl get pods -n gpu-operator\n"
             "NAME                            READY   STATUS             RESTARTS   AGE\n"
             "nvidia-driver-daemonset-5xgrq   0/1     ImagePullBackOff   0          12m\n"
             "nvidia-device-plugin-x2c4n      0/1     Init:0/1           0          12m\n")
    describe = ("$ kubectl describe pod nvidia-driver-daemonset-5xgrq -n gpu-operator | tail -4\n"
                "Events:\n"
                "  Type    Reason     Age   From               Message\n"
                "  ----    ------     ----  ----               -------\n"
                "  Normal  Scheduled  12m   default-scheduler  Successfully assigned gpu-operator/nvidia-driver-daemonset-5xgrq to ip-172-31-9-210\n")
    cluster = facts_of({"pods.txt": table, "describe.txt": describe}).get(Cluster)
    assert cluster.pod("nvidia-driver-daemonset-5xgrq").node == "ip-172-31-9-210"
    assert cluster.pod("nvidia-device-plugin-x2c4n").node is None
