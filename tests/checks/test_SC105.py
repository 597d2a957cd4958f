"""SC105 pod-rejected-by-kubelet-out-of-resource: a pod bound to a node that has none of what it asks for."""

from failure_fixtures import cites, facts_from, run

# https://github.com/kubernetes/kubernetes/issues/96506 (nodeName: edge1, the in-tree GPU resource)
PODS = """\
$ kubectl get pod
NAME                                    READY   STATUS                                RESTARTS   AGE
cuda-vector-add-d8wmf                   0/1     OutOfalpha.kubernetes.io/nvidia-gpu   0          33m
cuda-vector-add-9jlgn                   1/1     Running                               0          33m
"""


def test_the_in_tree_gpu_resource_is_the_pods_own_mistake():
    [f] = run("SC105", facts_from({"pods.txt": PODS}))
    assert cites(f) == ["pods.txt:3"] and f.layer.value == "workload" and f.confidence >= 0.85
    assert "removed in 1.11" in f.explanation and "nvidia.com/gpu" in f.fixes[0].description
    assert f.fixes[1].commands == ("kubectl delete pod cuda-vector-add-d8wmf",)


def test_out_of_the_device_plugins_resource_says_how_a_bound_pod_gets_there():
    text = PODS.replace("OutOfalpha.kubernetes.io/nvidia-gpu", "OutOfnvidia.com/gpu                ")
    [f] = run("SC105", facts_from({"pods.txt": text}))
    assert f.layer.value == "scheduler" and f.confidence < 0.85 and "spec.nodeName" in f.explanation


def test_silent_on_running_pods_and_on_java_out_of_memory():
    assert run("SC105", facts_from({"pods.txt": PODS.replace("OutOfalpha.kubernetes.io/nvidia-gpu", "Running                            ")})) == []
    assert run("SC105", facts_from({"app.log": "java.lang.OutOfMemoryError: Java heap space\n"})) == []
