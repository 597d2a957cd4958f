"""NVIDIA's GPU Operator must-gather, run with a real kubectl against `serve`, then diagnosed.

Served objects carry the labels, node and owner real operand objects carry even where the source only had
a table row or a describe (serve/infer.py), so the script gets past `kubectl get pods -lapp=gpu-operator -A`,
saves every operand pod's logs and describe, and its folder diagnoses like the source it was served from.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.request

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.live.resources import BY_KIND
from gpusleuth.serve import infer
from gpusleuth.serve.store import Store
from gpusleuth.sources import example_names, open_source
from tests.conftest import docs_from_text
from tests.live.helpers import serving
from tests.live.must_gather import must_gather

KUBECTL = shutil.which("kubectl")


def _roots(report) -> set[tuple]:
    return {(f.code, f.node, f.component) for f in report.root_causes}


def _kubectl(url: str, home) -> list[str]:
    cfg = home / "kubeconfig"
    cfg.write_text(f"apiVersion: v1\nkind: Config\nclusters: [{{name: s, cluster: {{server: '{url}'}}}}]\n"
                   "contexts: [{name: s, context: {cluster: s, user: u}}]\nusers: [{name: u, user: {}}]\ncurrent-context: s\n")
    return [KUBECTL, f"--kubeconfig={cfg}", f"--cache-dir={home / 'cache'}"]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
@pytest.mark.parametrize("name", example_names())
def test_must_gather_through_serve_diagnoses_like_the_example(name, tmp_path):
    spec = f"example:{name}"
    store = Store.from_source(open_source(spec))
    with serving(store) as srv:
        run = must_gather(_kubectl(srv.url, tmp_path), tmp_path / "must-gather")
    assert run.stopped is None, run.stopped
    ns = run.namespace
    served = {p["metadata"]["name"]: p for p in store.items(BY_KIND["Pod"], ns)}
    operands = sorted(n for n in served if (op := infer.operand_of_pod(n)) and op.name != "gpu-operator"
                      and re.search("nvidia|gpu", json.dumps(served[n]["metadata"].get("labels") or {})))
    # the GPU Operator's own operands all carry labels that name it; the script keeps exactly those
    assert {n for n in served if (op := infer.operand_of_pod(n)) and op.name.startswith(("nvidia-", "gpu-feature"))} <= set(operands)
    assert operands and sorted(run.operand_pods) == operands
    folder = tmp_path / "must-gather"
    for pod in operands:
        assert re.match(rf"Name:\s+{re.escape(pod)}\nNamespace:\s+{ns}\n", (folder / f"gpu_operand_pod_{pod}.descr").read_text())
    assert "nvidia.com/gpu.present=true" in (folder / "gpu_nodes.labels").read_text()
    assert (folder / "gpu_nodes.descr").read_text().startswith("Name:")
    assert all(p.endswith("@" + p.rsplit("@", 1)[1]) and p.rsplit("@", 1)[1] for p in run.driver_pods), run.driver_pods
    direct, gathered = diagnose(open_source(spec)), diagnose(open_source(str(folder)))
    for root in direct.root_causes:
        if (root.code, root.node, root.component) in _roots(gathered):
            continue
        # must-gather only runs kubectl: a cause it cannot see rests on files of the host (configs, ps, journals)
        assert any(e.artifact in store.node_artifacts for e in root.evidence), (name, root.code, [e.artifact for e in root.evidence])
    assert {c for c, _, _ in _roots(gathered)} <= {f.code for f in direct.findings}


def test_must_gather_reproduces_every_root_cause_of_an_example_whose_evidence_the_api_holds(tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    for name in ("peermem-race", "device-plugin-unregistered"):
        if name not in example_names():
            continue
        store = Store.from_source(open_source(f"example:{name}"))
        with serving(store) as srv:
            run = must_gather(_kubectl(srv.url, tmp_path), tmp_path / name)
        assert run.stopped is None
        assert _roots(diagnose(open_source(str(tmp_path / name)))) == _roots(diagnose(open_source(f"example:{name}")))


TABLE_ONLY = """\
NAMESPACE      NAME                                       READY   STATUS             RESTARTS   AGE   IP          NODE     NOMINATED NODE   READINESS GATES
gpu-operator   gpu-operator-6b8c9d7f5c-q2xkp              1/1     Running            0          4h    10.0.0.4    cpu-1    <none>           <none>
gpu-operator   nvidia-driver-daemonset-abcde              0/1     CrashLoopBackOff   12         4h    10.0.0.5    gpu-1    <none>           <none>
gpu-operator   nvidia-device-plugin-daemonset-v46gq       0/1     Init:0/1           0          4h    10.0.0.6    gpu-1    <none>           <none>
default        train-0                                    0/1     Pending            0          4h    <none>      <none>   <none>           <none>
"""


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


def test_table_rows_get_the_operand_labels_owner_and_say_they_were_inferred():
    from gpusleuth.sources.loose import Source

    store = Store.from_source(Source("pasted", "file", docs_from_text(TABLE_ONLY, "pods.txt")))
    with serving(store) as srv:
        found = _get(srv.url + "/api/v1/pods?labelSelector=app%3Dgpu-operator")["items"]
        assert [p["metadata"]["name"] for p in found] == ["gpu-operator-6b8c9d7f5c-q2xkp"]
        op = found[0]["metadata"]
        assert op["labels"] == {"app": "gpu-operator", "app.kubernetes.io/component": "gpu-operator"}
        assert op["ownerReferences"][0]["kind"] == "ReplicaSet" and op["ownerReferences"][0]["name"] == "gpu-operator-6b8c9d7f5c"
        inferred = op["annotations"][infer.ANNOTATION].split(",")
        assert set(inferred) == {"label:app", "label:app.kubernetes.io/component", "metadata.ownerReferences"}
        drivers = _get(srv.url + "/api/v1/namespaces/gpu-operator/pods?labelSelector=app.kubernetes.io%2Fcomponent%3Dnvidia-driver")["items"]
        assert [p["metadata"]["name"] for p in drivers] == ["nvidia-driver-daemonset-abcde"]
        assert drivers[0]["metadata"]["ownerReferences"][0] == {**drivers[0]["metadata"]["ownerReferences"][0], "kind": "DaemonSet", "name": "nvidia-driver-daemonset"}
        workload = _get(srv.url + "/api/v1/namespaces/default/pods/train-0")["metadata"]
        assert not workload.get("labels") and infer.ANNOTATION not in (workload.get("annotations") or {})  # not an operand: nothing made up
    assert any("inferred" in n and infer.ANNOTATION in n for n in store.notes)


def test_labels_a_source_recorded_are_never_changed():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nvidia-driver-daemonset-418.94.202510230424-0-564xm", "namespace": "gpu-operator",
                                                            "labels": {"app": "nvidia-driver-daemonset-418.94.202510230424-0"}},
           "spec": {"containers": [{"name": "nvidia-driver-ctr"}]}}
    store = Store()
    store.add(pod)
    store.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1", "labels": {"kubernetes.io/hostname": "gpu-1"}}})
    infer.complete(store)
    got = store.get(BY_KIND["Pod"], "gpu-operator", pod["metadata"]["name"])["metadata"]
    assert got["labels"] == {"app": "nvidia-driver-daemonset-418.94.202510230424-0"}
    assert got["annotations"][infer.ANNOTATION] == "metadata.ownerReferences"
    assert store.get(BY_KIND["Node"], None, "gpu-1")["metadata"]["labels"] == {"kubernetes.io/hostname": "gpu-1"}


def test_a_node_without_labels_gets_the_kubelet_and_gpu_labels_when_gpu_operands_run_there():
    store = Store()
    store.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1"}})
    store.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu-1"}})
    store.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nvidia-dcgm-m25d9", "namespace": "gpu-operator"},
               "spec": {"nodeName": "gpu-1", "containers": [{"name": "nvidia-dcgm-ctr"}]}})
    store.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nfd-worker-x8w5c", "namespace": "gpu-operator"},
               "spec": {"nodeName": "cpu-1", "containers": [{"name": "worker"}]}})  # NFD runs on every node: no sign of a GPU
    store.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nvidia-device-plugin-daemonset-v46gq", "namespace": "gpu-operator"},
               "spec": {"containers": [{"name": "nvidia-device-plugin"}]}})
    infer.complete(store)
    gpu, cpu = (store.get(BY_KIND["Node"], None, n)["metadata"] for n in ("gpu-1", "cpu-1"))
    assert gpu["labels"]["nvidia.com/gpu.present"] == "true" and gpu["labels"]["feature.node.kubernetes.io/pci-10de.present"] == "true"
    assert "nvidia.com/gpu.present" not in cpu["labels"] and cpu["labels"]["kubernetes.io/hostname"] == "cpu-1"
    assert gpu["labels"]["nvidia.com/gpu.deploy.dcgm"] == "true"  # the gate the DaemonSet that runs there selects on
    assert "label:nvidia.com/gpu.present" in gpu["annotations"][infer.ANNOTATION]
    # a pod the source placed on no node is not guessed onto the only GPU node
    dp = store.get(BY_KIND["Pod"], "gpu-operator", "nvidia-device-plugin-daemonset-v46gq")
    assert "nodeName" not in dp["spec"] and "spec.nodeName" not in dp["metadata"]["annotations"][infer.ANNOTATION]
