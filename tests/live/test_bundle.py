"""Bundles on disk read back exactly as the live run that wrote them; must-gathers and bug reports too."""

from __future__ import annotations

import gzip
import json
import stat

import pytest

from gpusleuth.live.bundle import write_bundle
from gpusleuth.sources import open_source
from gpusleuth.sources.live import source_from_collection
from tests.live.helpers import run_collect, serving


def _docs(src):
    return [(d.artifact, d.first_line, d.lines, d.command, d.path_hint) for d in src.documents]


@pytest.mark.parametrize("name", ["bundle.tar.gz", "bundle-dir"])
def test_bundle_reads_back_as_the_live_source(small_cluster, tmp_path, name):
    from gpusleuth.serve.faults import Fault

    with serving(small_cluster, [Fault(path="/configmaps$", status=403, message="no")]) as srv:
        col = run_collect(srv.url)
    live = source_from_collection(col, "live:test")
    out = write_bundle(col, tmp_path / name)
    disk = open_source(str(out))
    assert disk.kind == "bundle" and live.kind == "live"
    assert _docs(disk) == _docs(live) and len(disk.documents) == len(col.artifacts)
    assert [str(g) for g in disk.gaps] == [str(g) for g in live.gaps] == [str(g) for g in col.gaps] != []
    assert disk.captured_at == live.captured_at and disk.captured_at.tzinfo is not None
    log = next(d for d in disk.documents if d.artifact.endswith("/nvidia-driver-ctr.previous.log"))
    assert log.command.startswith("kubectl logs -n gpu-operator nvidia-driver-daemonset-") and log.command.endswith("--previous")
    assert log.meta["container"] == "nvidia-driver-ctr" and log.meta["previous"] is True and log.meta["node"].startswith("gpu-node-")


def test_bundle_layout_manifest_and_permissions(small_cluster, tmp_path):
    with serving(small_cluster) as srv:
        col = run_collect(srv.url)
    out = write_bundle(col, tmp_path / "b")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["schema"] == "gpusleuth/bundle/v1"
    # the capture time is on the cluster's clock (the API server's Date header): serve's snapshot is as of 2025-06-01 12:00
    assert manifest["captured_at"].startswith("2025-06-01T12:00:") and manifest["clock"]["source"] == "the API server's Date header"
    assert manifest["cluster"]["version"]["gitVersion"] and manifest["counts"]["pods"] > 0
    for rec in manifest["artifacts"]:
        path = out / rec["name"]
        assert path.stat().st_size == rec["size"]
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert rec["source"] == "api" and rec["status"] == 200 and rec["time"] and rec["command"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    with pytest.raises(FileExistsError):
        write_bundle(col, out)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".gpusleuth-")]


MG_LOG = """Using ARTIFACT_DIR=/tmp/nvidia-gpu-operator_20250926_1847

Get the operator namespaces
Using 'gpu-operator' as operator namespace

#
# ClusterPolicy
#

Mark the ClusterPolicy as missing
"""
MG_STDERR = """+ K=kubectl
+ kubectl version
++ kubectl get pods -lapp=gpu-operator -oname -A
+ OPERATOR_POD_NAME=pod/gpu-operator-687f46747c-whzzw
+ kubectl get clusterpolicies.nvidia.com -oname
error: the server doesn't have a resource type "clusterpolicies"
+ kubectl logs pod/nvidia-driver-daemonset-6hbp9 -n gpu-operator --all-containers --prefix --previous
Error from server (BadRequest): previous terminated container "nvidia-driver-ctr" in pod "nvidia-driver-daemonset-6hbp9" not found
+ kubectl logs pod/nvidia-container-toolkit-daemonset-bhqw6 -n gpu-operator --all-containers --prefix
Error from server (Forbidden): pods "nvidia-container-toolkit-daemonset-bhqw6" is forbidden: User "support" cannot get resource "pods/log" in API group "" in the namespace "gpu-operator"
+ kubectl describe pod/nvidia-container-toolkit-daemonset-bhqw6 -n gpu-operator
"""
STATUS = """NAME                                       READY   STATUS                  RESTARTS       AGE   IP            NODE            NOMINATED NODE   READINESS GATES
nvidia-driver-daemonset-6hbp9              1/1     Running                 0              27m   10.1.0.12     192-18-132-31   <none>           <none>
nvidia-container-toolkit-daemonset-bhqw6   0/1     Init:CrashLoopBackOff   9 (65s ago)    27m   10.1.0.13     192-18-132-31   <none>           <none>
"""
DRIVER_LOG = """[pod/nvidia-driver-daemonset-6hbp9/nvidia-driver-ctr] + echo -e 'Starting NVIDIA driver'
[pod/nvidia-driver-daemonset-6hbp9/nvidia-driver-ctr] Starting NVIDIA driver
"""
BUG_REPORT = """____________________________________________

Start of NVIDIA bug report log file.  Please include this file, along
with a detailed description of your problem.

nvidia-bug-report.sh Version: 35308101

Date: Fri Sep 26 18:47:47 UTC 2025
uname: Linux 192-18-132-31 6.8.0-45-generic #45-Ubuntu SMP x86_64 GNU/Linux

____________________________________________

*** /proc/modules
*** ls: -r--r--r-- 1 root root 0 2025-09-26 18:47:47.000000000 +0000 /proc/modules
nvidia_uvm 1769472 0 - Live 0x0000000000000000 (POE)
nvidia 60891136 1 nvidia_uvm, Live 0x0000000000000000 (POE)

____________________________________________

*** /etc/X11/xorg.conf does not exist

____________________________________________

dmesg:

[   12.345678] nvidia: loading out-of-tree module taints kernel.
[  101.200001] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.

____________________________________________

/usr/bin/nvidia-smi --query

==============NVSMI LOG==============

Driver Version                            : 550.90.07
CUDA Version                              : 12.4

____________________________________________

/usr/bin/lsusb

Bus 001 Device 001: ID 1d6b:0002 Linux Foundation 2.0 root hub
"""


def _must_gather(root):
    files = {
        "must-gather.log": MG_LOG, "must-gather.stderr.log": MG_STDERR, "cluster_policy.missing": "",
        "gpu_operand_pods.status": STATUS, "gpu_operator_pod.status": "NAME   READY\npod/gpu-operator-687f46747c-whzzw   1/1\n",
        "gpu_operand_pod_nvidia-driver-daemonset-6hbp9.log": DRIVER_LOG,
        "gpu_operand_pod_nvidia-driver-daemonset-6hbp9.previous.log": "",
        "gpu_operand_pod_nvidia-container-toolkit-daemonset-bhqw6.log": "",
        "gpu_operand_pod_nvidia-container-toolkit-daemonset-bhqw6.descr": "",
        "gpu_operand_ds.status": "",
        "network_operand_pods.status": "NAME                                  READY   STATUS    RESTARTS   AGE\n"
                                       "mofed-rhcos4.18-554bdbd7cf-ds-7qh2l   2/2     Running   0          41d\n",
        "gpu_operand_pod_images.txt": "\nnvidia-driver-daemonset-6hbp9:\tnvcr.io/nvidia/driver:550.90.07 ",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    (root / "nvidia-bug-report_192-18-132-31.log.gz").write_bytes(gzip.compress(BUG_REPORT.encode()))
    return root


def test_must_gather_files_get_their_commands_and_failures_become_gaps(tmp_path):
    src = open_source(str(_must_gather(tmp_path)))
    assert src.kind == "must-gather"
    by = {(d.artifact, d.first_line): d for d in src.documents}
    assert by[("gpu_operand_pods.status", 1)].command == "kubectl get pods -o wide -n gpu-operator"
    assert by[("network_operand_pods.status", 1)].command == "kubectl get pods -o wide"  # the Network Operator's namespace is not written down
    assert not any(d.artifact == "gpu_operand_pod_images.txt" for d in src.documents)  # what gpu_operand_pods.yaml holds
    log = by[("gpu_operand_pod_nvidia-driver-daemonset-6hbp9.log", 1)]
    assert log.command == "kubectl logs pod/nvidia-driver-daemonset-6hbp9 -n gpu-operator --all-containers --prefix"
    assert log.lines[1].startswith("[pod/nvidia-driver-daemonset-6hbp9/nvidia-driver-ctr] ")  # not split at the `+ echo` trace
    gaps = [str(g) for g in src.gaps]
    assert "cluster_policy.missing: must-gather found no ClusterPolicy (clusterpolicies.nvidia.com) in the cluster" in gaps
    assert any(g.startswith("must-gather.stderr.log: error: the server doesn't have a resource type") for g in gaps)
    forbidden = [g for g in gaps if "cannot get resource \"pods/log\"" in g]
    assert len(forbidden) == 1 and "Forbidden" in forbidden[0]
    assert "gpu_operand_pod_nvidia-container-toolkit-daemonset-bhqw6.descr: empty: the kubectl call that writes it printed nothing (failed, or no such object)" in gaps
    assert "gpu_operand_ds.status: empty: the kubectl call that writes it printed nothing (failed, or no such object)" in gaps
    # a missing previous instance is no gap, and the forbidden log is reported once (by its error), not twice
    assert not any("6hbp9.previous.log" in g for g in gaps)
    assert not any(g.startswith("gpu_operand_pod_nvidia-container-toolkit-daemonset-bhqw6.log") for g in gaps)
    assert not any(d.artifact.startswith("must-gather") for d in src.documents)


def test_bug_report_sections_reach_their_parsers_with_line_numbers(tmp_path):
    src = open_source(str(_must_gather(tmp_path)))
    bug = [d for d in src.documents if d.artifact == "nvidia-bug-report_192-18-132-31.log"]
    assert [(d.command, d.path_hint) for d in bug] == [("cat /proc/modules", "/proc/modules"), ("dmesg", None), ("nvidia-smi --query", None)]
    modules, dmesg, smi = bug
    assert modules.first_line == 15 and modules.lines[0].startswith("nvidia_uvm ")
    assert dmesg.lines[-1].endswith("GPU has fallen off the bus.") and dmesg.evidence(len(dmesg.lines) - 1).line == 27 and dmesg.first_line == 26
    assert smi.lines[0].startswith("==============NVSMI LOG") and smi.lines[-1].startswith("CUDA Version") and all(d.meta["node"] == "192-18-132-31" for d in bug)


def test_a_folder_that_only_looks_like_a_bundle_is_read_as_loose_files(tmp_path):
    (tmp_path / "manifest.json").write_text('{"name": "some other tool"}')
    (tmp_path / "pods.txt").write_text("$ kubectl get pods\nNAME READY STATUS\nx 1/1 Running\n")
    src = open_source(str(tmp_path))
    assert src.kind == "directory" and src.documents[0].command == "kubectl get pods"
