"""Kernel-driver checks read from the node's own state (HostFacts: lsmod, uname, /etc/os-release, marker
files), against what Kubernetes and the GPU Operator claim about the node."""

from __future__ import annotations

import re
from functools import cache
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.operator_state import helm_set
from gpusleuth.facts import Cluster, Configuration
from gpusleuth.facts.configuration import truthy
from gpusleuth.facts.host import HostFacts, NodeHost
from gpusleuth.facts.operands import spec_for
from gpusleuth.knowledge import table
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.k8s import Pod

DRIVER = "nvidia-driver-daemonset"
DRIVER_READY = ("/run/nvidia/validations/.driver-ctr-ready", "/run/nvidia/validations/driver-ready")
_UBUNTU_KERNEL = re.compile(r"^(?P<series>\d+\.\d+)\.\d+-\d+-(?P<flavor>[a-z][a-z0-9-]*)$")


def _ns(ns: str | None) -> str:
    return f" -n {ns}" if ns else " -A"


def _driver_pods(cluster: Cluster | None, node: str | None) -> list[Pod]:
    pods = [p for p in (cluster.pods if cluster else []) if (s := spec_for(p)) is not None and s.name == DRIVER]
    if node is not None:
        return [p for p in pods if p.node == node]
    return pods if len(pods) == 1 else []


def _ready(p: Pod) -> bool:
    have, _, want = (p.ready or "").partition("/")
    return (p.status or p.phase) == "Running" and bool(have) and have == want


# ------------------------------------------------------------------------------------------------ KD120


@check("KD120", "nvidia-module-not-loaded-while-driver-ready")
def nvidia_module_not_loaded(host: HostFacts, cluster: Cluster | None = None) -> Iterable[Hit]:
    """The node's module listing has no nvidia module, while its driver pod is Running and ready or the driver-ready marker exists.

    What it does: On each node whose lsmod (or /proc/modules) covers `nvidia` and does not list it, looks for
    what claims the driver is up: the GPU Operator driver pod on that node Running with all containers ready,
    or /run/nvidia/validations/.driver-ctr-ready or driver-ready present. Silent when nouveau is loaded
    instead (KD101 explains that) and when nvidia-smi read the driver on the node.
    Why it matters: the driver container writes .driver-ctr-ready and the validator writes driver-ready only
    after nvidia.ko loaded and nvidia-smi worked, so the module was unloaded since: a driver container that
    stops unloads the modules on its way out (its signal trap runs _shutdown) while the validator's
    driver-ready stays; an rmmod on the host, or an upgrade that stopped half-way, do the same. GPU pods on
    the node then fail to start or lose their devices while the operator still counts the driver as ready.
    How to fix: find who unloaded it in the kernel log (`dmesg | grep -i nvidia`), then restart the driver
    pod so the driver container loads the modules again and the validators run afresh.
    References: https://github.com/NVIDIA/gpu-operator/issues/416; https://github.com/NVIDIA/gpu-operator/issues/129
    """
    for h in host.nodes:
        if h.loaded("nvidia") is not False or h.loaded("nouveau") is True or h.smi_driver:
            continue
        pods = [p for p in _driver_pods(cluster, h.node) if _ready(p)]
        markers = [m for p in DRIVER_READY if (m := h.path(p)) is not None and m.exists]
        if not pods and not markers:
            continue
        claims = [f"driver pod {p.name} is {p.status} {p.ready}" for p in pods] + [f"{m.path} exists" for m in markers]
        pod = pods[0] if pods else None
        where = f"on {h.node}" if h.node else "on the node"
        delete = (f"kubectl delete pod {pod.name}{_ns(pod.namespace)}" if pod else
                  f"kubectl delete pod{_ns(None)} -l app=nvidia-driver-daemonset --field-selector spec.nodeName={h.node}" if h.node else None)
        fixes = [Fix(FixKind.IMMEDIATE, "Find when and how the module was unloaded, then restart the driver pod so it loads the modules "
                     "again" + ("" if pod else " (the driver pod's name is not in the artifacts; the selector finds it)") + ".",
                     tuple(c for c in ("dmesg -T | grep -i -E 'nvidia|NVRM'",
                                       f"kubectl logs {pod.name}{_ns(pod.namespace)} -c nvidia-driver-ctr" if pod else None, delete) if c))]
        yield Hit(
            title=f"The NVIDIA kernel module is not loaded {where} although {claims[0]}",
            explanation=(f"The node's {h.modules.source} lists no nvidia module, yet {'; '.join(claims)}. The driver container and the "
                         "validator only report ready after nvidia.ko loaded and nvidia-smi worked, so the module was unloaded since: "
                         "GPU pods on this node cannot get their devices while the operator still counts the driver as ready."),
            severity=Severity.CRITICAL,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in (h.modules.evidence, *(p.evidence for p in pods), *(m.evidence for m in markers)) if e)),
            fixes=tuple(fixes),
            node=h.node,
            component=DRIVER,
            confidence=0.75 if pods and markers else 0.65,
            facts={"pods": [p.name for p in pods], "markers": [m.path for m in markers]},
        )


# ------------------------------------------------------------------------------------------------ KD121


@cache
def _precompiled() -> tuple[dict[str, str], tuple[str, ...], tuple[str, ...], re.Pattern]:
    t = table("failure_classes")["precompiled_drivers"]
    return {r["os"]: r["kernel"] for r in t["os"]}, tuple(t["flavors"]), tuple(t["arch"]), re.compile(t["tag"])


def _precompiled_in_use(config: Configuration | None, cluster: Cluster | None, node: str | None) -> tuple[str, Evidence | None] | None:
    """Why the node gets a precompiled driver: driver.usePrecompiled, or the driver pod's image tag."""
    setting = config.setting("driver.usePrecompiled") if config else None
    if setting is not None and truthy(setting.value) is True:
        return f"driver.usePrecompiled is true ({setting.source})", setting.evidence
    tag_rx = _precompiled()[3]
    for p in _driver_pods(cluster, node):
        for image in p.images:
            if tag_rx.match(image.rpartition(":")[2]):
                return f"the driver pod {p.name} runs the precompiled image {image}", p.evidence
    return None


def _unsupported(h: NodeHost) -> tuple[str, list[Evidence]] | None:
    """Why no precompiled image exists for this node's OS, kernel and architecture; None when one should."""
    series_of, flavors, arches, _ = _precompiled()
    kernel = h.running_kernel()
    if h.os is None or h.os.tag is None or kernel is None:
        return None
    release, kernel_ev = kernel
    evidence = [h.os.evidence, kernel_ev]
    arch = h.kernel.arch if h.kernel is not None else None
    if arch and arch not in arches:
        return f"the node is {arch}; precompiled images are built for {', '.join(arches)} only", evidence
    if h.os.tag not in series_of:
        return f"the node runs {h.os.pretty_name or h.os.tag} ({h.os.tag}); precompiled images exist for {', '.join(series_of)} only", evidence
    m = _UBUNTU_KERNEL.match(release)
    series = series_of[h.os.tag]
    if m is None or m.group("series") != series:
        return f"the node runs kernel {release}; precompiled images for {h.os.tag} are built for the {series} kernel series only", evidence
    if m.group("flavor") not in flavors:
        return (f"the node runs the {m.group('flavor')} kernel flavor ({release}); precompiled images exist for the "
                f"{', '.join(flavors)} flavors only"), evidence
    return None


@check("KD121", "precompiled-driver-unavailable-for-node")
def precompiled_driver_unavailable(host: HostFacts, config: Configuration | None = None, cluster: Cluster | None = None) -> Iterable[Hit]:
    """The GPU Operator is set to use precompiled drivers, and NVIDIA builds none for the node's OS, kernel or architecture.

    What it does: When driver.usePrecompiled is true (ClusterPolicy or Helm values) or a driver pod runs a
    precompiled image (nvcr.io/nvidia/driver:<branch>-<kernel>-<os>), compares each node's /etc/os-release
    and running kernel (uname -r, or the Node's kernelVersion) with the precompiled images NVIDIA publishes
    (knowledge/failure_classes.toml [precompiled_drivers]: Ubuntu 22.04 with the 5.15 kernel series, 24.04
    with 6.8; generic, nvidia, azure, aws and oracle flavors; x86_64).
    Why it matters: the operator asks for an image named after the node's kernel; for any other OS, kernel
    series (an Ubuntu HWE kernel), flavor or architecture that image does not exist, so the driver pod
    stays in ImagePullBackOff and every GPU operand on the node waits for it.
    How to fix: turn usePrecompiled off so the driver container builds the module on the node (it then needs
    kernel headers), build and push a precompiled image for this kernel yourself, or run a kernel NVIDIA
    builds images for.
    References: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/precompiled-drivers.html; https://github.com/NVIDIA/gpu-operator/issues/1203
    """
    for h in host.nodes:
        use = _precompiled_in_use(config, cluster, h.node)
        why = _unsupported(h) if use else None
        if why is None:
            continue
        reason, evidence = why
        cmds = helm_set(config, "driver.usePrecompiled=false")
        arch = f" {h.kernel.arch}" if h.kernel is not None and h.kernel.arch else ""
        yield Hit(
            title=f"No precompiled NVIDIA driver image exists for {h.node or 'the node'}: {h.os.tag}{arch} with kernel {h.running_kernel()[0]}",
            explanation=(f"{use[0]}, so the GPU Operator pulls nvcr.io/nvidia/driver:<branch>-<kernel release>-<os> for each node; "
                         f"{reason}. The image does not exist, so the driver pod cannot start and everything that waits for the driver "
                         "stays blocked (OP102 shows the failing pull when the artifacts have it)."),
            severity=Severity.CRITICAL,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in (use[1], *evidence) if e)),
            fixes=(
                Fix(FixKind.WORKAROUND, "Let the driver container compile the module on the node instead (it needs the kernel headers "
                    "from the OS repositories)." + ("" if cmds else " The GPU Operator's Helm release is not in the artifacts: set "
                                                    "driver.usePrecompiled=false in its values or the ClusterPolicy."),
                    cmds, snippet="driver:\n  usePrecompiled: false\n", snippet_language="yaml"),
                Fix(FixKind.PERMANENT, "Build a precompiled driver image for this kernel and push it to your registry (NVIDIA's "
                    "gpu-driver-container precompiled Dockerfile), or move the node to an OS and kernel NVIDIA builds images for."),
            ),
            node=h.node,
            component=DRIVER,
            confidence=0.8,
            facts={"os": h.os.tag if h.os else None, "kernel": h.running_kernel()[0] if h.running_kernel() else None},
        )
