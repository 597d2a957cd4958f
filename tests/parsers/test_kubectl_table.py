"""`kubectl get` tables in the variants users paste; seed 001's and seed 003's listings are used verbatim."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, doc_from_text, docs_from_text

from gpusleuth.analysis.engine import sniff
from gpusleuth.model.k8s import DaemonSet, Pod
from gpusleuth.parsers import kubectl_describe, kubectl_table
from gpusleuth.parsers.base import NO

K = FIXTURES / "kubectl"


def read(name: str) -> str:
    return (K / name).read_text(encoding="utf-8")


def parsed(text: str, artifact: str = "paste.txt", kind: str | None = None) -> list:
    """Objects from every document of a paste, through the real sniffing; checks which parser won."""
    out = []
    for doc in docs_from_text(text, artifact):
        score, p = sniff(doc)
        assert p is not None, f"nothing recognised {artifact}:{doc.first_line}"
        if kind:
            assert p.kind == kind
        out.extend(p.parse(doc))
    return out


def pods_of(objs) -> dict[str, Pod]:
    return {o.name: o for o in objs if isinstance(o, Pod)}


def line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


# -- pods --------------------------------------------------------------------------------------------------


def test_seed001_gpu_operator_listing_verbatim():
    text = read("seed001_gpu_operator_pods.txt")
    pods = pods_of(parsed(text, "seed001.txt", "kubectl.get-pods"))
    assert len(pods) == 9
    driver = pods["nvidia-driver-daemonset-418.94.202510230424-0-564xm"]
    assert (driver.ready, driver.status, driver.restarts, driver.last_restart) == ("1/4", "CrashLoopBackOff", 64, "4m7s")
    assert driver.age is None and driver.namespace is None  # that paste has neither AGE nor NAMESPACE
    assert driver.owner == "DaemonSet/nvidia-driver-daemonset-418.94.202510230424-0"
    assert driver.evidence.line == 2 and driver.evidence.text.startswith("nvidia-driver-daemonset-418.94")
    assert pods["nvidia-operator-validator-6fhjb"].status == "Init:0/5"
    assert pods["nvidia-dcgm-exporter-n6jqs"].status == "Init:0/2"
    exporter = pods["nvidia-node-status-exporter-cd78t"]  # RESTARTS written by hand as "1 (errors)"
    assert (exporter.status, exporter.restarts, exporter.last_restart) == ("Running", 1, None)
    assert exporter.evidence.line == line_of(text, "nvidia-node-status-exporter-cd78t")


def test_owner_is_inferred_only_where_the_name_says_daemonset():
    pods = pods_of(parsed(read("seed001_gpu_operator_pods.txt")))
    assert pods["nvidia-container-toolkit-daemonset-sxfkr"].owner == "DaemonSet/nvidia-container-toolkit-daemonset"
    assert pods["nvidia-device-plugin-daemonset-v46gq"].owner == "DaemonSet/nvidia-device-plugin-daemonset"
    # a Job's pods have the same `-xxxxx` suffix: a bare name is no evidence
    assert pods["gpu-feature-discovery-hnr8w"].owner is None
    assert pods["nvidia-dcgm-m25d9"].owner is None
    network = pods_of(parsed(read("seed001_network_operator_pods.txt")))
    assert set(network) == {"mofed-rhcos4.18-554bdbd7cf-ds", "rdma-shared-dp-ds"}
    assert all(p.owner is None for p in network.values())  # no generated suffix left in those names
    seed3 = pods_of(parsed(read("seed003_get_pods_A.txt")))
    assert seed3["gpu-operator-687f46747c-whzzw"].owner is None  # a ReplicaSet's pod-template-hash before the suffix
    assert seed3["coredns-768cd58769-cbsxv"].owner is None


def test_seed003_listing_with_prompt_and_trailing_spaces():
    text = read("seed003_get_pods_A.txt")
    docs = docs_from_text(text, "seed003.txt")
    assert len(docs) == 1 and docs[0].command == "k get pods -A" and docs[0].first_line == 2
    pods = pods_of(parsed(text, "seed003.txt", "kubectl.get-pods"))
    assert len(pods) == 15
    textgen = pods["gpu-textgen"]
    assert (textgen.namespace, textgen.ready, textgen.status, textgen.restarts, textgen.age) == ("default", "0/1", "ContainerCreating", 0, "23m")
    assert textgen.evidence.line == 3
    toolkit = pods["nvidia-container-toolkit-daemonset-bhqw6"]
    assert (toolkit.status, toolkit.restarts, toolkit.last_restart, toolkit.age) == ("Error", 1, "15s", "22s")
    assert pods["cilium-operator-77cb9d9846-snntr"].last_restart == "5h33m"
    assert pods["metrics-server-dfdccbf76-62m8j"].age == "27h"  # hundreds of trailing spaces are not a value
    long_name = "gpu-operator-1758912452-node-feature-discovery-gc-54fc76b7ssrds"  # truncated generateName, no dash
    assert pods[long_name].namespace == "gpu-operator" and pods[long_name].owner is None


def test_wide_output_every_status_and_namespace_from_command():
    text = read("get_pods_wide.txt")
    pods = pods_of(parsed(text, "wide.txt", "kubectl.get-pods"))
    assert {p.namespace for p in pods.values()} == {"gpu-operator"}  # from `-n gpu-operator` in the prompt
    statuses = {p.status for p in pods.values()}
    assert {
        "Init:0/1", "Running", "ContainerCreating", "Init:CrashLoopBackOff", "Init:Error", "Completed", "PodInitializing",
        "ImagePullBackOff", "ContainerStatusUnknown", "UnexpectedAdmissionError", "Terminating", "Init:0/4",
    } <= statuses
    toolkit = pods["nvidia-container-toolkit-daemonset-wq9lf"]
    assert (toolkit.node, toolkit.restarts, toolkit.last_restart) == ("gpu-node-01", 7, "2m11s")
    assert pods["gpu-workload-6b7f9c4d85-p2xkq"].node == "gpu-node-02"  # IP <none> does not shift columns
    assert pods["nvidia-driver-daemonset-w8zkd"].evidence.line == line_of(text, "nvidia-driver-daemonset-w8zkd")


def test_get_all_several_tables_with_kind_prefixes():
    objs = parsed(read("get_all.txt"), "all.txt", "kubectl.get-all")
    pods = pods_of(objs)
    dss = {d.name: d for d in objs if isinstance(d, DaemonSet)}
    assert len(pods) == 10 and len(dss) == 8
    assert len(objs) == 18  # services, deployments and replicasets are stepped over
    assert "gpu-feature-discovery-hnr8w" in pods and "nvidia-mig-manager" in dss
    assert dss["nvidia-mig-manager"].desired == 0
    assert dss["gpu-operator-node-feature-discovery-worker"].node_selector is None
    # the name alone says nothing here; the DaemonSet table beside it does, in the Cluster view
    assert pods["gpu-feature-discovery-hnr8w"].owner is None
    assert pods["nvidia-driver-daemonset-bk6w4"].owner == "DaemonSet/nvidia-driver-daemonset"
    assert pods["nvidia-dcgm-exporter-n6jqs"].last_restart == "3d4h"


def test_headerless_rows_from_a_grep_take_their_columns_from_the_command():
    text = (
        "[root@bastion ~]# oc get pods -A -o wide | grep nvidia-driver\n"
        "nvidia-gpu-operator   nvidia-driver-daemonset-418.94.202510230424-0-564xm   1/4     CrashLoopBackOff   64 (4m7s ago)   3h28m   10.131.0.34   gh200-worker-1   <none>   <none>\n"
        "nvidia-gpu-operator   nvidia-driver-daemonset-418.94.202510230424-0-x7k2p   0/4     Init:0/1           0               3h28m   10.131.2.19   gh200-worker-2   <none>   <none>\n"
    )
    pods = pods_of(parsed(text, "paste.md", "kubectl.get-pods"))
    driver = pods["nvidia-driver-daemonset-418.94.202510230424-0-564xm"]
    assert (driver.namespace, driver.status, driver.restarts, driver.last_restart, driver.node) == (
        "nvidia-gpu-operator", "CrashLoopBackOff", 64, "4m7s", "gh200-worker-1")
    assert pods["nvidia-driver-daemonset-418.94.202510230424-0-x7k2p"].status == "Init:0/1"
    # `| grep` output of something else under the same command is not claimed
    other = doc_from_text("$ kubectl get pods -A | grep -c nvidia\n9\n")
    assert kubectl_table.get_pods.sniff(other) == NO


def test_markdown_quoted_paste_with_fences_and_blank_lines():
    body = read("seed001_gpu_operator_pods.txt")
    quoted = "\n\n> ```\n" + "".join(f"> {ln}\n" for ln in body.splitlines()) + "> ```\n"
    pods = pods_of(parsed(quoted, "issue.md", "kubectl.get-pods"))
    assert pods["nvidia-driver-daemonset-418.94.202510230424-0-564xm"].restarts == 64
    assert pods["nvidia-driver-daemonset-418.94.202510230424-0-564xm"].evidence.line == 5  # the line in the .md


def test_watch_output_keeps_the_latest_row_of_a_pod():
    text = (
        "NAME                            READY   STATUS            RESTARTS   AGE\n"
        "nvidia-driver-daemonset-6z9lz   0/1     Init:0/1          0          0s\n"
        "nvidia-driver-daemonset-6z9lz   0/1     PodInitializing   0          29s\n"
        "nvidia-driver-daemonset-6z9lz   0/1     Running           0          30s\n"
        "nvidia-driver-daemonset-6z9lz   0/1     Terminating       0          2m43s\n"
    )
    pods = [o for o in parsed(text) if isinstance(o, Pod)]
    assert len(pods) == 1 and pods[0].status == "Terminating" and pods[0].evidence.line == 5


def test_rows_out_of_alignment_fall_back_to_their_contents():
    text = (
        "NAME                                   READY   STATUS                  RESTARTS        AGE\n"
        "nvidia-dcgm-m25d9 0/1 Init:0/1 0 3h28m\n"
        "nvidia-container-toolkit-daemonset-wq9lf 0/1 Init:CrashLoopBackOff 7 (2m11s ago) 14m\n"
    )
    pods = pods_of(parsed(text))
    assert (pods["nvidia-dcgm-m25d9"].status, pods["nvidia-dcgm-m25d9"].age) == ("Init:0/1", "3h28m")
    tk = pods["nvidia-container-toolkit-daemonset-wq9lf"]
    assert (tk.status, tk.restarts, tk.last_restart, tk.age) == ("Init:CrashLoopBackOff", 7, "2m11s", "14m")


def test_junk_rows_end_a_table_without_error():
    text = (
        "NAME                READY   STATUS    RESTARTS   AGE\n"
        "gpu-pod-abcde       1/1     Running   0          5m\n"
        "error: You must be logged in to the server (Unauthorized)\n"
        "gpu-pod-fghij       1/1     Running   0          5m\n"
    )
    assert set(pods_of(parsed(text))) == {"gpu-pod-abcde"}


# -- daemonsets, nodes --------------------------------------------------------------------------------------


def test_daemonsets_all_namespaces():
    objs = parsed(read("get_ds_A.txt"), "ds.txt", "kubectl.get-daemonsets")
    dss = {(d.namespace, d.name): d for d in objs}
    d = dss[("gpu-operator", "nvidia-driver-daemonset")]
    assert (d.desired, d.current, d.ready, d.up_to_date, d.available, d.age) == (2, 2, 0, 2, 0, "14m")
    assert d.node_selector == "nvidia.com/gpu.deploy.driver=true"
    assert dss[("kube-system", "kube-proxy")].ready == 3
    assert d.evidence.line == 6


def test_daemonsets_kubernetes_1_6_header():
    text = (
        "NAME                             DESIRED   CURRENT   READY     NODE-SELECTOR   AGE\n"
        "nvidia-device-plugin-daemonset   3         3         2         <none>          2d\n"
    )
    (ds,) = parsed(text, "ds.txt", "kubectl.get-daemonsets")
    assert (ds.name, ds.desired, ds.ready, ds.up_to_date, ds.node_selector) == ("nvidia-device-plugin-daemonset", 3, 2, None, None)


def test_nodes_wide_status_runtime_and_spaces_in_os_image():
    text = read("get_nodes_wide.txt")
    nodes = {n.name: n for n in parsed(text, "nodes.txt", "kubectl.get-nodes")}
    assert nodes["gpu-node-02"].unschedulable is True and nodes["gpu-node-01"].unschedulable is False
    assert nodes["gpu-node-03"].conditions[0].type == "Ready" and nodes["gpu-node-03"].conditions[0].status == "False"
    n3 = nodes["gpu-node-03"]
    assert n3.os_image == "Red Hat Enterprise Linux CoreOS 418.94.202510230424-0"
    assert n3.kernel_version == "5.14.0-427.96.1.el9_4.aarch64+64k"
    assert n3.container_runtime == "cri-o://1.31.12-2.rhaos4.18.git1f6a3cf.el9"
    assert n3.kubelet_version == "v1.30.4"
    assert n3.evidence["kernel_version"].line == line_of(text, "gpu-node-03")
    assert nodes["gpu-node-01"].container_runtime == "containerd://1.7.21"


def test_nodes_show_labels_one_comma_joined_string():
    nodes = {n.name: n for n in parsed(read("get_nodes_show_labels.txt"))}
    gpu = nodes["gpu-node-01"]
    assert gpu.labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert gpu.labels["nvidia.com/gpu.count"] == "8"
    assert nodes["cpu-node-01"].labels["node-role.kubernetes.io/control-plane"] == ""
    assert gpu.evidence["label:nvidia.com/gpu.present"].line == 3


def test_must_gather_status_files_and_node_labels():
    pods = pods_of(parsed(read("must-gather/gpu_operand_pods.status"), "must-gather/gpu_operand_pods.status"))
    driver = pods["nvidia-driver-daemonset-418.94.202510230424-0-564xm"]
    assert (driver.node, driver.status, driver.restarts, driver.namespace) == ("gh200-worker-1", "CrashLoopBackOff", 64, None)
    text = read("must-gather/gpu_nodes.labels")
    (node,) = parsed(text, "must-gather/gpu_nodes.labels", "must-gather.node-labels")
    assert node.name == "gh200-worker-1" and len(node.labels) == 19
    assert node.labels["feature.node.kubernetes.io/pci-15b3.present"] == "true"
    assert node.labels["node-role.kubernetes.io/worker"] == ""
    assert node.evidence["label:nvidia.com/gpu.present"].line == line_of(text, "nvidia.com/gpu.present")
    assert node.evidence["name"].line == 1


def test_node_labels_with_two_nodes_and_a_timeout_line():
    text = (
        "gpu-a\n- kubernetes.io/hostname=gpu-a\n- nvidia.com/gpu.present=true\n\n"
        "gpu-b\nTimeout getting labels for node/gpu-b\n\n"
    )
    nodes = {n.name: n for n in parsed(text, "gpu_nodes.labels", "must-gather.node-labels")}
    assert set(nodes) == {"gpu-a", "gpu-b"} and nodes["gpu-b"].labels == {}


# -- events -------------------------------------------------------------------------------------------------


def test_events_all_namespaces():
    text = read("get_events_A.txt")
    events = parsed(text, "events.txt", "kubectl.get-events")
    sandbox = next(e for e in events if e.reason == "FailedCreatePodSandBox")
    assert (sandbox.namespace, sandbox.object, sandbox.type, sandbox.age) == ("default", "pod/gpu-textgen", "Warning", "3m2s")
    assert sandbox.message.endswith('no runtime for "nvidia" is configured')
    assert sandbox.evidence.line == 3
    lease = next(e for e in events if e.reason == "LeaderElection")
    assert lease.age == "<unknown>" and lease.object == "lease/53822513.nvidia.com"


def test_kubectl_events_intervals_and_object_case():
    events = parsed(read("kubectl_events.txt"), "ev.txt", "kubectl.get-events")
    backoff = next(e for e in events if e.reason == "BackOff")
    assert (backoff.count, backoff.last_seen, backoff.first_seen) == (7, "2m11s", "14m")
    assert backoff.object == "pod/nvidia-container-toolkit-daemonset-wq9lf"
    assert all(e.namespace == "gpu-operator" for e in events)


def test_events_wide_source_gives_the_node():
    events = parsed(read("get_events_wide.txt"), "ev.txt", "kubectl.get-events")
    backoff = events[0]
    assert (backoff.source, backoff.node, backoff.count, backoff.first_seen) == ("kubelet, gpu-node-02", "gpu-node-02", 48, "3h")
    assert backoff.message.startswith("Back-off restarting failed container nvidia-driver-ctr")
    assert events[1].source == "default-scheduler" and events[1].node is None


def test_events_1x_layout_with_name_and_kind_columns():
    events = parsed(read("get_events_1x.txt"), "ev.txt", "kubectl.get-events")
    assert [e.reason for e in events] == ["Scheduled", "Pulled", "FailedScheduling"]
    assert all(e.object == "pod/cuda-vector-add" for e in events)
    assert events[1].node == "gpu-node-01"
    assert (events[2].count, events[2].first_seen, events[2].last_seen) == (5, "1m", "10s")
    assert events[2].message == "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."


def test_event_message_that_went_on_to_the_next_line():
    text = (
        "LAST SEEN   TYPE      REASON   OBJECT                MESSAGE\n"
        "71s         Warning   Failed   pod/cuda-vectoradd    Error: failed to create containerd task: error running hook #0: stderr: Auto-detected mode as 'legacy'\n"
        "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown\n"
        "9s          Warning   BackOff  pod/cuda-vectoradd    Back-off restarting failed container cuda-vectoradd\n"
    )
    events = parsed(text)
    assert [e.reason for e in events] == ["Failed", "BackOff"]
    assert events[0].message.endswith("legacy'\nnvidia-container-cli: initialization error: nvml error: driver not loaded: unknown")


# -- sniffing -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["describe_node_gpu-node-01.txt", "describe_pods_default.txt", "must-gather/gpu_operand_pod_nvidia-driver-daemonset-418.94.202510230424-0-564xm.descr"],
)
def test_a_describe_is_not_taken_for_a_table(name):
    for doc in docs_from_text(read(name), name):
        for p in (kubectl_table.get_pods, kubectl_table.get_nodes, kubectl_table.get_events, kubectl_table.get_all, kubectl_table.node_labels):
            assert p.sniff(doc) == NO


def test_logs_are_not_taken_for_a_table():
    log = (
        "I1121 11:51:06.123456       1 main.go:154] Starting OS watcher.\n"
        "NAME: nvidia-driver-daemonset STATUS: waiting\n"
        "time=\"2025-11-21T11:51:41Z\" level=info msg=\"Waiting for MOFED to be installed\"\n"
        "+ modprobe -a nvidia-peermem\n"
    )
    doc = doc_from_text(log, "driver.log")
    assert all(p.sniff(doc) == NO for p in (kubectl_table.get_pods, kubectl_table.get_events, kubectl_table.get_all, kubectl_table.node_labels))
    assert kubectl_describe.describe.sniff(doc) == NO


def test_a_table_is_not_taken_for_a_describe():
    for name in ("get_pods_wide.txt", "get_all.txt", "get_events_A.txt", "must-gather/gpu_nodes.labels"):
        for doc in docs_from_text(read(name), name):
            assert kubectl_describe.describe.sniff(doc) == NO


def test_binary_ish_text_is_left_alone():
    junk = "\x7fELF\x02\x01\x01\ufffd\ufffd\n" + "\ufffd\x03\x00>\x00\x01" * 40 + "\nNAME READY\n"
    doc = doc_from_text(junk, "core.bin")
    score, p = sniff(doc)
    assert p is None or score < 20
    assert kubectl_table.parse_lines(doc) == []


def test_header_columns_keep_two_word_names():
    cols = kubectl_table.header_columns("NAME   READY   STATUS   RESTARTS   AGE   IP   NODE   NOMINATED NODE   READINESS GATES")
    assert [c.name for c in cols][-3:] == ["NODE", "NOMINATED NODE", "READINESS GATES"]
    assert kubectl_table.header_columns("Name:   gpu-node-01") is None
    assert kubectl_table.header_columns("  Type    Reason   Age   From   Message") is None


def test_fixture_folder_is_real_files():
    assert Path(K / "seed003_get_pods_A.txt").read_bytes().count(b" " * 200) >= 10  # the paste kept its padding


def test_get_tables_of_kinds_without_a_model_become_objects_with_their_meaningful_columns():
    from conftest import docs_from_text

    from gpusleuth.model.k8s import K8sObject
    from gpusleuth.parsers.kubectl_table import get_objects

    text = (
        "$ kubectl get clusterpolicies.nvidia.com\nNAME             STATUS     AGE\ncluster-policy   notReady   3h28m\n"
        "$ kubectl get runtimeclass\nNAME     HANDLER   AGE\nnvidia   nvidia    27h\n"
        "$ kubectl get resourceclaims -n ml\nNAME          STATE     AGE\ntrain-gpus    pending   12m\n"
    )
    docs = docs_from_text(text, "objs.txt")
    assert all(get_objects.sniff(d) > 0 for d in docs)
    cp, rc, claim = (next(iter(get_objects.parse(d))) for d in docs)
    assert isinstance(cp, K8sObject) and cp.kind == "ClusterPolicy" and cp.get("status.state") == "notReady"
    assert cp.evidence("status.state").cite() == "objs.txt:3"
    assert rc.kind == "RuntimeClass" and rc.get("handler") == "nvidia"
    assert claim.kind == "ResourceClaim" and claim.namespace == "ml" and claim.get("status.state") == "pending"


def test_get_tables_of_unknown_resources_are_not_claimed():
    from conftest import docs_from_text

    from gpusleuth.parsers.kubectl_table import get_objects

    (doc,) = docs_from_text("$ kubectl get widgets\nNAME   COLOR   AGE\nw1     red     1d\n", "w.txt")
    assert get_objects.sniff(doc) == 0
