"""A workload whose container did not get the GPU: telling "nothing was injected" (runtime class, default
runtime, CDI, no GPU requested) apart from "the driver really is too old", from the pod's own log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.classes import clip
from gpusleuth.checks.cuda_runtime import needs_of
from gpusleuth.facts import Cluster, Configuration, GpuInventory, Logs, RuntimeSetup
from gpusleuth.facts.configuration import truthy
from gpusleuth.facts.logs import Match, signature_pattern
from gpusleuth.facts.operands import spec_for
from gpusleuth.facts.prose import Prose
from gpusleuth.knowledge import versions
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.k8s import Pod
from gpusleuth.model.layers import Layer

RUNTIME_CLASS_SNIPPET = "spec:\n  runtimeClassName: nvidia\n"


@dataclass
class Injection:
    """What the artifacts say about how a pod gets its GPU: each reason it would not, with evidence."""

    reasons: list[tuple[str, Evidence | None]]
    driver_cuda: str | None = None
    driver_ev: Evidence | None = None


def _wants_gpu(p: Pod) -> bool:
    return (p.gpu_request or 0) > 0 or any(k.startswith("nvidia.com/") for k in p.resource_requests)


def injection_of(pod: Pod | None, setup: RuntimeSetup | None, configuration: Configuration | None) -> Injection:
    """Why the pod's container may have started without the NVIDIA devices and libraries."""
    reasons: list[tuple[str, Evidence | None]] = []
    if pod is None:
        return Injection(reasons)
    if pod.resource_requests or pod.gpu_request is not None:
        if not _wants_gpu(pod):
            reasons.append(("the pod requests no nvidia.com/gpu, so the device plugin gives it no GPU", pod.evidence))
    if not pod.runtime_class and setup is not None:
        default = setup.default_runtime_of(setup.kubelet_instance)
        if default is not None and not default.name.startswith("nvidia"):
            cfg = default.config
            cdi = configuration.setting("cdi.enabled") if configuration else None
            cdi_on = (truthy(cdi.value) if cdi else None) or cfg.enable_cdi
            if not cdi_on:
                unset = " (none set)" if default.implicit else ""
                reasons.append((f"it has no runtimeClassName and {cfg.where}'s default runtime is {default.name!r}{unset} with CDI off, "
                                "so no NVIDIA hook runs for it", default.evidence))
    return Injection(reasons)


def _pod_for(m: Match, cluster: Cluster | None) -> Pod | None:
    name = m.line.pod or m.log.pod
    return cluster.pod(name) if cluster is not None and name else None


def _driver(pod: Pod | None, node: str | None, inventory: GpuInventory | None) -> tuple[str | None, str | None, Evidence | None]:
    """(driver version, highest CUDA it supports, evidence) of the pod's node (or the only node known)."""
    if inventory is None:
        return None, None, None
    ng = inventory.for_node(pod.node if pod and pod.node else node)
    if ng is None:
        known = [n for n in inventory.nodes if n.driver_version]
        ng = known[0] if len(known) == 1 else None
    if ng is None or not ng.driver_version:
        return None, None, None
    if ng.cuda_version:
        return ng.driver_version, ng.cuda_version, ng.cuda_evidence or ng.driver_evidence
    b = versions.branch_of(ng.driver_version)
    return ng.driver_version, (b.max_cuda if b else None), ng.driver_evidence


def _too_old(need: tuple[int, int], driver: str | None, max_cuda: str) -> bool:
    """The driver cannot run this CUDA: a newer major, or a newer minor below minor-version compatibility."""
    have = versions.cuda_tuple(max_cuda)
    if need <= have:
        return False
    if need[0] > have[0]:
        return True
    floor = versions.minor_compat_min(need[0])
    return floor is None or driver is None or versions.vtuple(driver) < versions.vtuple(floor)


def _group(matches: list[Match]) -> dict[tuple, list[Match]]:
    out: dict[tuple, list[Match]] = {}
    for m in matches:
        out.setdefault((m.log.namespace, m.line.pod or m.log.pod or m.log.artifact), []).append(m)
    return out


@check("CU101", "cuda-insufficient-driver-explained")
def cuda_insufficient_driver_explained(logs: Logs, cluster: Cluster | None = None, inventory: GpuInventory | None = None,
                                       setup: RuntimeSetup | None = None, configuration: Configuration | None = None,
                                       prose: Prose | None = None) -> Iterable[Hit]:
    """`CUDA driver version is insufficient`: tells "no GPU injected into the container" from "driver too old".

    What it does: For each container that logged the error, compares the CUDA the workload needs
    (NVIDIA_REQUIRE_CUDA, CUDA_VERSION, image tag, framework wheel, CUDA banner) with the highest CUDA of
    its node's driver (nvidia-smi, GFD labels, branch table). Driver older: that is CU001's finding and this
    check stays silent. Driver new enough, or the pod requests no GPU, or it has no runtimeClassName while
    containerd's default is runc and CDI is off: the CUDA runtime found no driver library at all — CUDA
    reports that as "insufficient driver" — so the GPU was not injected. Versions a ticket states (nvidia-smi's
    CUDA Version, an image tag's CUDA) stand in for what no program printed, at lower confidence. With the
    driver unknown but the pod's spec at hand, a GPU request without runtimeClassName makes "not injected" the
    likely reading. With nothing to compare, it says both readings and how to tell them apart.
    Why it matters: the message sends people to upgrade a driver that is fine; in Kubernetes the usual
    cause is a pod started without the NVIDIA runtime (no runtimeClassName where nvidia is not the
    default), which a driver upgrade does not fix.
    How to fix: injection: add `runtimeClassName: nvidia` (or enable CDI / make nvidia the default runtime)
    and request nvidia.com/gpu; old driver: upgrade the driver branch or use an image for the node's CUDA.
    References: https://github.com/NVIDIA/gpu-operator/issues/415; https://github.com/NVIDIA/gpu-operator/pull/1017; https://github.com/NVIDIA/nvidia-docker/issues/700; https://github.com/SYSTRAN/faster-whisper/issues/1259
    """
    for (ns, key), ms in _group(logs.matches("cuda.insufficient-driver")).items():
        m = ms[-1]
        pod = _pod_for(m, cluster)
        needs = needs_of(pod, logs) if pod is not None else []
        need = max(needs, key=lambda n: n.version) if needs else None
        driver, max_cuda, drv_ev = _driver(pod, m.log.node, inventory)
        if need is not None and max_cuda and _too_old(need.version, driver, max_cuda):
            continue  # the driver really is too old: CU001 reports it with the fixes for that case
        # what a ticket states in place of what nvidia-smi or the pod would show: the driver's CUDA, the image's
        said_drv = prose.first("driver-cuda") if prose is not None and not max_cuda else None
        said_img = prose.first("image-cuda") if prose is not None and need is None else None
        inj = injection_of(pod, setup, configuration)
        evidence = [m.line.evidence()]
        name = pod.name if pod else (m.line.pod or m.log.pod)
        where = f"pod {name}" if name else m.log.artifact
        if inj.reasons:
            why = "; ".join(r for r, _ in inj.reasons)
            evidence += [e for _, e in inj.reasons if e]
            title = f"{where}: CUDA says the driver is insufficient, but no GPU was injected ({inj.reasons[0][0].split(',')[0]})"
            confidence = 0.85
        elif need is not None and max_cuda:
            why = (f"the node's driver {driver} supports CUDA {max_cuda} and runs the {need.label} the workload needs ({need.how}) "
                   "(directly or through minor-version compatibility), so the driver is not too old: the CUDA runtime found no driver "
                   "library in the container, which it reports this way")
            evidence += [need.evidence, drv_ev]
            title = f"{where}: driver {driver} (CUDA {max_cuda}) runs CUDA {need.label}, so the GPU was not injected into the container"
            confidence = 0.8
        elif ((said_drv or max_cuda) and (said_img or need) and (said_drv or said_img)
              and not _too_old(need.version if need else versions.cuda_tuple(said_img.value), driver, max_cuda or said_drv.value)):
            drv_text = f"the node's driver {driver} supports CUDA {max_cuda}" if max_cuda else f"the ticket says the driver runs CUDA {said_drv.value} ({said_drv.evidence.cite()})"
            img_text = f"the {need.label} the workload needs ({need.how})" if need else f"the image's CUDA {said_img.value} ({said_img.evidence.cite()})"
            why = (f"{drv_text}, which runs {img_text}, so the driver is not too old: the CUDA runtime found no driver library in the "
                   "container, which it reports this way. Stated, not read from the node: `nvidia-smi` inside the container confirms it "
                   "(`command not found` means not injected)")
            evidence += [e for e in (need.evidence if need else None, drv_ev, said_drv.evidence if said_drv else None,
                                     said_img.evidence if said_img else None) if e]
            title = f"{where}: the stated versions say the driver is new enough, so most likely no GPU was injected"
            confidence = 0.55
        elif pod is not None and pod.manifest is not None and not pod.runtime_class and _wants_gpu(pod) and spec_for(pod) is None:
            why = (f"its node's driver is not in the artifacts, but the pod's spec{f' ({pod.evidence.cite()})' if pod.evidence else ''} requests "
                   "a GPU and names no runtimeClassName, so an NVIDIA hook ran for it only if nvidia is containerd's default runtime or CDI "
                   "injects the GPU; without either the container has no driver library, which the CUDA runtime reports this way. "
                   "`nvidia-smi` inside the container tells the two readings apart: `command not found` means not injected; a CUDA "
                   "Version lower than the image's means an old driver")
            evidence.append(pod.evidence)
            title = f"{where}: CUDA says the driver is insufficient; the pod has no runtimeClassName, so most likely no GPU was injected"
            confidence = 0.6
        else:
            why = ("the artifacts show neither the workload's CUDA nor its node's driver: either no GPU was injected (the usual case in "
                   "Kubernetes: no runtimeClassName where nvidia is not the default runtime) or the driver is older than the image's CUDA. "
                   "`nvidia-smi` inside the container tells them apart: `command not found` means not injected; a CUDA Version lower "
                   "than the image's means an old driver")
            title = f"{where}: CUDA driver version is insufficient (not injected, or driver too old)"
            confidence = 0.5
        cmds = (f"kubectl exec {name}{f' -n {ns}' if ns else ''} -- nvidia-smi",) if name else ()
        # "Not injected" is a fault of how the pod was started (its spec, the runtime), not of CUDA.
        layer = Layer.WORKLOAD if confidence > 0.5 else None
        yield Hit(
            title=title,
            explanation=f"{where} logged \"{clip(m.line.message, 160)}\" ({m.line.evidence().cite()}): {why}.",
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(
                Fix(FixKind.IMMEDIATE, "Check what the container sees.", cmds),
                Fix(FixKind.PERMANENT, "Run the pod with the NVIDIA runtime and a GPU request: runtimeClassName: nvidia (or CDI, or nvidia as "
                    "containerd's default) and resources.limits nvidia.com/gpu.", snippet=RUNTIME_CLASS_SNIPPET, snippet_language="yaml"),
            ),
            node=(pod.node if pod else None) or m.log.node,
            component=name or "workload",
            confidence=confidence,
            layer=layer,
            facts={"pod": name, "needs": need.label if need else None, "driver": driver, "driver_cuda": max_cuda,
                   "not_injected_because": [r for r, _ in inj.reasons]},
        )


def _driver_missing(logs: Logs, cluster: Cluster) -> Iterable[tuple[Pod, str, Evidence]]:
    """(pod, message, evidence) per pod whose own log, or whose start failure (`exec: "nvidia-smi":
    executable file not found` in its events), shows no NVIDIA driver inside the container."""
    seen: set = set()
    for (ns, key), ms in _group(logs.matches(SIGNATURE)).items():
        m = ms[-1]
        pod = _pod_for(m, cluster)
        if pod is not None:
            seen.add((pod.namespace, pod.name))
            yield pod, m.line.message, m.line.evidence()
    rx = signature_pattern(SIGNATURE)
    for e in cluster.events:
        name = e.object.rsplit("/", 1)[-1] if e.object and e.object.lower().startswith("pod/") else None
        pod = cluster.pod(name) if name else None
        if pod is None or (pod.namespace, pod.name) in seen or not rx.search(e.message) or e.evidence is None:
            continue
        seen.add((pod.namespace, pod.name))
        yield pod, e.message, e.evidence


SIGNATURE = "workload.driver-not-in-container"




@check("WL102", "gpu-pod-started-without-nvidia-runtime")
def gpu_pod_started_without_nvidia_runtime(logs: Logs, cluster: Cluster, setup: RuntimeSetup | None = None,
                                           configuration: Configuration | None = None) -> Iterable[Hit]:
    """A GPU pod's container has no NVIDIA driver inside (`nvidia-smi: command not found`): no NVIDIA runtime ran.

    What it does: For pods whose own log (or whose start failure in their events, `exec: "nvidia-smi":
    executable file not found in $PATH`) shows the driver missing inside the container, reads the pod spec:
    a GPU request without runtimeClassName (and, when the node's containerd config is in the artifacts, a
    default runtime other than nvidia with CDI off) means the NVIDIA hook never ran; a pod without a GPU
    request is given no GPU at all. Operator operands are left to their own checks.
    Why it matters: the pod is scheduled and Running, nvidia.com/gpu is counted as used, but the workload
    falls back to CPU or crashes; the cluster looks healthy. Recent GPU Operator releases no longer make
    nvidia the default runtime, so pods need `runtimeClassName: nvidia` unless CDI injects the GPUs.
    How to fix: add `runtimeClassName: nvidia` to the pod template (or enable CDI, or deliberately make
    nvidia containerd's default runtime) and request nvidia.com/gpu.
    References: https://github.com/NVIDIA/gpu-operator/pull/1017; https://github.com/NVIDIA/gpu-operator/issues/415; https://github.com/NVIDIA/gpu-feature-discovery/issues/71
    """
    for pod, message, line_ev in _driver_missing(logs, cluster):
        if spec_for(pod) is not None or pod.runtime_class:
            continue
        inj = injection_of(pod, setup, configuration)
        wants = _wants_gpu(pod)
        if not wants and not inj.reasons:
            continue
        why = "; ".join(r for r, _ in inj.reasons) if inj.reasons else (
            "it requests a GPU but has no runtimeClassName, so it ran with the node's default runtime, which does not inject the GPU")
        evidence = [line_ev, pod.evidence, *(e for _, e in inj.reasons if e)]
        nsf = f" -n {pod.namespace}" if pod.namespace else ""
        shown = message.strip()
        yield Hit(
            title=f"{pod.name} runs without the NVIDIA driver inside: {clip(shown, 80)}",
            explanation=f"Pod {pod.name} logged \"{clip(shown, 200)}\": {why}.",
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(Fix(FixKind.PERMANENT, "Give the pod the NVIDIA runtime class (and a GPU request), then recreate it.",
                       (f"kubectl get pod {pod.name}{nsf} -o jsonpath='{{.spec.runtimeClassName}}'", "kubectl get runtimeclass"),
                       snippet=RUNTIME_CLASS_SNIPPET, snippet_language="yaml"),),
            node=pod.node,
            component=pod.name,
            confidence=0.8 if inj.reasons else 0.7,
            layer=Layer.WORKLOAD,
            facts={"pod": pod.name, "requests_gpu": wants, "reasons": [r for r, _ in inj.reasons]},
        )
