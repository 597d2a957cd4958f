"""The seed 000-002 incident as model objects (what the kubectl and log parsers produce), for tests that
must not depend on parser branches: one crashing driver pod, seven pods stuck in Init, one exporter
running with errors, the Network Operator's MOFED pod healthy."""

from __future__ import annotations

from gpusleuth.facts import Facts
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.k8s import ContainerStatus, Pod
from gpusleuth.model.logs import ContainerLog, LogLine

NS = "nvidia-gpu-operator"
DRIVER = "nvidia-driver-daemonset-418.94.202510230424-0-564xm"
PODS_TXT = """\
NAME                                                  READY   STATUS             RESTARTS        AGE
nvidia-driver-daemonset-418.94.202510230424-0-564xm   1/4     CrashLoopBackOff   64 (4m7s ago)   3h28m
nvidia-container-toolkit-daemonset-sxfkr              0/1     Init:0/1           0               3h28m
gpu-feature-discovery-hnr8w                           0/1     Init:0/1           0               3h28m
nvidia-device-plugin-daemonset-v46gq                  0/1     Init:0/1           0               3h28m
nvidia-dcgm-exporter-n6jqs                            0/1     Init:0/2           0               3h28m
nvidia-dcgm-m25d9                                     0/1     Init:0/1           0               3h28m
nvidia-mig-manager-w5799                              0/1     Init:0/1           0               3h28m
nvidia-operator-validator-6fhjb                       0/1     Init:0/5           0               3h28m
nvidia-node-status-exporter-cd78t                     1/1     Running            1               3h28m
"""

def pods(artifact: str = "pods.txt", node: str | None = None) -> list[Pod]:
    out = []
    for i, row in enumerate(PODS_TXT.splitlines()[1:], start=2):
        name, ready, status, restarts = row.split()[:4]
        out.append(Pod(name, NS, node=node, status=status, ready=ready, restarts=int(restarts), evidence=Evidence(artifact, i, row.strip())))
    out.append(Pod("mofed-rhcos4.18-554bdbd7cf-ds-djxv9", "nvidia-network-operator", node=node, status="Running", ready="2/2", restarts=0,
                   evidence=Evidence("netop-pods.txt", 2, "mofed-rhcos4.18-554bdbd7cf-ds-djxv9   2/2   Running   0   2d22h")))
    return out


def _log(artifact, pod, container, rows, previous=False):
    lines = tuple(LogLine(artifact, n, text, text, level=level, pod=None, container=container) for n, text, level in rows)
    return ContainerLog(artifact, lines, pod=pod, namespace=NS, container=container, previous=previous)


def logs() -> list[ContainerLog]:
    driver = _log("driver.log", DRIVER, "nvidia-driver-ctr", [
        (3222, "Loading NVIDIA Peer Memory kernel module...", None),
        (3223, "+ modprobe -a nvidia-peermem", None),
        (3224, "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument", "error"),
        (3225, "+ set +o xtrace -o nounset", None),
        (3226, "Stopping NVIDIA persistence daemon...", None),
    ], previous=True)
    exporter = _log("nse.log", "nvidia-node-status-exporter-cd78t", "nvidia-node-status-exporter", [
        (1, 'time="2025-11-21T12:00:01Z" level=info msg="metrics: StatusFile: watching driver-ready"', "info"),
        (2, 'time="2025-11-21T12:00:01Z" level=error msg="failed to validate driver: error checking driver container status: exit status 1"', "error"),
        (3, 'time="2025-11-21T12:01:01Z" level=error msg="failed to validate driver: error checking driver container status: exit status 1"', "error"),
        (4, 'time="2025-11-21T12:02:01Z" level=error msg="failed to validate driver: error checking driver container status: exit status 1"', "error"),
    ])
    gfd = _log("gfd-init.log", "gpu-feature-discovery-hnr8w", "toolkit-validation", [
        (1, "waiting for nvidia container stack to be setup", None),
        (2, "waiting for nvidia container stack to be setup", None),
    ])
    return [driver, exporter, gfd]


def facts(node: str | None = None) -> Facts:
    """Pods and logs; the Logs view is built by the real combiner from knowledge/signatures.toml."""
    f = Facts("seed model")
    for p in pods(node=node):
        f.add(p)
    for log in logs():
        f.add(log)
    return f
