"""KD001 nvidia-peermem-load-failed: the three causes, each from realistic artifacts, and silence when the
module loads."""

from datetime import datetime, timezone

from loglines import container_log, facts_with

from gpusleuth.analysis.engine import run_checks
from gpusleuth.checks import get_check
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import FixKind, Role
from gpusleuth.model.k8s import K8sObject, Pod
from gpusleuth.model.runtime import HelmRelease

NS, NET = "nvidia-gpu-operator", "nvidia-network-operator"
DRIVER = "nvidia-driver-daemonset-418.94.202510230424-0-564xm"
MOFED = "mofed-rhcos4.18-554bdbd7cf-ds-djxv9"

DRIVER_TAIL = """\
Loading NVIDIA driver kernel modules...
+ modprobe nvidia NVreg_CoherentGPUMemoryMode=driver
+ modprobe nvidia-uvm
+ modprobe nvidia-modeset
+ set +o xtrace -o nounset
Mellanox device found at 0000:01:00.0
Loading NVIDIA Peer Memory kernel module...
+ modprobe -a nvidia-peermem
modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument
+ _shutdown
Stopping NVIDIA persistence daemon...
Unloading NVIDIA driver kernel modules...
"""
FIRST = 3216  # so that the modprobe error is line 3224, as in seed 001

MOFED_LOG = """\
[21-Nov-25_11:51:06] Unsetting driver ready state
[21-Nov-25_11:51:06] Awaiting openshift driver toolkit to complete NIC driver build, next query in 300 sec
[21-Nov-25_11:56:08] Installing driver packages
Unloading HCA driver:[  OK  ]
Loading HCA driver and Access Layer:[  OK  ]
[21-Nov-25_11:58:39] Current mlx5_core driver version: 25.07-0.9.7
[21-Nov-25_11:58:39] Setting driver ready state
"""

DMESG = """\
[Tue Sep  8 17:16:02 2026] nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client
[Tue Sep  8 17:16:02 2026] nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)
[Tue Sep  8 17:16:02 2026] nvidia_peermem: disagrees about version of symbol ib_unregister_peer_memory_client
[Tue Sep  8 17:16:02 2026] nvidia_peermem: Unknown symbol ib_unregister_peer_memory_client (err -22)
"""


def _driver_log(times=None):
    return container_log("gpu_operand_pod_nvidia-driver-daemonset.log", DRIVER_TAIL, pod=DRIVER, namespace=NS,
                         container="nvidia-driver-ctr", previous=True, first=FIRST, times=times)


def _pods():
    return [
        Pod(DRIVER, NS, status="CrashLoopBackOff", ready="1/4", restarts=64,
            evidence=Evidence("pods.txt", 2, f"{DRIVER}   1/4     CrashLoopBackOff   64 (4m7s ago)   3h28m")),
        Pod(MOFED, NET, status="Running", ready="2/2", restarts=0,
            evidence=Evidence("netop-pods.txt", 2, f"{MOFED}   2/2     Running   0          2d22h")),
    ]


def _run(*objs):
    findings, _ = run_checks(facts_with(*objs), checks=[get_check("KD001")])
    return findings


def test_race_with_mofed_cites_the_failure_and_both_sides():
    mofed = container_log("network_operand_pod_mofed.log", MOFED_LOG, pod=MOFED, namespace=NET, container="mofed-container", first=1133)
    [f] = _run(_driver_log(), mofed, *_pods())
    assert f.role == Role.ROOT_CAUSE and f.layer.value == "kernel-driver"
    assert f.facts["cause"] == "mofed-not-ready"
    cites = [e.cite() for e in f.evidence]
    assert cites[:2] == ["gpu_operand_pod_nvidia-driver-daemonset.log:3223", "gpu_operand_pod_nvidia-driver-daemonset.log:3224"]
    assert "Invalid argument" in f.evidence[1].text
    assert "network_operand_pod_mofed.log:1133" in cites and "network_operand_pod_mofed.log:1139" in cites  # unset and set
    assert "netop-pods.txt:2" in cites
    assert f.component == "nvidia-driver-daemonset" and f.facts["pod"] == DRIVER
    # fixes ranked as in seed 001, with the real names
    kinds = [fx.kind for fx in f.fixes]
    assert kinds == [FixKind.IMMEDIATE, FixKind.WORKAROUND, FixKind.PERMANENT]
    immediate = f.fixes[0].commands
    assert immediate[0] == f"kubectl get pods -n {NET} -o wide"
    assert f"kubectl delete pod {DRIVER} -n {NS}" in immediate
    assert f"kubectl logs -f daemonset/nvidia-driver-daemonset-418.94.202510230424-0 -n {NS} -c nvidia-driver-ctr" in immediate
    assert "rdma" in f.fixes[1].commands[0] and '"enabled":false' in f.fixes[1].commands[0]
    assert "Impact" in f.fixes[1].description
    assert ".driver-ready" in f.fixes[2].snippet
    assert not any("<" in c for fx in f.fixes for c in fx.commands)


def test_race_is_stronger_when_the_times_show_mofed_ready_after_the_failure():
    utc = timezone.utc
    mofed = container_log("mofed.log", MOFED_LOG, pod=MOFED, namespace=NET, times={
        1: datetime(2025, 11, 21, 11, 51, 6, tzinfo=utc), 7: datetime(2025, 11, 21, 11, 58, 39, tzinfo=utc)})
    driver = _driver_log(times={3224: datetime(2025, 11, 21, 11, 57, 2, tzinfo=utc)})
    [f] = _run(driver, mofed, *_pods())
    assert f.confidence >= 0.9 and f.facts["ready_after_failure_s"] == 97
    assert "after the failure at 11:57:02" in f.explanation


def test_symbol_version_mismatch_from_dmesg():
    peermem = container_log("peermem.log", "DRIVER_ARCH is aarch64\nmodprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument\n"
                            "failed to load nvidia-peermem module\n", pod=DRIVER, namespace=NS, container="nvidia-peermem-ctr")
    dmesg = container_log("dmesg.txt", DMESG, kind="kernel")
    [f] = _run(peermem, dmesg, *_pods())
    assert f.facts["cause"] == "symbol-mismatch"
    assert "dmesg.txt:3" in [e.cite() for e in f.evidence]
    assert "different MOFED" in f.title


def test_rdma_enabled_without_any_mofed():
    policy = K8sObject("ClusterPolicy", "gpu-cluster-policy", None, {"spec": {"driver": {"rdma": {"enabled": True}}}},
                       artifact="clusterpolicy.yaml", line=1, key_lines={"spec.driver.rdma.enabled": 9})
    release = HelmRelease("gpu-operator-1732184421", "gpu-operator", chart="gpu-operator", source="helm list", artifact="helm.txt")
    pods = [_pods()[0], Pod("coredns-7db6d8ff4d-x2x4z", "kube-system", status="Running", ready="1/1")]
    [f] = _run(_driver_log(), policy, release, *pods)
    assert f.facts["cause"] == "no-mofed"
    assert "clusterpolicy.yaml:9" in [e.cite() for e in f.evidence]
    assert f.fixes[1].commands == (
        "kubectl patch clusterpolicy/gpu-cluster-policy --type merge -p '{\"spec\":{\"driver\":{\"rdma\":{\"enabled\":false}}}}'",
        "helm upgrade gpu-operator-1732184421 nvidia/gpu-operator -n gpu-operator --reuse-values --set driver.rdma.enabled=false")
    assert "useHostMofed" in f.fixes[2].snippet


def test_no_context_still_names_the_failure_with_lower_confidence():
    [f] = _run(_driver_log())
    assert f.facts["cause"] == "undetermined" and f.confidence <= 0.6
    assert f.evidence[-1].line == 3224 or any(e.line == 3224 for e in f.evidence)


def test_silent_when_nvidia_peermem_loads():
    ok = container_log("driver.log", "Mellanox device found at 0000:01:00.0\nLoading NVIDIA Peer Memory kernel module...\n"
                       "+ modprobe -a nvidia-peermem\n+ set +o xtrace -o nounset\nStarting NVIDIA persistence daemon...\n",
                       pod=DRIVER, namespace=NS, container="nvidia-driver-ctr")
    waiting = container_log("peermem-ctr.log", "waiting for mellanox ofed and nvidia drivers to be installed\n"
                            "successfully loaded nvidia-peermem module, now waiting for signal\n", pod=DRIVER, namespace=NS)
    assert _run(ok, waiting, *_pods()) == []
