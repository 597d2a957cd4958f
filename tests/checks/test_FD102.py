"""FD102 nfd-worker-not-on-gpu-node: the worker does not tolerate the GPU node's taint."""

from failure_fixtures import cites, facts_from, node, pod, run, taint

WORKER_TOLERATIONS = ({"key": "node-role.kubernetes.io/master", "operator": "Equal", "effect": "NoSchedule"},
                      {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"})


def _cluster(tolerations=WORKER_TOLERATIONS):
    gpu = node("gpu-node-9", taints=(taint("nvidia.com/gpu", "true"),), capacity={"nvidia.com/gpu": "4"}, allocatable={"nvidia.com/gpu": "4"})
    cpu = node("cpu-node-1")
    worker = pod("gpu-operator-node-feature-discovery-worker-bw7gq", node="cpu-node-1", tolerations=tolerations)
    return gpu, cpu, worker


def test_value_mismatch_in_the_toleration():
    [f] = run("FD102", facts_from({}, *_cluster()))
    assert f.facts["taint"] == "nvidia.com/gpu=true:NoSchedule" and f.node == "gpu-node-9"
    assert cites(f)[0] == "nodes.txt:9" and "nvidia.com/gpu=present" in f.explanation


def test_silent_when_the_worker_tolerates_the_taint():
    ok = ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)
    assert run("FD102", facts_from({}, *_cluster(ok))) == []


def test_device_plugin_chart_nfd_and_a_gpu_node_known_only_by_its_taint():
    """k8s-device-plugin#1934: EKS GPU nodes tainted nvidia.com/gpu=true, the plugin chart's NFD tolerates
    value "present"; no labels, no capacity: the taint says GPU node; the plugin DaemonSet has DESIRED 0."""
    ds = ("$ kubectl get ds -n kube-system\n"
          "NAME                                                 DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE\n"
          "nvidia-device-plugin                                 0         0         0       0            0           <none>          44m\n"
          "nvidia-device-plugin-node-feature-discovery-worker   1         1         1       1            1           <none>          44m\n")
    gpu = node("ip-10-20-31-114.ec2.internal", taints=(taint("nvidia.com/gpu", "true"),))
    worker = pod("nvidia-device-plugin-node-feature-discovery-worker-4mh6s", ns="kube-system", node="ip-10-20-25-143.ec2.internal")
    [f] = run("FD102", facts_from({"ds.txt": ds}, gpu, node("ip-10-20-25-143.ec2.internal"), worker))
    assert "a GPU node by its taint nvidia.com/gpu=true:NoSchedule" in f.explanation
    assert "DaemonSet nvidia-device-plugin has DESIRED 0" in f.explanation and "ds.txt:3" in cites(f)
    assert f.fixes[0].commands == ("helm upgrade nvidia-device-plugin nvdp/nvidia-device-plugin -n kube-system --reuse-values --set-json "
                                   "'nfd.worker.tolerations=[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]'",)
    assert f.fixes[0].snippet.startswith("nfd:\n  worker:\n    tolerations:")


TAINTED_GPU = node("ip-10-20-31-114.ec2.internal", taints=(taint("nvidia.com/gpu", "true"),))
WORKER_POD = pod("nvidia-device-plugin-node-feature-discovery-worker-4mh6s", ns="kube-system", node="ip-10-20-25-143.ec2.internal")


def test_worker_tolerations_from_a_yq_fragment_of_its_daemonset():
    """The worker pods (a table) show no tolerations; the DaemonSet's, pasted through yq, do."""
    yq = ("$ kubectl get ds -n kube-system nvidia-device-plugin-node-feature-discovery-worker -o yaml | yq '.spec.template.spec.tolerations'\n"
          "- effect: NoSchedule\n  key: nvidia.com/gpu\n  operator: Equal\n  value: present\n")
    [f] = run("FD102", facts_from({"daemonsets.yaml": yq}, TAINTED_GPU, node("ip-10-20-25-143.ec2.internal"), WORKER_POD))
    assert f.confidence == 0.8 and "nvidia.com/gpu=present:NoSchedule (Equal)" in f.explanation
    assert "daemonsets.yaml:2" in cites(f)


def test_silent_when_the_daemonset_fragment_tolerates_the_taint():
    yq = ("$ kubectl get ds -n kube-system nvidia-device-plugin-node-feature-discovery-worker -o yaml | yq '.spec.template.spec.tolerations'\n"
          "- effect: NoSchedule\n  key: nvidia.com/gpu\n  operator: Exists\n")
    assert run("FD102", facts_from({"daemonsets.yaml": yq}, TAINTED_GPU, node("ip-10-20-25-143.ec2.internal"), WORKER_POD)) == []


def test_worker_tolerations_from_the_device_plugin_chart_values():
    values = ("nfd:\n  worker:\n    tolerations:\n    - key: nvidia.com/gpu\n      operator: Equal\n      value: present\n"
              "      effect: NoSchedule\nmigStrategy: none\n")
    [f] = run("FD102", facts_from({"values.yaml": values}, TAINTED_GPU, node("ip-10-20-25-143.ec2.internal"), WORKER_POD))
    assert f.confidence == 0.8 and "values.yaml:3" in cites(f)
