"""`serve`: a read-only Kubernetes API good enough for kubectl and lightkube, built from any source."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest

from gpusleuth.live.resources import BY_KIND
from gpusleuth.model.k8s import Pod
from gpusleuth.serve.store import Store
from gpusleuth.serve.synth import pod_json
from gpusleuth.sources import open_source
from tests.conftest import docs_from_text
from tests.live.helpers import serving


def _get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            body = resp.read().decode()
            return resp.status, json.loads(body) if resp.headers.get("Content-Type", "").startswith("application/json") else body
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_discovery_lists_and_selectors(small_cluster):
    with serving(small_cluster) as srv:
        assert _get(srv.url + "/version")[1]["gitVersion"]
        assert _get(srv.url + "/api")[1]["versions"] == ["v1"]
        groups = {g["name"] for g in _get(srv.url + "/apis")[1]["groups"]}
        assert {"apps", "nvidia.com", "node.k8s.io", "mellanox.com"} <= groups
        core = {r["name"]: r for r in _get(srv.url + "/api/v1")[1]["resources"]}
        assert core["pods"]["namespaced"] and not core["nodes"]["namespaced"] and "pods/log" in core
        code, doc = _get(srv.url + "/api/v1/namespaces/gpu-operator/pods?labelSelector=app%3Dnvidia-driver-daemonset&fieldSelector=spec.nodeName%3Dgpu-node-0003")
        assert code == 200 and doc["kind"] == "PodList" and [i["spec"]["nodeName"] for i in doc["items"]] == ["gpu-node-0003"]
        assert "kind" not in doc["items"][0]  # as a real server: no apiVersion/kind on list items
        doc = _get(srv.url + "/api/v1/pods?labelSelector=app%20in%20(gpu-operator,train),!role")[1]
        assert {i["metadata"]["labels"]["app"] for i in doc["items"]} == {"gpu-operator", "train"}
        doc = _get(srv.url + "/api/v1/namespaces")[1]
        assert {n["metadata"]["name"] for n in doc["items"]} == {"gpu-operator", "kube-system", "ml-team"}
        assert _get(srv.url + "/apis/nvidia.com/v1/clusterpolicies/cluster-policy")[1]["spec"]["cdi"] == {"enabled": True}
        code, doc = _get(srv.url + "/api/v1/namespaces/gpu-operator/pods/nope")
        assert code == 404 and doc["reason"] == "NotFound" and doc["kind"] == "Status"
        table = _get(srv.url + "/api/v1/namespaces/gpu-operator/pods?limit=2", {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})[1]
        assert table["kind"] == "Table" and [c["name"] for c in table["columnDefinitions"]][:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
        assert len(table["rows"]) == 2 and table["metadata"]["continue"] and table["rows"][0]["cells"][2] == "Running"


def test_pod_logs_as_the_kubelet_answers(small_cluster):
    pod = next(p for p in small_cluster.items(BY_KIND["Pod"])
               if p["metadata"]["name"].startswith("nvidia-driver-daemonset") and p["status"]["containerStatuses"][0]["restartCount"])
    base = f"/api/v1/namespaces/gpu-operator/pods/{pod['metadata']['name']}/log"
    with serving(small_cluster) as srv:
        code, text = _get(srv.url + base + "?container=nvidia-driver-ctr&tailLines=2&timestamps=true")
        assert code == 200 and len(text.splitlines()) == 2 and text.startswith("2025-06-01T11:00:06.000000000Z I0601")
        code, text = _get(srv.url + base + "?container=nvidia-driver-ctr&previous=true&limitBytes=10")
        assert code == 200 and len(text) == 10
        code, text = _get(srv.url + base)  # one app container: it is the default, init containers or not
        assert code == 200 and "nvidia-driver-ctr step 7 ok" in text
        code, doc = _get(srv.url + base + "?container=nope")
        assert code == 400 and doc["message"] == f"container nope is not valid for pod {pod['metadata']['name']}"
        code, doc = _get(srv.url + base + "?container=k8s-driver-manager&previous=true")
        assert code == 400 and doc["message"] == f'previous terminated container "k8s-driver-manager" in pod "{pod["metadata"]["name"]}" not found'


def test_read_only_unless_probes_are_emulated(small_cluster):
    body = json.dumps({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}).encode()
    with serving(small_cluster) as srv:
        for method, path in (("POST", "/api/v1/namespaces/gpusleuth/pods"), ("DELETE", "/api/v1/namespaces/gpu-operator/pods/x"), ("PUT", "/api/v1/nodes/gpu-node-0000")):
            req = urllib.request.Request(srv.url + path, data=body if method != "DELETE" else None, method=method, headers={"Content-Type": "application/json"})
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(req, timeout=5)
            assert err.value.code == 405
    with serving(small_cluster, probe_namespace="gpusleuth") as srv:
        req = urllib.request.Request(srv.url + "/api/v1/namespaces/gpu-operator/pods", data=body, method="POST", headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=5)
        assert err.value.code == 405  # only the probe namespace takes pods


def test_the_real_lightkube_client_lists_and_reads_logs(small_cluster):
    from lightkube import Client
    from lightkube.config.kubeconfig import KubeConfig
    from lightkube.config.models import Cluster, User
    from lightkube.resources.apps_v1 import DaemonSet
    from lightkube.resources.core_v1 import Node, Pod as LkPod

    with serving(small_cluster) as srv:
        client = Client(KubeConfig.from_one(cluster=Cluster(server=srv.url), user=User()), trust_env=False)
        pods = list(client.list(LkPod, namespace="*", chunk_size=7))
        assert len(pods) == len(small_cluster.objects["pods"]) and all(p.metadata.name for p in pods)
        assert {n.metadata.name for n in client.list(Node)} >= {"gpu-node-0000", "cpu-node-0000"}
        ds = client.get(DaemonSet, "nvidia-driver-daemonset", namespace="gpu-operator")
        assert ds.status.desiredNumberScheduled == 12
        driver = next(p for p in pods if p.metadata.name.startswith("nvidia-driver-daemonset"))
        lines = list(client.log(driver.metadata.name, namespace="gpu-operator", container="nvidia-driver-ctr", tail_lines=3))
        assert len(lines) == 3 and "nvidia-driver-ctr step" in lines[-1]
        client.close()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_get_describe_and_logs_work(small_cluster):
    with serving(small_cluster) as srv:
        def kubectl(*args):
            out = subprocess.run(["kubectl", "--server", srv.url, *args], capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, out.stderr
            return out.stdout

        rows = kubectl("get", "pods", "-A").splitlines()
        assert rows[0].split() == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        assert len(rows) == 1 + len(small_cluster.objects["pods"]) and any(" ml-team " in f" {r} " for r in rows)
        assert "nvidia.com/gpu:  8" in kubectl("describe", "pod", "-n", "ml-team", "train-0000")
        assert kubectl("get", "ds", "-n", "gpu-operator", "nvidia-driver-daemonset", "-o", "jsonpath={.status.numberReady}") == "12"
        assert "nvidia-driver-ctr step 7 ok" in kubectl("logs", "-n", "gpu-operator", "-l", "app=nvidia-driver-daemonset", "-c", "nvidia-driver-ctr", "--tail=1")


@pytest.mark.parametrize("status,ready,restarts", [
    ("Running", "1/1", 0), ("Running", "3/4", 2), ("Init:0/5", "0/1", 0), ("Init:2/5", "0/1", 0), ("Init:CrashLoopBackOff", "0/1", 9),
    ("Init:Error", "0/1", 1), ("Init:ExitCode:3", "0/1", 0), ("PodInitializing", "0/1", 0), ("ContainerCreating", "0/1", 0),
    ("CrashLoopBackOff", "0/1", 64), ("Completed", "0/1", 0), ("Error", "0/1", 0), ("Pending", "0/1", None), ("Terminating", "1/1", 0),
    ("UnexpectedAdmissionError", "0/1", None), ("ImagePullBackOff", "0/2", 0), ("OOMKilled", "0/1", 3),
])
def test_a_table_row_is_served_so_that_kubectl_prints_it_again(status, ready, restarts):
    from datetime import datetime, timezone

    from gpusleuth.parsers.k8s_objects import parse_json

    row = Pod("nvidia-driver-daemonset-6hbp9", "gpu-operator", node="n1", status=status, ready=ready, restarts=restarts, age="27m")
    obj = pod_json(row, datetime(2025, 1, 1, tzinfo=timezone.utc))
    back = next(iter(parse_json.parse(docs_from_text(json.dumps(obj, indent=4), "pod.json")[0])))
    assert (back.status, back.ready, back.restarts or None) == (status, ready, restarts or None)


def test_a_folder_of_pasted_kubectl_output_is_served(tmp_path):
    (tmp_path / "pods.txt").write_text(
        "root@192-18-132-31:~# k get pods -A\n"
        "NAMESPACE      NAME                                       READY   STATUS                  RESTARTS      AGE\n"
        "default        gpu-textgen                                0/1     ContainerCreating       0             23m\n"
        "gpu-operator   nvidia-container-toolkit-daemonset-bhqw6   0/1     Init:CrashLoopBackOff   1 (15s ago)   22s\n"
        "root@192-18-132-31:~# cat /etc/containerd/config.toml\n"
        'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "nvidia"\n'
    )
    store = Store.from_source(open_source(str(tmp_path)))
    with serving(store) as srv:
        pods = _get(srv.url + "/api/v1/pods", {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})[1]
    assert [(r["object"]["metadata"]["namespace"], r["cells"][0], r["cells"][2]) for r in pods["rows"]] == [
        ("default", "gpu-textgen", "ContainerCreating"), ("gpu-operator", "nvidia-container-toolkit-daemonset-bhqw6", "Init:CrashLoopBackOff")]
    [section] = next(iter(store.node_files.values()))
    assert section.kind == "file" and section.ref == "/etc/containerd/config.toml" and section.lines[2] == '  default_runtime_name = "nvidia"'


def test_writes_get_a_kubernetes_status_405_on_any_path(small_cluster):
    with serving(small_cluster) as srv:
        for method, path in (("POST", "/api/v1/namespaces"), ("PATCH", "/api/v1/nodes/gpu-node-0000"),
                             ("DELETE", "/apis/apps/v1/namespaces/gpu-operator/daemonsets/nvidia-driver-daemonset"),
                             ("POST", "/apis/example.com/v1/namespaces/x/widgets"), ("PUT", "/no/such/path")):
            req = urllib.request.Request(srv.url + path, data=b"{}" if method != "DELETE" else None, method=method,
                                         headers={"Content-Type": "application/json"})
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(req, timeout=5)
            doc = json.loads(err.value.read())
            assert err.value.code == 405 and err.value.headers["Allow"] == "GET", (method, path)
            assert doc == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "MethodNotAllowed",
                           "code": 405, "message": "gpusleuth serve is read-only: it serves a snapshot"}


def test_a_write_body_is_read_so_the_next_request_on_the_connection_is_answered(small_cluster):
    """kubectl's DELETE carries DeleteOptions: left unread, those bytes were parsed as a second request."""
    import http.client

    body = b'{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}'
    with serving(small_cluster) as srv:
        conn = http.client.HTTPConnection(srv.url.split("//")[1], timeout=5)
        conn.request("DELETE", "/api/v1/namespaces/ml-team/pods/train-0000", body=body, headers={"Content-Type": "application/json"})
        first = conn.getresponse()
        assert first.status == 405 and json.loads(first.read())["reason"] == "MethodNotAllowed"
        conn.request("GET", "/api/v1/nodes/gpu-node-0000")
        second = conn.getresponse()
        assert second.status == 200 and json.loads(second.read())["metadata"]["name"] == "gpu-node-0000"
        conn.close()


def test_a_write_body_too_big_to_read_ends_the_connection(small_cluster):
    import http.client

    from gpusleuth.serve.server import MAX_BODY

    with serving(small_cluster) as srv:
        conn = http.client.HTTPConnection(srv.url.split("//")[1], timeout=5)
        conn.request("POST", "/api/v1/namespaces", body=b"x" * (MAX_BODY + 10))
        resp = conn.getresponse()
        assert resp.status == 405 and resp.getheader("Connection") == "close"
        resp.read()
        conn.close()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_writes_print_one_clean_error(small_cluster, tmp_path):
    manifest = tmp_path / "ns.yaml"
    manifest.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: scratch\n")
    with serving(small_cluster) as srv:
        for args in (["delete", "pod", "-n", "ml-team", "train-0000"], ["label", "node", "gpu-node-0000", "x=y"],
                     ["create", "namespace", "scratch"], ["apply", "--validate=false", "-f", str(manifest)]):  # serve has no OpenAPI to validate against
            proc = subprocess.run(["kubectl", "--server", srv.url, *args], capture_output=True, text=True, timeout=60)
            assert proc.returncode != 0, args
            lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
            assert lines and "gpusleuth serve is read-only" in lines[-1] and "MethodNotAllowed" in proc.stderr, (args, proc.stderr)


def test_a_big_log_is_served_whole_not_as_the_lines_a_diagnosis_keeps(tmp_path):
    from gpusleuth.parsers.logs import KEEP_ALL_LINES

    n = KEEP_ALL_LINES + 500
    pre = "[pod/nvidia-device-plugin-daemonset-abcde/nvidia-device-plugin] "
    body = "".join(f"{pre}2025-01-01T00:00:{i % 60:02d}Z tick {i}\n" for i in range(n))
    (tmp_path / "logs.txt").write_text(body.replace("tick 7000\n", f"tick 7000\n{pre}2025-01-01T00:00:00Z error: could not load NVML library\n"))
    store = Store.from_source(open_source(str(tmp_path)))
    [served] = store.logs.values()
    assert len(served) == n + 1 and served[7001].text.endswith("could not load NVML library")
