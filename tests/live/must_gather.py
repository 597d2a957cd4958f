"""The kubectl calls of NVIDIA's GPU Operator must-gather script (NVIDIA/gpu-operator hack/must-gather.sh),
in its order and with its flags, writing its files: a client of `serve` as engineers really run one.

Transcribed from the script as of commit a22dbf6 (Aug 2026). Left out: the OpenShift `clusterversion`,
KubeVirt and `machines` steps (they find nothing on a snapshot without those resources, as on most
clusters) and the `kubectl exec`/`kubectl cp` steps (nvidia-bug-report.sh, nvidia-smi, lsof inside the
driver pod), which need a running container: serve answers them with an error, as the script tolerates.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

GPU_PCI_LABELS = ("feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/pci-0302_10de.present",
                  "feature.node.kubernetes.io/pci-0300_10de.present")


@dataclass
class Run:
    out: Path
    kubectl: list[str]
    calls: list[tuple[list[str], int]] = field(default_factory=list)  # (argv, exit status)
    stderr: list[str] = field(default_factory=list)
    stopped: str | None = None  # the script's FATAL line, when it stops early
    namespace: str | None = None
    operator_pod: str | None = None
    operand_pods: list[str] = field(default_factory=list)  # pods whose logs and describe it saved
    driver_pods: list[str] = field(default_factory=list)

    def k(self, *args: str, to: str | None = None, append: bool = False) -> str:
        proc = subprocess.run(self.kubectl + list(args), capture_output=True, text=True, timeout=60)
        self.calls.append((list(args), proc.returncode))
        if proc.stderr:
            self.stderr.append(proc.stderr)
        if to is not None:
            with open(self.out / to, "a" if append else "w") as fh:
                fh.write(proc.stdout)
        return proc.stdout


def _labels_file(text: str) -> str:
    """The script's sed/tr pipeline over `-ojsonpath={.metadata.labels}`: one `- key=value` a line."""
    text = text.replace(",", ",- ").replace(",", "\n")
    text = re.sub(r'\{"', "- ", text, count=1).replace(":", "=").replace('"', "")
    return text.replace("}", "\n", 1)


def must_gather(kubectl: list[str], out: Path) -> Run:
    out.mkdir(parents=True, exist_ok=True)
    r = Run(out, kubectl)
    log = open(out / "must-gather.log", "w")
    log.write("Get the operator namespaces\n")
    operator_pod = r.k("get", "pods", "-lapp=gpu-operator", "-oname", "-A").strip()
    if not operator_pod:
        r.stopped = "FATAL: could not find the GPU Operator Pod ..."
        log.write(r.stopped + "\n")
        return r
    r.operator_pod = operator_pod
    r.namespace = ns = r.k("get", "pods", "-lapp=gpu-operator", "-A", "-ojsonpath={.items[].metadata.namespace}", "--ignore-not-found")
    log.write(f"Using '{ns}' as operator namespace\n")

    policy = r.k("get", "clusterpolicies.nvidia.com", "-oname").strip()
    if policy:
        r.k("get", "-oyaml", policy, to="cluster_policy.yaml")
    else:
        (out / "cluster_policy.missing").touch()
    if r.k("get", "nvidiadrivers.nvidia.com", "-A", "-oname").strip():
        r.k("get", "nvidiadrivers.nvidia.com", "-A", "-oyaml", to="nvidiadrivers.yaml")

    nodes: list[str] = []
    for label in GPU_PCI_LABELS:
        nodes += r.k("get", "nodes", f"-l{label}", "-oname").split()
    if not nodes:
        r.stopped = "FATAL: could not find nodes with NVIDIA PCI labels"
        log.write(r.stopped + "\n")
        return r
    with open(out / "gpu_nodes.labels", "a") as fh:
        for node in nodes:
            fh.write(node.split("/", 1)[1] + "\n")
            fh.write(_labels_file(r.k("get", node, "-ojsonpath={.metadata.labels}")) + "\n")
    r.k("get", "nodes", "-l", "nvidia.com/gpu.present=true", "-o", "wide", to="gpu_nodes.status")
    r.k("describe", "nodes", "-l", "nvidia.com/gpu.present=true", to="gpu_nodes.descr")

    r.k("get", operator_pod, "-owide", "-n", ns, to="gpu_operator_pod.status")
    r.k("get", operator_pod, "-oyaml", "-n", ns, to="gpu_operator_pod.yaml")
    r.k("logs", operator_pod, "-n", ns, "--timestamps", to="gpu_operator_pod.log")
    r.k("logs", operator_pod, "-n", ns, "--timestamps", "--previous", to="gpu_operator_pod.previous.log")

    r.k("get", "pods", "-owide", "-n", ns, to="gpu_operand_pods.status")
    r.k("get", "pods", "-oyaml", "-n", ns, to="gpu_operand_pods.yaml")
    r.k("get", "pods", "-n", ns, "-o=jsonpath={range .items[*]}{\"\\n\"}{.metadata.name}{\":\\t\"}{range .spec.containers[*]}{.image}{\" \"}{end}{end}",
        to="gpu_operand_pod_images.txt")
    for pod in r.k("get", "pods", "-n", ns, "-oname").split():
        if not re.search(r"(nvidia|gpu)", r.k("get", pod, "-n", ns, "-ojsonpath={.metadata.labels}")):
            log.write(f"Skipping {pod}, not a NVIDA/GPU Pod ...\n")
            continue
        if pod == operator_pod:
            continue
        name = pod.split("/", 1)[1]
        r.operand_pods.append(name)
        r.k("logs", pod, "-n", ns, "--all-containers", "--prefix", "--timestamps", to=f"gpu_operand_pod_{name}.log")
        r.k("logs", pod, "-n", ns, "--all-containers", "--prefix", "--timestamps", "--previous", to=f"gpu_operand_pod_{name}.previous.log")
        r.k("describe", pod, "-n", ns, to=f"gpu_operand_pod_{name}.descr")

    r.k("get", "ds", "-n", ns, to="gpu_operand_ds.status")
    r.k("get", "ds", "-oyaml", "-n", ns, to="gpu_operand_ds.yaml")
    for ds in r.k("get", "ds", "-n", ns, "-oname").split():
        if not re.search(r"(nvidia|gpu)", r.k("get", ds, "-n", ns, "-ojsonpath={.metadata.labels}")):
            log.write(f"Skipping {ds}, not a NVIDA/GPU DaemonSet ...\n")
            continue
        r.k("describe", ds, "-n", ns, to=f"gpu_operand_ds_{ds.split('/', 1)[1]}.descr")

    drivers: set[str] = set()
    for sel in ("-lopenshift.driver-toolkit", "-lapp.kubernetes.io/component=nvidia-driver", "-lapp=nvidia-vgpu-manager-daemonset"):
        drivers.update(r.k("get", "pods", sel, "-oname", "-n", ns).split())
    for pod in sorted(drivers):
        node = r.k("get", pod, "-ojsonpath={.spec.nodeName}", "-n", ns)
        r.driver_pods.append(f"{pod}@{node}")
    log.write("# All done!\n")
    log.close()
    (out / "must-gather.stderr.log").write_text("".join(r.stderr))
    return r

