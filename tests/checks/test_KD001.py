"""KD001 nvidia-peermem-load-failed: the three causes, each from realistic artifacts through the real
parsers, and silence when the module loads."""

import operand_seed as seed

from gpusleuth.analysis.engine import run_checks
from gpusleuth.checks import get_check
from gpusleuth.model.finding import FixKind, Role

MOFED_LOG = f"""\
$ oc logs {seed.MOFED} -n {seed.NET} -c mofed-container
[21-Nov-25_11:51:06] Unsetting driver ready state
[21-Nov-25_11:51:06] Awaiting openshift driver toolkit to complete NIC driver build, next query in 300 sec
[21-Nov-25_11:56:08] Installing driver packages
Unloading HCA driver:[  OK  ]
Loading HCA driver and Access Layer:[  OK  ]
[21-Nov-25_11:58:39] Current mlx5_core driver version: 25.07-0.9.7
[21-Nov-25_11:58:39] Setting driver ready state
"""

# `kubectl logs --timestamps`: both sides carry comparable times
DRIVER_TS = f"""\
$ kubectl logs --timestamps --previous {seed.DRIVER} -n {seed.NS} -c nvidia-driver-ctr
2025-11-21T11:56:59.118204119Z Loading NVIDIA Peer Memory kernel module...
2025-11-21T11:56:59.120933842Z + modprobe -a nvidia-peermem
2025-11-21T11:57:02.201776003Z modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument
2025-11-21T11:57:02.202311519Z Stopping NVIDIA persistence daemon...
"""
MOFED_TS = f"""\
$ kubectl logs --timestamps {seed.MOFED} -n {seed.NET} -c mofed-container
2025-11-21T11:51:06.004411302Z [21-Nov-25_11:51:06] Unsetting driver ready state
2025-11-21T11:58:39.913346124Z [21-Nov-25_11:58:39] Setting driver ready state
"""

PEERMEM_CTR = f"""\
$ kubectl logs {seed.DRIVER} -n {seed.NS} -c nvidia-peermem-ctr
DRIVER_ARCH is aarch64
modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument
failed to load nvidia-peermem module
"""
DMESG = """\
$ dmesg -T | grep -i -E 'peermem|ib_core|peer_mem'
[Tue Sep  8 17:16:02 2026] nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client
[Tue Sep  8 17:16:02 2026] nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)
[Tue Sep  8 17:16:02 2026] nvidia_peermem: disagrees about version of symbol ib_unregister_peer_memory_client
[Tue Sep  8 17:16:02 2026] nvidia_peermem: Unknown symbol ib_unregister_peer_memory_client (err -22)
"""

CLUSTER_POLICY = """\
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: gpu-cluster-policy
spec:
  driver:
    enabled: true
    rdma:
      enabled: true
      useHostMofed: false
  toolkit:
    enabled: true
"""
ALL_PODS = """\
$ kubectl get pods -A
NAMESPACE       NAME                                       READY   STATUS             RESTARTS       AGE
kube-system     coredns-7db6d8ff4d-x2x4z                   1/1     Running            0              9d
kube-system     kube-proxy-8kx2d                           1/1     Running            0              9d
gpu-operator    nvidia-driver-daemonset-7xq2w              0/1     CrashLoopBackOff   17 (2m ago)    70m
gpu-operator    nvidia-container-toolkit-daemonset-q8c5n   0/1     Init:0/1           0              70m
"""
HELM_LIST = """\
$ helm list -n gpu-operator
NAME                    NAMESPACE       REVISION        UPDATED                                 STATUS          CHART                   APP VERSION
gpu-operator-1732184421 gpu-operator    1               2025-11-21 09:20:21.44514 +0000 UTC     deployed        gpu-operator-v25.3.0    v25.3.0
"""
DRIVER_NO_MOFED = """\
$ kubectl logs --previous nvidia-driver-daemonset-7xq2w -n gpu-operator -c nvidia-driver-ctr
Mellanox device found at 0000:3b:00.0
Loading NVIDIA Peer Memory kernel module...
+ modprobe -a nvidia-peermem
modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument
"""


def _run(files):
    findings, _ = run_checks(seed.facts_from(files), checks=[get_check("KD001")])
    return findings


def test_race_with_mofed_cites_the_failure_and_both_sides():
    [f] = _run({"pods.txt": seed.PODS, "netop-pods.txt": seed.NETOP_PODS, "driver.log": seed.DRIVER_LOG, "mofed.log": MOFED_LOG})
    assert f.role == Role.ROOT_CAUSE and f.layer.value == "kernel-driver"
    assert f.facts["cause"] == "mofed-not-ready"
    cites = [e.cite() for e in f.evidence]
    assert cites[:2] == [f"driver.log:{seed.ERROR_LINE - 1}", f"driver.log:{seed.ERROR_LINE}"]
    assert "Invalid argument" in f.evidence[1].text
    assert {"mofed.log:2", "mofed.log:8", "netop-pods.txt:3", f"pods.txt:{seed.ROW[seed.DRIVER]}"} <= set(cites)
    assert f.component == "nvidia-driver-daemonset" and f.facts["pod"] == seed.DRIVER
    # fixes ranked as in seed 001, with the real names
    assert [fx.kind for fx in f.fixes] == [FixKind.IMMEDIATE, FixKind.WORKAROUND, FixKind.PERMANENT]
    immediate = f.fixes[0].commands
    assert immediate[0] == f"kubectl get pods -n {seed.NET} -o wide"
    assert f"kubectl delete pod {seed.DRIVER} -n {seed.NS}" in immediate
    assert f"kubectl logs -f daemonset/nvidia-driver-daemonset-418.94.202510230424-0 -n {seed.NS} -c nvidia-driver-ctr" in immediate
    assert '"enabled":false' in f.fixes[1].commands[0] and "Impact" in f.fixes[1].description
    assert ".driver-ready" in f.fixes[2].snippet
    assert not any("<" in c for fx in f.fixes for c in fx.commands)


def test_race_is_stronger_when_the_times_show_mofed_ready_after_the_failure():
    [f] = _run({"pods.txt": seed.PODS, "netop-pods.txt": seed.NETOP_PODS, "driver.log": DRIVER_TS, "mofed.log": MOFED_TS})
    assert f.confidence >= 0.9 and f.facts["ready_after_failure_s"] == 98
    assert "after the failure at 11:57:02" in f.explanation


def test_symbol_version_mismatch_from_dmesg():
    [f] = _run({"pods.txt": seed.PODS, "netop-pods.txt": seed.NETOP_PODS, "peermem.log": PEERMEM_CTR, "dmesg.txt": DMESG})
    assert f.facts["cause"] == "symbol-mismatch"
    assert "dmesg.txt:4" in [e.cite() for e in f.evidence]
    assert "different MOFED" in f.title


def test_rdma_enabled_without_any_mofed():
    [f] = _run({"pods.txt": ALL_PODS, "driver.log": DRIVER_NO_MOFED, "clusterpolicy.yaml": CLUSTER_POLICY, "helm.txt": HELM_LIST})
    assert f.facts["cause"] == "no-mofed" and f.confidence >= 0.8
    assert "clusterpolicy.yaml:9" in [e.cite() for e in f.evidence]
    assert f.fixes[1].commands == (
        "kubectl patch clusterpolicy/gpu-cluster-policy --type merge -p '{\"spec\":{\"driver\":{\"rdma\":{\"enabled\":false}}}}'",
        "helm upgrade gpu-operator-1732184421 nvidia/gpu-operator -n gpu-operator --reuse-values --set driver.rdma.enabled=false")
    assert "useHostMofed" in f.fixes[2].snippet


def test_no_context_still_names_the_failure_with_lower_confidence():
    [f] = _run({"driver.log": seed.DRIVER_LOG})
    assert f.facts["cause"] == "undetermined" and f.confidence <= 0.6
    assert f"driver.log:{seed.ERROR_LINE}" in [e.cite() for e in f.evidence]


def test_silent_when_nvidia_peermem_loads():
    ok = f"""\
$ kubectl logs {seed.DRIVER} -n {seed.NS} -c nvidia-driver-ctr
Mellanox device found at 0000:01:00.0
Loading NVIDIA Peer Memory kernel module...
+ modprobe -a nvidia-peermem
+ set +o xtrace -o nounset
Starting NVIDIA persistence daemon...
"""
    waiting = f"""\
$ kubectl logs {seed.DRIVER} -n {seed.NS} -c nvidia-peermem-ctr
waiting for mellanox ofed and nvidia drivers to be installed
successfully loaded nvidia-peermem module, now waiting for signal
"""
    assert _run({"pods.txt": seed.PODS, "driver.log": ok, "peermem.log": waiting}) == []


LSMOD_NO_PEERMEM = """\
root@gpu-node-3:~# lsmod | grep -E 'nvidia|ib_core|mlx5'
nvidia_uvm           1794048  0
nvidia_modeset       1355776  0
nvidia              56717312  2 nvidia_uvm,nvidia_modeset
mlx5_ib               458752  0
ib_core               434176  8 rdma_cm,ib_ipoib,iw_cm,ib_umad,rdma_ucm,ib_uverbs,mlx5_ib,ib_cm
mlx5_core            2453504  1 mlx5_ib
root@gpu-node-3:~# cat /sys/module/mlx5_core/version
24.10-1.1.4
"""
WIDE_PODS = """\
$ kubectl get pods -n gpu-operator -o wide
NAME                            READY   STATUS    RESTARTS   AGE   IP           NODE         NOMINATED NODE   READINESS GATES
nvidia-driver-daemonset-k7q2x   2/2     Running   0          3d    10.42.3.17   gpu-node-3   <none>           <none>
"""


def test_the_failure_gains_what_the_node_shows_now():
    [f] = _run({"pods.txt": seed.PODS, "netop-pods.txt": seed.NETOP_PODS, "driver.log": seed.DRIVER_LOG, "mofed.log": MOFED_LOG,
                "host.txt": LSMOD_NO_PEERMEM})
    assert f.facts["cause"] == "mofed-not-ready" and f.facts["peermem_loaded"] is False and f.facts["mofed"] == "24.10-1.1.4"
    assert "On the node now: lsmod on the node does not list nvidia_peermem; ib_core is loaded; MOFED 24.10-1.1.4" in f.explanation
    assert {"host.txt:1", "host.txt:6", "host.txt:9"} <= {e.cite() for e in f.evidence}


def test_peermem_missing_with_rdma_on_and_no_failure_in_any_log():
    [f] = _run({"pods.txt": WIDE_PODS, "clusterpolicy.yaml": CLUSTER_POLICY, "host.txt": LSMOD_NO_PEERMEM})
    assert f.facts["cause"] == "not-loaded" and f.node == "gpu-node-3" and f.role == Role.ROOT_CAUSE
    assert f.title == "nvidia_peermem is not loaded on gpu-node-3 although GPUDirect RDMA is enabled"
    assert [e.cite() for e in f.evidence] == ["host.txt:4", "host.txt:1", "host.txt:6", "host.txt:9", "clusterpolicy.yaml:9"]
    assert "a MOFED reload" in f.explanation
    assert f.fixes[0].commands == ("kubectl logs nvidia-driver-daemonset-k7q2x -n gpu-operator -c nvidia-peermem-ctr",
                                   "ls -l /run/mellanox/drivers/.driver-ready", "kubectl delete pod nvidia-driver-daemonset-k7q2x -n gpu-operator")
    assert f.fixes[1].kind == FixKind.WORKAROUND


def test_silent_when_peermem_is_loaded_or_rdma_is_off():
    loaded = LSMOD_NO_PEERMEM.replace("mlx5_ib               458752  0\n", "mlx5_ib               458752  0\nnvidia_peermem         16384  0\n")
    assert _run({"pods.txt": WIDE_PODS, "clusterpolicy.yaml": CLUSTER_POLICY, "host.txt": loaded}) == []
    off = CLUSTER_POLICY.replace("    rdma:\n      enabled: true", "    rdma:\n      enabled: false")
    assert _run({"pods.txt": WIDE_PODS, "clusterpolicy.yaml": off, "host.txt": LSMOD_NO_PEERMEM}) == []


def test_the_driver_containers_own_marker_says_rdma_is_on():
    marker = "root@gpu-node-3:~# cat /run/nvidia/validations/.driver-ctr-ready\nGDRCOPY_ENABLED: false\nGDS_ENABLED: false\nGPU_DIRECT_RDMA_ENABLED: true\n"
    [f] = _run({"pods.txt": WIDE_PODS, "host.txt": LSMOD_NO_PEERMEM + marker})
    assert f.facts["cause"] == "not-loaded" and "records GPU_DIRECT_RDMA_ENABLED: true" in f.explanation
    assert "host.txt:13" in [e.cite() for e in f.evidence]
