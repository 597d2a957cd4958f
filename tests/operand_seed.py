"""The seed 000-002 incident as the artifacts a user pastes (pod listings, the crashed driver container's log,
the node-status-exporter's and a blocked init container's logs), parsed by the real parsers: one crashing
driver pod, seven pods stuck in Init, one exporter running with errors, the Network Operator's MOFED healthy."""

from __future__ import annotations

import tempfile
from pathlib import Path

from gpusleuth.analysis.diagnose import build_facts
from gpusleuth.facts import Facts
from gpusleuth.model.k8s import Pod
from gpusleuth.model.logs import ContainerLog
from gpusleuth.sources.loose import read_directory

NS = "nvidia-gpu-operator"
NET = "nvidia-network-operator"
DRIVER = "nvidia-driver-daemonset-418.94.202510230424-0-564xm"
MOFED = "mofed-rhcos4.18-554bdbd7cf-ds-djxv9"

PODS = f"""\
$ oc get pods -n {NS}
NAME                                                  READY   STATUS             RESTARTS        AGE
{DRIVER}   1/4     CrashLoopBackOff   64 (4m7s ago)   3h28m
nvidia-container-toolkit-daemonset-sxfkr              0/1     Init:0/1           0               3h28m
gpu-feature-discovery-hnr8w                           0/1     Init:0/1           0               3h28m
nvidia-device-plugin-daemonset-v46gq                  0/1     Init:0/1           0               3h28m
nvidia-dcgm-exporter-n6jqs                            0/1     Init:0/2           0               3h28m
nvidia-dcgm-m25d9                                     0/1     Init:0/1           0               3h28m
nvidia-mig-manager-w5799                              0/1     Init:0/1           0               3h28m
nvidia-operator-validator-6fhjb                       0/1     Init:0/5           0               3h28m
nvidia-node-status-exporter-cd78t                     1/1     Running            1               3h28m
"""
# line of each pod's row in pods.txt
ROW = {line.split()[0]: i for i, line in enumerate(PODS.splitlines(), start=1) if line.startswith(("nvidia-", "gpu-"))}

NETOP_PODS = f"""\
$ oc get pods -n {NET}
NAME                                  READY   STATUS    RESTARTS   AGE
{MOFED}   2/2     Running   0          2d22h
rdma-shared-dp-ds-7xk4p               1/1     Running   0          2d22h
"""

DRIVER_LOG = f"""\
$ oc logs --previous {DRIVER} -n {NS} -c nvidia-driver-ctr
Starting NVIDIA persistence daemon...
Loading ipmi and i2c_core kernel modules...
+ modprobe -a i2c_core ipmi_msghandler ipmi_devintf
Loading NVIDIA driver kernel modules...
+ modprobe nvidia NVreg_CoherentGPUMemoryMode=driver
+ modprobe nvidia-uvm
+ modprobe nvidia-modeset
+ set +o xtrace -o nounset
Mellanox device found at 0000:01:00.0
Loading NVIDIA Peer Memory kernel module...
+ modprobe -a nvidia-peermem
modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument
+ set +o xtrace -o nounset
Stopping NVIDIA persistence daemon...
Unloading NVIDIA driver kernel modules...
Unmounting NVIDIA driver rootfs...
"""
ERROR_LINE = DRIVER_LOG.splitlines().index("modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument") + 1

NSE_LOG = f"""\
$ oc logs nvidia-node-status-exporter-cd78t -n {NS}
time="2025-11-21T12:00:01Z" level=info msg="metrics: StatusFile: watching driver-ready"
time="2025-11-21T12:00:01Z" level=error msg="failed to validate driver: error checking driver container status: exit status 1"
time="2025-11-21T12:01:01Z" level=error msg="failed to validate driver: error checking driver container status: exit status 1"
time="2025-11-21T12:02:01Z" level=error msg="failed to validate driver: error checking driver container status: exit status 1"
"""

GFD_INIT_LOG = f"""\
$ oc logs gpu-feature-discovery-hnr8w -n {NS} -c toolkit-validation
waiting for nvidia container stack to be setup
waiting for nvidia container stack to be setup
"""

FILES = {
    "pods.txt": PODS,
    "netop-pods.txt": NETOP_PODS,
    "driver.log": DRIVER_LOG,
    "nse.log": NSE_LOG,
    "gfd-init.log": GFD_INIT_LOG,
}


def facts_from(files: dict[str, str]) -> Facts:
    """Facts from pasted text files, through the real sources and parsers."""
    root = Path(tempfile.mkdtemp(prefix="gpusleuth-seed-"))
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return build_facts(read_directory(root))


def facts(**replace_files: str) -> Facts:
    return facts_from({**FILES, **replace_files})


def pods() -> list[Pod]:
    """The pods as the kubectl parser reads them (for tests that change one)."""
    return facts_from({"pods.txt": PODS, "netop-pods.txt": NETOP_PODS}).all(Pod)


def logs() -> list[ContainerLog]:
    return facts_from({k: v for k, v in FILES.items() if k.endswith(".log")}).all(ContainerLog)
