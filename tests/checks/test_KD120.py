"""KD120 nvidia-module-not-loaded-while-driver-ready: lsmod has no nvidia, the driver pod and markers say ready."""

from failure_fixtures import cites, facts_from, run

PODS = """\
$ kubectl get pods -n gpu-operator -o wide
NAME                                       READY   STATUS     RESTARTS   AGE   IP           NODE         NOMINATED NODE   READINESS GATES
nvidia-driver-daemonset-k7q2x              1/1     Running    0          3d    10.42.3.17   gpu-node-3   <none>           <none>
nvidia-device-plugin-daemonset-2xk9p       1/1     Running    0          3d    10.42.3.18   gpu-node-3   <none>           <none>
"""
HOST = """\
root@gpu-node-3:~# lsmod
Module                  Size  Used by
mlx5_ib               458752  0
ib_core               434176  1 mlx5_ib
mlx5_core            2453504  1 mlx5_ib
root@gpu-node-3:~# ls -la /run/nvidia/validations/
total 0
drwxr-xr-x 2 root root 120 Sep 26 18:40 .
drwxr-xr-x 5 root root 100 Sep 26 18:38 ..
-rw-r--r-- 1 root root   0 Sep 26 18:40 driver-ready
-rw-r--r-- 1 root root   0 Sep 26 18:40 toolkit-ready
"""


def test_no_nvidia_module_while_the_driver_pod_and_marker_say_ready():
    [f] = run("KD120", facts_from({"pods.txt": PODS, "host.txt": HOST}))
    assert f.node == "gpu-node-3" and f.severity.value == "critical"
    assert cites(f) == ["host.txt:1", "pods.txt:3", "host.txt:10"]
    assert f.title == "The NVIDIA kernel module is not loaded on gpu-node-3 although driver pod nvidia-driver-daemonset-k7q2x is Running 1/1"
    assert "/run/nvidia/validations/driver-ready exists" in f.explanation and f.confidence == 0.75
    assert f.fixes[0].commands[-1] == "kubectl delete pod nvidia-driver-daemonset-k7q2x -n gpu-operator"


def test_marker_alone_is_enough_but_weaker():
    [f] = run("KD120", facts_from({"host.txt": HOST}))
    assert f.confidence == 0.65 and cites(f) == ["host.txt:1", "host.txt:10"]


def test_silent_when_nvidia_is_loaded_or_nothing_claims_ready_or_nouveau_explains_it():
    loaded = HOST.replace("mlx5_ib               458752  0\n", "mlx5_ib               458752  0\nnvidia              56717312  2\n")
    assert run("KD120", facts_from({"pods.txt": PODS, "host.txt": loaded})) == []
    crashing = PODS.replace("1/1     Running    0          3d    10.42.3.17", "0/1     CrashLoopBackOff   9   3d    10.42.3.17")
    no_marker = HOST.split("root@gpu-node-3:~# ls")[0]
    assert run("KD120", facts_from({"pods.txt": crashing, "host.txt": no_marker})) == []
    nouveau = HOST.replace("mlx5_ib               458752  0\n", "mlx5_ib               458752  0\nnouveau              2433024  0\n")
    assert run("KD120", facts_from({"pods.txt": PODS, "host.txt": nouveau})) == []
