"""``VersionsInUse``: which version of each GPU-stack component the artifacts show, and where they say so;
the platform (K3s, RKE2, OpenShift, a cloud's node pool ...), the container runtime, the OS and the GPU
products beside them. What the known issues (knowledge/known_issues.toml) and the incidents seen before
(knowledge/incidents/) are compared against.

Read from: image tags of pods (`kubectl describe`, pod YAML), the GPU Operator's Helm release (chart version)
and its ClusterPolicy / Helm values (`driver.version`, `toolkit.version`, ...), nvidia-smi / NVML, the NVRM
line of /proc/driver/nvidia/version, `uname -r`, the Node objects' nodeInfo (kubelet, runtime, kernel, OS)
and containerd's own version. A version is a fact with evidence; nothing is guessed from a default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.model.evidence import Evidence

# image name (last path element) -> component; dcgm-exporter tags carry DCGM's version first
IMAGES = {
    "gpu-operator": "gpu-operator", "k8s-device-plugin": "device-plugin", "container-toolkit": "container-toolkit",
    "nvidia-container-toolkit": "container-toolkit", "driver": "driver", "dcgm-exporter": "dcgm-exporter",
    "dcgm": "dcgm", "gpu-feature-discovery": "gfd", "node-feature-discovery": "nfd", "k8s-mig-manager": "mig-manager",
    "k8s-driver-manager": "driver-manager", "network-operator": "network-operator", "doca-driver": "mofed",
    "mofed": "mofed", "k8s-dra-driver": "dra-driver", "k8s-dra-driver-gpu": "dra-driver",
}
# ClusterPolicy / Helm value paths -> component
POLICY = {"driver.version": "driver", "toolkit.version": "container-toolkit", "devicePlugin.version": "device-plugin",
          "dcgmExporter.version": "dcgm-exporter", "gfd.version": "gfd", "migManager.version": "mig-manager",
          "dcgm.version": "dcgm", "operator.version": "gpu-operator"}
_VERSION = re.compile(r"^v?(\d+(?:\.\d+){1,3})")
_PLATFORM_KUBELET = (("+k3s", "k3s"), ("+rke2", "rke2"), ("+k0s", "k0s"), ("-eks-", "eks"), ("-gke.", "gke"))
_PLATFORM_PATH = (("/var/lib/rancher/k3s", "k3s"), ("/var/lib/rancher/rke2", "rke2"), ("/var/snap/microk8s", "microk8s"),
                  ("/etc/k0s", "k0s"), ("/run/k0s", "k0s"))
_PLATFORM_LABEL = (("node.openshift.io/", "openshift"), ("eks.amazonaws.com/", "eks"), ("cloud.google.com/gke-", "gke"),
                   ("kubernetes.azure.com/", "aks"), ("oci.oraclecloud.com/", "oke"), ("microk8s.io/", "microk8s"),
                   ("node.k0sproject.io/", "k0s"))


@dataclass(frozen=True, slots=True)
class InUse:
    component: str  # a knowledge/incidents COMPONENTS name
    version: str
    source: str  # image | Helm chart | ClusterPolicy | nvidia-smi | NVRM | uname | node status | containerd
    evidence: Evidence | None = None
    node: str | None = None


@dataclass(frozen=True)
class VersionsInUse:
    versions: tuple[InUse, ...]
    platforms: tuple[tuple[str, Evidence | None], ...] = ()
    runtimes: tuple[tuple[str, Evidence | None], ...] = ()
    gpus: tuple[tuple[str, Evidence | None], ...] = ()  # GPU product names
    os: tuple[tuple[str, Evidence | None], ...] = ()

    def of(self, component: str) -> list[InUse]:
        return [v for v in self.versions if v.component == component]

    def components(self) -> dict[str, list[InUse]]:
        out: dict[str, list[InUse]] = {}
        for v in self.versions:
            out.setdefault(v.component, []).append(v)
        return out

    def names(self, kind: str) -> set[str]:
        return {n.lower() for n, _ in getattr(self, kind)}


def image_versions(image: str) -> list[tuple[str, str]]:
    """"nvcr.io/nvidia/k8s-device-plugin:v0.14.1" -> [("device-plugin", "0.14.1")]; a dcgm-exporter tag
    "3.3.5-3.4.0-ubuntu22.04" names DCGM 3.3.5 and the exporter 3.4.0."""
    if "@" in image:
        image = image.split("@", 1)[0]
    name, _, tag = image.rpartition(":")
    if not name or "/" in tag:
        return []
    comp = IMAGES.get(name.rsplit("/", 1)[-1])
    m = _VERSION.match(tag)
    if comp is None or m is None:
        return []
    if comp == "dcgm-exporter":
        parts = re.match(r"^v?(\d+\.\d+\.\d+)-(\d+\.\d+\.\d+)", tag)
        if parts:
            return [("dcgm", parts.group(1)), ("dcgm-exporter", parts.group(2))]
    return [(comp, m.group(1))]


def _add(out: list[InUse], seen: set, item: InUse) -> None:
    key = (item.component, item.version, item.node)
    if key not in seen:
        seen.add(key)
        out.append(item)


@combiner(VersionsInUse)
def build_versions(facts: Facts) -> VersionsInUse:
    from gpusleuth.facts.cluster import Cluster
    from gpusleuth.facts.configuration import Configuration
    from gpusleuth.facts.gpus import GpuInventory
    from gpusleuth.model.host import DriverVersion, KernelRelease, OsRelease
    from gpusleuth.model.runtime import ContainerdConfig, ContainerdVersion, HelmRelease, HostPath

    out: list[InUse] = []
    seen: set = set()
    platforms: dict[str, Evidence | None] = {}
    runtimes: dict[str, Evidence | None] = {}
    gpus: dict[str, Evidence | None] = {}
    oses: dict[str, Evidence | None] = {}
    cluster = _optional(facts, Cluster)
    if cluster is not None:
        for pod in cluster.pods:
            for image in pod.images:
                for comp, version in image_versions(image):
                    _add(out, seen, InUse(comp, version, "image", pod.evidence, pod.node))
        for node in cluster.nodes.values():
            ev = node.evidence
            if node.kubelet_version:
                _add(out, seen, InUse("kubelet", node.kubelet_version.lstrip("v"), "node status", ev.get("kubelet_version"), node.name))
                for marker, platform in _PLATFORM_KUBELET:
                    if marker in node.kubelet_version:
                        platforms.setdefault(platform, ev.get("kubelet_version"))
                        if platform in ("k3s", "rke2", "k0s"):
                            _add(out, seen, InUse(platform, node.kubelet_version.lstrip("v").split("+")[0], "node status", ev.get("kubelet_version"), node.name))
            if node.container_runtime and "://" in node.container_runtime:
                rt, _, version = node.container_runtime.partition("://")
                runtimes.setdefault(rt, ev.get("container_runtime"))
                if rt in ("containerd", "cri-o", "docker"):
                    _add(out, seen, InUse(rt, version.lstrip("v"), "node status", ev.get("container_runtime"), node.name))
            if node.kernel_version:
                _add(out, seen, InUse("kernel", node.kernel_version, "node status", ev.get("kernel_version"), node.name))
            if node.os_image:
                oses.setdefault(node.os_image, ev.get("os_image"))
                if "CoreOS" in node.os_image or "OpenShift" in node.os_image:
                    platforms.setdefault("openshift", ev.get("os_image"))
            for key in node.labels:
                for prefix, platform in _PLATFORM_LABEL:
                    if key.startswith(prefix):
                        platforms.setdefault(platform, ev.get(f"label:{key}"))
            product = node.labels.get("nvidia.com/gpu.product")
            if product:
                gpus.setdefault(product, ev.get("label:nvidia.com/gpu.product"))
            if (node.name or "").startswith("kind-"):
                platforms.setdefault("kind", ev.get("name"))
    for rel in facts.all(HelmRelease):
        if rel.chart in ("gpu-operator", "network-operator") and rel.chart_version:
            _add(out, seen, InUse(rel.chart, rel.chart_version.lstrip("v"), "Helm chart", rel.evidence))
    config = _optional(facts, Configuration)
    if config is not None:
        for path, comp in POLICY.items():
            s = config.setting(path)
            if s is not None and isinstance(s.value, str) and _VERSION.match(s.value):
                _add(out, seen, InUse(comp, _VERSION.match(s.value).group(1), s.source, s.evidence))
    inventory = _optional(facts, GpuInventory)
    if inventory is not None:
        for ng in inventory.nodes:
            if ng.driver_version:
                _add(out, seen, InUse("driver", ng.driver_version, "nvidia-smi", ng.driver_evidence, ng.node))
            if ng.cuda_version:
                _add(out, seen, InUse("cuda", ng.cuda_version, "nvidia-smi", ng.cuda_evidence, ng.node))
            for g in ng.gpus:
                if g.name:
                    gpus.setdefault(g.name, g.ev("name"))
            if ng.product:
                gpus.setdefault(ng.product, ng.product_evidence)
    for d in facts.all(DriverVersion):
        _add(out, seen, InUse("driver", d.version, "NVRM", d.evidence, d.node))
    for k in facts.all(KernelRelease):
        _add(out, seen, InUse("kernel", k.release, k.source, k.evidence, k.node))
    for o in facts.all(OsRelease):
        if o.pretty_name or o.id:
            oses.setdefault(o.pretty_name or f"{o.id} {o.version_id or ''}".strip(), o.evidence)
            if o.id == "rhcos":
                platforms.setdefault("openshift", o.evidence)
    for c in facts.all(ContainerdVersion):
        _add(out, seen, InUse("containerd", c.version.lstrip("v"), "containerd", c.evidence))
        runtimes.setdefault("containerd", c.evidence)
    for path_obj in [*facts.all(ContainerdConfig), *facts.all(HostPath)]:
        path = getattr(path_obj, "path", None) or ""
        for marker, platform in _PLATFORM_PATH:
            if path.startswith(marker):
                platforms.setdefault(platform, getattr(path_obj, "evidence", None))
    if not (out or platforms or runtimes or gpus or oses):
        raise NotApplicable("no component versions, platform, runtime or GPU product in the artifacts")
    return VersionsInUse(tuple(out), tuple(platforms.items()), tuple(runtimes.items()), tuple(gpus.items()), tuple(oses.items()))


def _optional(facts: Facts, cls: type):
    try:
        return facts.get(cls)
    except NotApplicable:
        return None
    except Exception as exc:  # noqa: BLE001 - another view's bug must not hide the versions
        facts.errors.append(f"view versions-in-use: {cls.__name__}: {type(exc).__name__}: {exc}")
        return None
