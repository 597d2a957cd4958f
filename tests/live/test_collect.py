"""What a collection contains, and what it says when parts of the cluster cannot be read."""

from __future__ import annotations

import json

from gpusleuth.live.collect import Options
from gpusleuth.live.helm import decode_release
from gpusleuth.serve.faults import Fault
from tests.live.helpers import run_collect, serving


def _doc(collection, name):
    a = next(a for a in collection.artifacts if a.name == name)
    return json.loads(a.data)


def api_gaps(col):
    """The gaps of the API reads (without the standing 'node files' gap of a run without --node-probes)."""
    return [g for g in col.gaps if g.what != "node files"]


def test_collects_the_gpu_part_of_the_cluster_and_nothing_else(small_cluster):
    with serving(small_cluster) as srv:
        col = run_collect(srv.url)
    names = {a.name for a in col.artifacts}
    assert [g["what"] for g in col.manifest["gaps"]] == ["node files"]  # only what needs --node-probes, and said so
    assert {"namespaces/gpu-operator/pods.json", "namespaces/ml-team/pods.json", "cluster/nodes.json",
            "cluster/clusterpolicies.nvidia.com.json", "namespaces/gpu-operator/daemonsets.apps.json"} <= names
    assert not any(n.startswith("namespaces/kube-system/") for n in names)  # kube-proxy: no GPU, not an operand
    nodes = {i["metadata"]["name"] for i in _doc(col, "cluster/nodes.json")["items"]}
    assert nodes == {f"gpu-node-{i:04d}" for i in range(12)} | {"cpu-node-0000"}  # + the node running the operator
    node = _doc(col, "cluster/nodes.json")["items"][0]
    assert node["kind"] == "Node" and node["apiVersion"] == "v1" and "images" not in node["status"]
    assert list(col.manifest["operator_namespaces"]) == ["gpu-operator"]
    cms = {i["metadata"]["name"] for i in _doc(col, "namespaces/gpu-operator/configmaps.json")["items"]}
    assert cms == {"default-mig-parted-config"}


def test_logs_current_for_every_started_container_previous_only_after_restarts(small_cluster):
    with serving(small_cluster) as srv:
        col = run_collect(srv.url)
    logs = [a for a in col.artifacts if "/logs/" in a.name]
    previous = sorted(a.name for a in logs if a.name.endswith(".previous.log"))
    assert len(previous) == 3 and all("nvidia-driver-daemonset" in n and n.endswith("/nvidia-driver-ctr.previous.log") for n in previous)
    rec = next(a.record for a in logs if a.name.endswith(".previous.log"))
    assert rec["previous"] is True and rec["container"] == "nvidia-driver-ctr" and rec["command"].endswith("--previous")
    assert "previous=true" in rec["api"] and "timestamps=true" in rec["api"] and "tailLines=2000" in rec["api"]
    assert any(a.name.endswith("/k8s-driver-manager.log") and a.record["init"] for a in logs)
    assert not any("ml-team" in a.name for a in logs)  # workloads' logs are not collected
    line = next(a for a in logs if a.name.endswith("/nvidia-driver-ctr.log")).data.decode().splitlines()[0]
    assert line.startswith("2025-06-01T11:00:00.000000000Z I0601 ")  # kubectl logs --timestamps


def test_tail_limit_is_recorded_as_truncation(small_cluster):
    with serving(small_cluster) as srv:
        col = run_collect(srv.url, Options(tail_lines=5))
    rec = next(a.record for a in col.artifacts if a.name.endswith("/nvidia-driver-ctr.log"))
    assert rec["lines"] == 5 and rec["truncated"] is True and "5 lines" in rec["truncation"]


def test_helm_release_keeps_only_metadata_and_values_of_the_latest_revision(small_cluster):
    with serving(small_cluster) as srv:
        col = run_collect(srv.url)
    helm = [a for a in col.artifacts if "/helm/" in a.name]
    assert [a.name for a in helm] == ["namespaces/gpu-operator/helm/gpu-operator-1758912452.v3.json"]
    secret = json.loads(helm[0].data)["items"][0]
    assert secret["type"] == "helm.sh/release.v1" and secret["metadata"]["labels"]["version"] == "3"
    release = decode_release(secret["data"]["release"])
    assert set(release) == {"name", "namespace", "version", "info", "chart", "config"}
    assert set(release["chart"]) == {"metadata", "values"} and release["chart"]["metadata"]["version"] == "v25.3.4"
    assert release["config"]["ngcApiKey"] == "<redacted>" and release["config"]["toolkit"] == {"env": []}


def test_forbidden_secrets_and_failing_logs_are_gaps_and_the_rest_is_collected(small_cluster):
    faults = [
        Fault(path="^/api/v1/namespaces/[^/]+/secrets$", status=403,
              message='secrets is forbidden: User "system:serviceaccount:default:viewer" cannot list resource "secrets" in API group "" in the namespace "gpu-operator"'),
        Fault(path="/log$", query="previous=true", status=500, message="Get \"https://10.0.0.4:10250/containerLogs\": dial tcp: i/o timeout"),
    ]
    with serving(small_cluster, faults) as srv:
        col = run_collect(srv.url)
    gaps = sorted(str(g) for g in api_gaps(col))
    assert len(gaps) == 4  # the Helm secrets list, and the 3 previous logs
    assert gaps[0].startswith("Helm release secrets in gpu-operator (GET /api/v1/namespaces/gpu-operator/secrets?labelSelector=owner%3Dhelm): forbidden (HTTP 403)")
    assert gaps[0].endswith('forbidden (HTTP 403): secrets is forbidden: User "system:serviceaccount:default:viewer" cannot list resource '
                           '"secrets" in API group "" in the namespace "gpu-operator"')
    for g in gaps[1:]:
        assert g.startswith("logs of gpu-operator/nvidia-driver-daemonset-") and "container nvidia-driver-ctr (previous): HTTP 500 InternalError: Get" in g
        assert "dial tcp: i/o timeout" in g and "after 4 attempts" in g
    names = {a.name for a in col.artifacts}
    assert "namespaces/gpu-operator/pods.json" in names and not any("/helm/" in n or n.endswith(".previous.log") for n in names)
    assert sum(1 for n in names if n.endswith("/nvidia-driver-ctr.log")) == 12


def test_a_timed_out_resource_is_a_gap(small_cluster):
    with serving(small_cluster, [Fault(path="/daemonsets$", delay=0.6)]) as srv:
        col = run_collect(srv.url, timeout=0.2)
    assert [str(g) for g in api_gaps(col)] == [
        "daemonsets.apps in namespace gpu-operator (GET /apis/apps/v1/namespaces/gpu-operator/daemonsets): timed out (after 4 attempts)"]


def test_given_namespace_is_used_instead_of_discovery(small_cluster):
    with serving(small_cluster) as srv:
        col = run_collect(srv.url, Options(namespaces=("ml-team",), logs=False))
    assert col.manifest["operator_namespaces"] == {"ml-team": "given with --namespace"}
    assert not any("/logs/" in a.name for a in col.artifacts)
