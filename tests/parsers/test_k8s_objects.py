"""Kubernetes objects as JSON and YAML: Lists, single objects, multi-document YAML, must-gather files,
and what happens to malformed, truncated and huge inputs."""

from __future__ import annotations

import json
import time

import pytest
import yaml
from conftest import FIXTURES, doc_from_text, docs_from_text

from gpusleuth.analysis.engine import ingest, sniff
from gpusleuth.errors import UnusableData
from gpusleuth.facts import Facts
from gpusleuth.model.finding import Gap
from gpusleuth.model.k8s import ContainerStatus, DaemonSet, Event, K8sObject, Node, Pod
from gpusleuth.parsers import k8s_objects
from gpusleuth.parsers.base import NO
from gpusleuth.parsers.k8s_common import kubectl_status

K = FIXTURES / "kubectl"


def read(name: str) -> str:
    return (K / name).read_text(encoding="utf-8")


def parsed(text: str, artifact: str = "objects.json", kind: str | None = None) -> list:
    out = []
    for doc in docs_from_text(text, artifact):
        score, p = sniff(doc)
        assert p is not None, f"nothing recognised {artifact}"
        if kind:
            assert p.kind == kind
        out.extend(p.parse(doc))
    return out


def of(objs, cls) -> list:
    return [o for o in objs if isinstance(o, cls)]


def lines(text: str) -> list[str]:
    return text.splitlines()


def test_pod_list_json():
    text = read("pods.json")
    pods = {p.name: p for p in of(parsed(text, "pods.json", "k8s.json"), Pod)}
    driver = pods["nvidia-driver-daemonset-418.94.202510230424-0-564xm"]
    assert (driver.status, driver.phase, driver.ready, driver.restarts) == ("CrashLoopBackOff", "Running", "0/2", 64)
    assert (driver.namespace, driver.node) == ("nvidia-gpu-operator", "gh200-worker-1")
    assert driver.owner == "DaemonSet/nvidia-driver-daemonset-418.94.202510230424-0"
    assert driver.env == {"NODE_NAME": "(v1:spec.nodeName)", "ENABLE_GPU_POD_EVICTION": "true", "GPU_DIRECT_RDMA_ENABLED": "true"}
    assert lines(text)[driver.evidence.line - 1].strip() == '"name": "nvidia-driver-daemonset-418.94.202510230424-0-564xm",'
    ctr = driver.container("nvidia-driver-ctr")
    assert (ctr.state, ctr.reason, ctr.restarts, ctr.last_reason, ctr.last_exit_code) == ("waiting", "CrashLoopBackOff", 64, "Error", 1)
    assert ctr.message.startswith("back-off 5m0s restarting failed container=nvidia-driver-ctr")
    assert ctr.last_finished_at.isoformat() == "2025-11-21T20:15:12+00:00"
    assert ctr.evidence.text == '"reason": "CrashLoopBackOff"'
    assert lines(text)[ctr.evidence.line - 1].strip() == '"reason": "CrashLoopBackOff"'
    peermem = driver.container("nvidia-peermem-ctr")
    assert peermem.state == "running" and peermem.evidence.text == '"running": {'
    toolkit = pods["nvidia-container-toolkit-daemonset-sxfkr"]
    assert (toolkit.status, toolkit.ready) == ("Init:0/1", "0/1")
    assert toolkit.env["CONTAINERD_CONFIG"] == "/runtime/config-dir/config.toml"
    textgen = pods["gpu-textgen"]
    assert (textgen.status, textgen.gpu_request, textgen.runtime_class) == ("ContainerCreating", 1, "nvidia")
    assert textgen.resource_requests == {"nvidia.com/gpu": 1}
    assert textgen.images == ("ghcr.io/huggingface/text-generation-inference:2.4.1",)


def test_must_gather_pods_yaml_reads_like_the_json():
    ypods = {p.name: p for p in of(parsed(read("must-gather/gpu_operand_pods.yaml"), "must-gather/gpu_operand_pods.yaml", "k8s.yaml"), Pod)}
    jpods = {p.name: p for p in of(parsed(read("pods.json")), Pod)}
    for name, y in ypods.items():
        j = jpods[name]
        assert (y.status, y.ready, y.restarts, y.owner, y.env, y.tolerations) == (j.status, j.ready, j.restarts, j.owner, j.env, j.tolerations)
        assert [(c.name, c.state, c.reason) for c in y.containers] == [(c.name, c.state, c.reason) for c in j.containers]
    text = read("must-gather/gpu_operand_pods.yaml")
    ctr = ypods["nvidia-driver-daemonset-418.94.202510230424-0-564xm"].container("nvidia-driver-ctr")
    assert lines(text)[ctr.evidence.line - 1].strip() == "reason: CrashLoopBackOff"


def test_node_json():
    text = read("node_gpu-node-02.json")
    (node,) = parsed(text, "node.json", "k8s.json")
    assert isinstance(node, Node) and node.name == "gpu-node-02"
    assert node.capacity["nvidia.com/mig-1g.10gb"] == "56" and node.allocatable["nvidia.com/gpu"] == "0"
    assert node.labels["nvidia.com/mig.config.state"] == "failed"
    assert [(t.key, t.value, t.effect) for t in node.taints] == [("nvidia.com/gpu", "present", "NoSchedule"), ("node.kubernetes.io/unschedulable", None, "NoSchedule")]
    assert node.unschedulable is True
    assert (node.kernel_version, node.container_runtime, node.kubelet_version) == ("5.15.0-124-generic", "containerd://1.7.21", "v1.30.4")
    assert {c.type: c.status for c in node.conditions} == {"MemoryPressure": "False", "Ready": "True"}
    ev = node.evidence
    assert lines(text)[ev["capacity:nvidia.com/mig-1g.10gb"].line - 1].strip() == '"nvidia.com/mig-1g.10gb": "56",'
    assert lines(text)[ev["label:nvidia.com/mig.config.state"].line - 1].strip() == '"nvidia.com/mig.config.state": "failed",'
    assert lines(text)[ev["condition:Ready"].line - 1].strip() == '"type": "Ready"'
    assert ev["unschedulable"].text == '"unschedulable": true'


def test_core_v1_and_events_k8s_io_events():
    core = of(parsed(read("events_core_v1.json"), "events.json", "k8s.json"), Event)
    sandbox = next(e for e in core if e.reason == "FailedCreatePodSandBox")
    assert (sandbox.object, sandbox.namespace, sandbox.count, sandbox.node) == ("pod/gpu-textgen", "default", 93, "192-18-132-31")
    assert sandbox.source == "kubelet, 192-18-132-31"
    assert sandbox.time.isoformat() == "2025-09-26T19:22:21+00:00"
    assert sandbox.evidence.text.startswith('"message": "Failed to create pod sandbox')
    (new,) = of(parsed(read("events_k8s_io_v1.yaml"), "events.yaml", "k8s.yaml"), Event)
    assert (new.reason, new.count, new.node, new.source) == ("BackOff", 832, "gh200-worker-1", "kubelet, gh200-worker-1")
    assert new.object == "pod/nvidia-driver-daemonset-418.94.202510230424-0-564xm"
    assert new.message.startswith("Back-off restarting failed container nvidia-driver-ctr")
    assert new.evidence.text.startswith("note: Back-off restarting")


def test_daemonsets_yaml_and_their_template():
    objs = parsed(read("must-gather/gpu_operand_ds.yaml"), "must-gather/gpu_operand_ds.yaml", "k8s.yaml")
    dss = {d.name: d for d in of(objs, DaemonSet)}
    driver = dss["nvidia-driver-daemonset-418.94.202510230424-0"]
    assert (driver.desired, driver.current, driver.ready, driver.up_to_date, driver.available) == (1, 1, 0, 1, 0)  # numberAvailable omitted
    assert driver.node_selector == "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION=418.94.202510230424-0,nvidia.com/gpu.deploy.driver=true"
    toolkit = next(o for o in of(objs, K8sObject) if o.name == "nvidia-container-toolkit-daemonset")
    assert toolkit.get("spec.template.spec.containers.0.env.0.value") == "/runtime/config-dir/config.toml"
    line = toolkit.key_lines["spec.template.spec.containers.0.env.0.value"]
    assert lines(read("must-gather/gpu_operand_ds.yaml"))[line - 1].strip() == "value: /runtime/config-dir/config.toml"


def test_cluster_policy_is_a_k8s_object_with_key_lines():
    text = read("must-gather/cluster_policy.yaml")
    (cp,) = parsed(text, "must-gather/cluster_policy.yaml", "k8s.yaml")
    assert (cp.kind, cp.name, cp.api_version, cp.line) == ("ClusterPolicy", "gpu-cluster-policy", "nvidia.com/v1", 1)
    assert cp.get("spec.driver.rdma.enabled") is True and cp.get("status.state") == "notReady"
    assert cp.get("metadata.labels.app.kubernetes.io/component") == "gpu-operator"  # a key holding dots
    assert cp.get("spec.toolkit.env.1.name") == "CONTAINERD_SOCKET" and cp.get("spec.toolkit.env.9.name") is None
    ev = cp.evidence("spec.toolkit.env.0.value")
    assert lines(text)[ev.line - 1].strip() == "value: /var/snap/k8s/common/etc/containerd/config.toml"
    assert ev.artifact == "must-gather/cluster_policy.yaml"


def test_multi_document_yaml():
    rc, cm = parsed(read("manifests.yaml"), "manifests.yaml", "k8s.yaml")
    assert (rc.kind, rc.name, rc.get("handler"), rc.line) == ("RuntimeClass", "nvidia", "nvidia", 2)
    assert cm.kind == "ConfigMap" and "replicas: 4" in cm.get("data.any")
    assert cm.key_lines["data.any"] == 10 and cm.key_lines["data"] == 9


def test_several_json_objects_pasted_one_after_another():
    text = read("node_gpu-node-02.json") + read("events_core_v1.json")
    objs = parsed(text)
    assert len(of(objs, Node)) == 1 and len(of(objs, Event)) == 2
    ev = of(objs, Event)[0]
    assert lines(text)[ev.evidence.line - 1].strip().startswith('"message": "Failed to create pod sandbox')


# -- bad input ------------------------------------------------------------------------------------------------


def test_malformed_json_names_the_line():
    text = read("pods.json").replace('"kind": "Pod",', '"kind": "Pod"', 1)
    doc = doc_from_text(text, "pods.json")
    with pytest.raises(UnusableData, match=r"^line 7: Expecting ',' delimiter"):
        list(k8s_objects.parse_json.parse(doc))


def test_truncated_json_list_keeps_the_complete_items():
    text = read("pods.json")
    cut = text[: text.index('"name": "gpu-textgen"')]  # cut inside the third pod
    objs = parsed(cut, "pods.json", "k8s.json")
    assert [p.name for p in of(objs, Pod)] == ["nvidia-driver-daemonset-418.94.202510230424-0-564xm", "nvidia-container-toolkit-daemonset-sxfkr"]
    (gap,) = of(objs, Gap)
    assert "truncated JSON" in gap.why and "2 complete item(s) kept" in gap.why and gap.artifact == "pods.json"
    facts = ingest(docs_from_text(cut, "pods.json"), Facts())  # the engine files the gap and keeps the pods
    assert len(facts.all(Pod)) == 2 and any("truncated JSON" in g.why for g in facts.gaps)
    assert facts.recognised[0].objects == 2


def test_truncated_single_object_is_unusable():
    text = read("node_gpu-node-02.json")
    doc = docs_from_text(text[:1500], "node.json")[0]
    with pytest.raises(UnusableData, match="truncated JSON"):
        list(k8s_objects.parse_json.parse(doc))


def test_json_without_kubernetes_objects():
    doc = doc_from_text('{\n    "apiVersion": "x",\n    "kind": "Config",\n    "items": 3\n}\n[\n  1\n]\n')
    objs = list(k8s_objects.parse_json.parse(doc))  # a kind without items is still one object
    assert of(objs, K8sObject)[0].kind == "Config"
    with pytest.raises(UnusableData, match="without a Kubernetes object"):
        list(k8s_objects.parse_json.parse(doc_from_text('[\n  {"a": 1}\n]\n')))


def test_malformed_yaml_names_the_line():
    text = read("must-gather/gpu_operand_ds.yaml").replace("  kind: DaemonSet", "  kind: DaemonSet: x", 1)
    with pytest.raises(UnusableData, match=r"^line 4: mapping values are not allowed"):
        list(k8s_objects.parse_yaml.parse(doc_from_text(text)))


def test_yaml_documents_before_a_broken_one_are_kept():
    objs = list(k8s_objects.parse_yaml.parse(doc_from_text(read("manifests.yaml") + "---\nkind: [unclosed\n", "m.yaml")))
    assert [o.name for o in of(objs, K8sObject)] == ["nvidia", "time-slicing-config"]
    (gap,) = of(objs, Gap)
    assert "line 17" in gap.why and "2 document(s)" in gap.why


def test_truncated_yaml_list_drops_an_unnamed_tail():
    text = read("must-gather/gpu_operand_pods.yaml")
    cut = text[: text.index("  kind: Pod", text.index("  kind: Pod") + 1) + len("  kind: Pod\n")]
    pods = of(list(k8s_objects.parse_yaml.parse(doc_from_text(cut))), Pod)
    assert [p.name for p in pods] == ["nvidia-driver-daemonset-418.94.202510230424-0-564xm"]


def test_sniffers():
    assert k8s_objects.parse_json.sniff(doc_from_text(read("pods.json"))) > 60
    assert k8s_objects.parse_yaml.sniff(doc_from_text(read("manifests.yaml"))) > 60
    values = doc_from_text("driver:\n  enabled: true\ntoolkit:\n  env:\n  - name: CONTAINERD_CONFIG\n    value: /etc/containerd/config.toml\n")
    assert k8s_objects.parse_yaml.sniff(values) == NO  # Helm values: no apiVersion/kind
    jsonlog = doc_from_text('{"level":"info","ts":1732190000.1,"msg":"kind: Pod apiVersion: v1"}\n{"level":"error","msg":"x"}\n')
    assert k8s_objects.parse_json.sniff(jsonlog) == NO
    cdi = doc_from_text("cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: all\n")
    assert k8s_objects.parse_yaml.sniff(cdi) == NO


def test_a_large_json_list_is_fast_and_never_touches_yaml(monkeypatch):
    base = json.loads(read("pods.json"))
    items = []
    for i in range(1500):  # about 8 MB, the shape of a big `kubectl get pods -A -o json`
        item = json.loads(json.dumps(base["items"][i % 3]))
        item["metadata"]["name"] += f"-{i}"
        items.append(item)
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=4)

    def no_yaml(*a, **k):
        raise AssertionError("JSON went through YAML")

    monkeypatch.setattr(yaml, "CSafeLoader", no_yaml, raising=False)
    monkeypatch.setattr(k8s_objects, "_Loader", no_yaml)
    doc = doc_from_text(text, "big.json")
    start = time.perf_counter()
    pods = of(list(k8s_objects.parse_json.parse(doc)), Pod)
    elapsed = time.perf_counter() - start
    assert len(pods) == 1500 and pods[-1].name.endswith("-1499")
    assert lines(text)[pods[-1].evidence.line - 1].strip().startswith(f'"name": "{pods[-1].name}"')
    assert elapsed < 4.0, f"{len(text) / 1e6:.1f} MB took {elapsed:.1f} s"


# -- kubectl's STATUS column ------------------------------------------------------------------------------------


def cs(name, state=None, reason=None, exit_code=None, ready=False, restarts=0, init=False):
    return ContainerStatus(name, init=init, state=state, reason=reason, exit_code=exit_code, ready=ready, restarts=restarts)


@pytest.mark.parametrize(
    "phase, inits, apps, ready, deleting, expected",
    [
        ("Pending", [cs("a", "running")], [cs("c", "waiting", "PodInitializing")], False, False, ("Init:0/1", 0)),
        ("Pending", [cs("a", "terminated", "Completed", 0), cs("b", "waiting", "CrashLoopBackOff", restarts=9)], [cs("c", "waiting", "PodInitializing")], False, False, ("Init:CrashLoopBackOff", 9)),
        ("Pending", [cs("a", "terminated", "Error", 1, restarts=2)], [cs("c", "waiting", "PodInitializing")], False, False, ("Init:Error", 2)),
        ("Pending", [cs("a", "terminated", None, 137)], [], False, False, ("Init:ExitCode:137", 0)),
        ("Pending", [cs("a"), cs("b"), cs("c")], [cs("x")], False, False, ("Pending", 0)),  # no statuses yet
        ("Running", [], [cs("c", "waiting", "CrashLoopBackOff", restarts=64), cs("d", "running", ready=True)], False, False, ("CrashLoopBackOff", 64)),
        ("Running", [], [cs("c", "terminated", "Completed", 0), cs("d", "running", ready=True)], True, False, ("Running", 0)),
        ("Running", [], [cs("c", "terminated", "Completed", 0), cs("d", "running", ready=True)], False, False, ("NotReady", 0)),
        ("Running", [], [cs("c", "running", ready=True)], True, True, ("Terminating", 0)),
        ("Succeeded", [], [cs("c", "terminated", "Completed", 0)], False, False, ("Completed", 0)),
    ],
)
def test_kubectl_status(phase, inits, apps, ready, deleting, expected):
    assert kubectl_status(phase, None, inits, apps, ready, deleting) == expected


def test_kubectl_status_pod_reason_wins_without_containers():
    assert kubectl_status("Failed", "UnexpectedAdmissionError", [], []) == ("UnexpectedAdmissionError", None)
    assert kubectl_status("Running", None, [], [], deleting=True) == ("Terminating", None)


# -- robustness ---------------------------------------------------------------------------------------------------


def test_every_sample_cut_anywhere_or_mangled_never_raises_anything_but_unusable_data():
    import random

    rng = random.Random(1121)
    samples = sorted(p for p in K.rglob("*") if p.is_file())
    assert len(samples) >= 30
    for path in samples:
        text = path.read_text(encoding="utf-8")
        variants = [text[: rng.randrange(len(text))] for _ in range(12)]
        for _ in range(6):
            chars = list(text)
            for _ in range(max(1, len(chars) // 200)):
                chars[rng.randrange(len(chars))] = rng.choice(["\n", " ", "\t", ":", "{", "]", "\ufffd", "(", "x"])
            variants.append("".join(chars))
        for variant in variants:
            for doc in docs_from_text(variant, path.name):
                score, p = sniff(doc)
                if p is None:
                    continue
                try:
                    list(p.parse(doc))
                except UnusableData:
                    pass
