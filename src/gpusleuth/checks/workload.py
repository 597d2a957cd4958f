"""Workload: the user's pod, as the GPU sees it (WL0xx): application Xids, misleading utilisation, memory."""

from __future__ import annotations

import re
from functools import cache
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.classes import clip
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.logs import Logs, signature_pattern
from gpusleuth.facts.sharing import SharingConfigs
from gpusleuth.checks.gpu_common import xid_groups, xid_hit
from gpusleuth.facts.gpus import GpuInventory, KernelEvents
from gpusleuth.facts.metrics import GpuMetrics
from gpusleuth.knowledge import table
from gpusleuth.knowledge import xid as xid_table
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity


@check("WL001", "xid-application-fault")
def application_xid(kernel: KernelEvents, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """An application fault on the GPU (Xid 13, 31, 43 and the other application Xids): the code, not the card.

    What it does: reports Xids the catalogue classes as application faults (illegal memory access, MMU page
    fault, a kernel stopped by the driver), per GPU and process, unless a hardware Xid earlier in the same burst
    explains them.
    Why it matters: these are usually the application's fault, not the hardware's: restarting the pod and
    looking at the model fixes them; cordoning the node does not.
    How to fix: restart the workload; debug with compute-sanitizer or CUDA_LAUNCH_BLOCKING=1; only if the same
    GPU keeps faulting with different applications suspect the hardware and run `dcgmi diag -r 3`.
    References: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
    """
    codes = {c for c, row in xid_table.catalog().items() if row.is_application}
    return [xid_hit(code, node, pci, group, inventory) for (node, pci, code), group in xid_groups(kernel, codes).items()]


UTIL_BUSY = 80.0  # % of the sample window with a kernel running
TENSOR_LOW = 0.20  # fraction of cycles the tensor pipes were busy
DRAM_HIGH = 0.50  # fraction of cycles HBM was busy
FB_FULL = 0.95


@check("WL002", "gpu-util-overstates-work")
def util_vs_tensor(metrics: GpuMetrics) -> Iterable[Hit]:
    """GPU_UTIL says busy while the tensor cores are mostly idle: memory-bound or idle kernels.

    What it does: compares dcgm-exporter's DCGM_FI_DEV_GPU_UTIL (was any kernel running) with
    DCGM_FI_PROF_PIPE_TENSOR_ACTIVE (tensor-core activity) and DCGM_FI_PROF_DRAM_ACTIVE (HBM bandwidth) per GPU:
    high utilisation with low tensor activity and busy memory means memory-bound; with idle memory too, small,
    launch-bound or waiting kernels.
    Why it matters: GPU-Util answers only "was a kernel running"; 95% of it can be 25% of the chip doing useful
    math. Capacity plans built on it buy more of a card already wasted.
    How to fix: profile the workload (Nsight Systems), look at batch size, data loading, NCCL waits and precision;
    track tensor activity (or MFU) instead of GPU-Util.
    References: https://docs.nvidia.com/datacenter/dcgm/latest/dcgm-api/dcgm-api-field-ids.html (DCGM_FI_DEV_GPU_UTIL vs DCGM_FI_PROF_PIPE_TENSOR_ACTIVE / DCGM_FI_PROF_DRAM_ACTIVE)
    """
    for s in metrics.whole_gpus():
        util = s.values.get("DCGM_FI_DEV_GPU_UTIL")
        tensor = s.values.get("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE")
        if util is None or tensor is None or util < UTIL_BUSY or tensor >= TENSOR_LOW:
            continue
        dram = s.values.get("DCGM_FI_PROF_DRAM_ACTIVE")
        bound = "memory-bound: HBM is busy while the tensor cores wait" if dram is not None and dram >= DRAM_HIGH else \
            "kernels run but do little math (small or launch-bound kernels, input pipeline or communication waits)"
        nums = f"GPU_UTIL {util:.0f}%, tensor pipes {tensor:.0%}" + (f", DRAM {dram:.0%}" if dram is not None else "")
        who = f" (pod {s.namespace + '/' if s.namespace else ''}{s.pod})" if s.pod else ""
        yield Hit(
            title=f"{s.label}: {nums}: {bound.split(':')[0]}",
            explanation=f"{nums}{who}. GPU_UTIL only says a kernel was running in the sample window; the tensor cores were busy "
                        f"{tensor:.0%} of the time, so the chip is {bound}.",
            severity=Severity.INFO, role=Role.INFO, node=s.node, component=f"gpu:{s.gpu}",
            evidence=tuple(s.evidence[k] for k in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE") if k in s.evidence),
            fixes=(Fix(FixKind.PERMANENT, "Profile the workload (nsys profile --stats=true around a few training steps) and watch "
                                          "tensor activity (or MFU) rather than GPU-Util.", ()),),
            confidence=0.8, facts={"gpu_util": util, "tensor_active": tensor, "dram_active": dram, "pod": s.pod},
        )


@check("WL003", "framebuffer-nearly-full")
def framebuffer_full(inventory: GpuInventory) -> Iterable[Hit]:
    """A GPU's memory (framebuffer) is nearly full: the OOM early warning.

    What it does: compares used with total GPU memory from nvidia-smi, NVML or dcgm-exporter (FB_USED against
    FB_USED + FB_FREE + FB_RESERVED) and reports GPUs at 95% or more, with the processes when known.
    Why it matters: the next allocation fails with CUDA out of memory; on a time-sliced GPU one tenant filling it
    makes the others fail. Frameworks' caching allocators also hold memory they are not using, so the number is
    an upper bound of the need.
    How to fix: nothing if it is one job that sized itself to the card; otherwise lower the batch size, set
    PYTORCH_CUDA_ALLOC_CONF, or stop sharing the GPU.
    References: https://docs.nvidia.com/datacenter/dcgm/latest/dcgm-api/dcgm-api-field-ids.html (DCGM_FI_DEV_FB_USED)
    """
    for ng, g in inventory.all_gpus():
        if not g.memory_total_mib or g.memory_used_mib is None or g.memory_used_mib < FB_FULL * g.memory_total_mib:
            continue
        procs = ", ".join(f"{p.name or '?'} (pid {p.pid}, {p.used_memory_mib} MiB)" for p in (g.processes or ())[:3])
        yield Hit(
            title=f"{g.label} memory {g.memory_used_mib / g.memory_total_mib:.0%} full ({g.memory_used_mib} of {g.memory_total_mib} MiB)",
            explanation="The next allocation on this GPU may fail with out-of-memory." + (f" Holding it: {procs}." if procs else ""),
            severity=Severity.INFO, role=Role.INFO, node=ng.node, component=f"gpu:{g.short_pci}",
            evidence=(g.ev("memory"),), confidence=0.7,
            facts={"used_mib": g.memory_used_mib, "total_mib": g.memory_total_mib, "gpu_index": g.index},
        )


# ---------------------------------------------------------------------------------------------------------------
# Pod-level facts that break GPU workloads
# ---------------------------------------------------------------------------------------------------------------

_NO_GPU_VALUES = {"void", "none", ""}


def _env_ev(pod, name: str):
    from gpusleuth.model.evidence import Evidence

    base = pod.evidence
    return Evidence(base.artifact if base else "", base.line if base else None, f"env {name}={pod.env.get(name)}")


@check("WL105", "nvidia-visible-devices-set-by-hand")
def visible_devices_by_hand(cluster: Cluster) -> Iterable[Hit]:
    """A pod sets NVIDIA_VISIBLE_DEVICES itself instead of letting the device plugin choose its GPUs.

    What it does: reads the environment of every pod that is not a GPU/Network Operator operand: an
    NVIDIA_VISIBLE_DEVICES in the pod spec (all, indices or UUIDs) without a request for nvidia.com/gpu (or a MIG
    or shared resource) gets GPUs the scheduler never counted; with a request, it fights the device plugin's
    choice; `void`/`none` with a request gives the container no GPU at all.
    Why it matters: GPUs taken behind the scheduler's back are given to another pod too: two jobs share a GPU
    (out-of-memory, busy devices, one tenant seeing another's processes) while the cluster looks correctly
    allocated. The NVIDIA runtime reads the variable from any container unless the toolkit is told to accept it
    only from privileged ones.
    How to fix: remove NVIDIA_VISIBLE_DEVICES from the pod spec and request resources.limits nvidia.com/gpu;
    to stop it cluster-wide, set accept-nvidia-visible-devices-envvar-when-unprivileged = false in the toolkit
    config (the device plugin then passes GPUs as volume mounts or CDI).
    References: https://github.com/NVIDIA/k8s-device-plugin/issues/61; https://github.com/NVIDIA/k8s-device-plugin/issues/87; https://github.com/GoogleCloudPlatform/container-engine-accelerators/issues/239; https://github.com/skypilot-org/skypilot/pull/5823
    """
    from gpusleuth.facts.operands import spec_for

    for pod in cluster.pods:
        value = pod.env.get("NVIDIA_VISIBLE_DEVICES")
        if value is None or spec_for(pod) is not None:
            continue
        wants = (pod.gpu_request or 0) > 0 or any(k.startswith("nvidia.com/") for k in pod.resource_requests)
        v = value.strip().lower()
        where = f"{pod.namespace + '/' if pod.namespace else ''}{pod.name}"
        nsf = f" -n {pod.namespace}" if pod.namespace else ""
        if v in _NO_GPU_VALUES and wants:
            title = f"{where} requests a GPU but sets NVIDIA_VISIBLE_DEVICES={value or '(empty)'}: the container gets no GPU"
            why = "The value tells the NVIDIA runtime to inject no GPU, whatever the device plugin allocated."
            sev, conf = Severity.ERROR, 0.75
        elif v in _NO_GPU_VALUES:
            continue  # a CPU pod that opts out explicitly: fine
        elif not wants:
            title = f"{where} takes GPUs with NVIDIA_VISIBLE_DEVICES={value} without requesting nvidia.com/gpu"
            why = ("The scheduler and the device plugin do not know this pod uses GPUs: they give the same GPUs to other pods, "
                   "which then share memory and compute with it unannounced.")
            sev, conf = Severity.WARNING, 0.7
        else:
            title = f"{where} sets NVIDIA_VISIBLE_DEVICES={value} by hand on top of its GPU request"
            why = ("The device plugin chooses which GPUs the pod gets and passes them to the runtime; a value in the pod spec "
                   "competes with that choice, so the container may see other GPUs than the ones allocated to it.")
            sev, conf = Severity.WARNING, 0.6
        yield Hit(
            title=title,
            explanation=f"Pod {where}: env NVIDIA_VISIBLE_DEVICES={value}. {why}",
            severity=sev, role=Role.ROOT_CAUSE, node=pod.node, component=f"pod/{where}",
            evidence=tuple(e for e in (_env_ev(pod, "NVIDIA_VISIBLE_DEVICES"), pod.evidence) if e),
            fixes=(
                Fix(FixKind.IMMEDIATE, "See which GPUs the container really has and what it requested.",
                    (f"kubectl exec {pod.name}{nsf} -- nvidia-smi -L",
                     f"kubectl get pod {pod.name}{nsf} -o jsonpath='{{.spec.containers[*].resources.limits}}'")),
                Fix(FixKind.PERMANENT, "Remove NVIDIA_VISIBLE_DEVICES from the pod spec and request the GPUs instead; optionally make the "
                                       "toolkit ignore the variable from unprivileged containers.",
                    snippet="resources:\n  limits:\n    nvidia.com/gpu: 1\n", snippet_language="yaml"),
            ),
            confidence=conf, facts={"value": value, "requests_gpu": wants},
        )


_MIG_RESOURCE = re.compile(r"nvidia\.com/mig-(?P<g>\d+)g\.(?P<gb>\d+)gb")
_OOM_TOTAL = re.compile(r"(?:total capacity of|GPU \d+; )\s*(?P<n>[\d.]+) (?P<u>[MG])iB(?: total capacity)?|/(?P<n2>[\d.]+) (?P<u2>G)iB\) on startup")


@check("WL106", "gpu-oom-on-a-slice-or-shared-gpu")
def oom_on_shared_gpu(logs: Logs, cluster: Cluster, sharing: SharingConfigs | None = None) -> Iterable[Hit]:
    """CUDA out of memory in a pod that has a MIG slice or a time-sliced share, not a whole GPU.

    What it does: for pods whose log shows CUDA out of memory (cuda.oom) or vLLM finding less free memory than it
    reserves at start, reads what the pod was given: a MIG
    resource (nvidia.com/mig-1g.10gb: a slice with its own, fixed memory), a shared resource
    (nvidia.com/gpu.shared) or nvidia.com/gpu on a device plugin configured for time-slicing (replicas > 1):
    there every pod on the GPU allocates from the same memory. It says which, with the slice's size or the
    number of replicas, next to the total capacity PyTorch printed.
    Why it matters: the fix differs: a MIG slice needs a bigger profile (or a smaller model); a time-sliced GPU
    needs the other tenants gone or memory limits (MPS), because time-slicing partitions no memory at all.
    How to fix: MIG: request a larger profile (e.g. mig-3g.40gb) or a whole GPU; time-slicing: give the workload
    a whole GPU or a MIG slice, or use MPS sharing, which can cap each client's memory.
    References: https://github.com/NVIDIA/k8s-device-plugin/issues/323; https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html; https://docs.nvidia.com/datacenter/tesla/mig-user-guide/
    """
    seen = set()
    replicas = _time_slicing_replicas(sharing)
    for m in [*logs.matches("cuda.oom"), *logs.matches("vllm.free-memory-below-utilization")]:
        name = m.line.pod or m.log.pod
        pod = cluster.pod(name) if name else None
        if pod is None or pod.key in seen:
            continue
        mig = next((_MIG_RESOURCE.search(k) for k in pod.resource_requests if _MIG_RESOURCE.search(k)), None)
        shared = [k for k in pod.resource_requests if k.startswith("nvidia.com/") and k.endswith(".shared")]
        ts = replicas.get("nvidia.com/gpu") if (pod.gpu_request or 0) > 0 else None
        if not (mig or shared or ts):
            continue
        seen.add(pod.key)
        where = f"{pod.namespace + '/' if pod.namespace else ''}{pod.name}"
        total = _OOM_TOTAL.search(m.line.message)
        total_txt = (f" The process saw a total capacity of {total.group('n') or total.group('n2')} {total.group('u') or total.group('u2')}iB."
                     if total else "")
        if mig:
            kind, title = "mig", f"{where} ran out of GPU memory on a MIG slice of {mig.group('gb')} GB ({mig.group(0)[11:]})"
            why = (f"The pod has a MIG instance with {mig.group('gb')} GB of its own memory, not a whole GPU.{total_txt} Nothing else "
                   "uses that memory: the workload needs a larger profile or a smaller footprint.")
        else:
            res = shared[0] if shared else "nvidia.com/gpu"
            n = replicas.get(res) or ts
            kind = "time-slicing"
            title = f"{where} ran out of GPU memory on a GPU shared by time-slicing ({res}{f', {n} replicas' if n else ''})"
            why = (f"The pod's {res} is a time-sliced share of a GPU{f' split {n} ways' if n else ''}: time-slicing partitions no "
                   f"memory, so every pod on that GPU allocates from the same framebuffer.{total_txt} Another tenant may hold the memory.")
        nsf = f" -n {pod.namespace}" if pod.namespace else ""
        yield Hit(
            title=title, explanation=f"{where} logged \"{clip(m.line.message, 200)}\". {why}",
            severity=Severity.ERROR, role=Role.ROOT_CAUSE, node=pod.node, component=f"pod/{where}",
            evidence=tuple(e for e in (m.line.evidence(), pod.evidence) if e),
            fixes=(
                Fix(FixKind.IMMEDIATE, "See the GPU's memory and every process on it.", (f"kubectl exec {pod.name}{nsf} -- nvidia-smi",)),
                Fix(FixKind.PERMANENT, "Request a larger MIG profile or a whole GPU." if kind == "mig" else
                    "Give the workload a whole GPU or a MIG slice (memory isolated), or use MPS sharing with a per-client memory limit.", ()),
            ),
            confidence=0.8, facts={"sharing": kind, "mig_profile": mig.group(0) if mig else None, "replicas": replicas or None},
        )


def _time_slicing_replicas(sharing) -> dict[str, int]:
    """resource name -> replicas from every device-plugin config's sharing.timeSlicing (renameByDefault: `<name>.shared`;
    a per-resource `rename` is dropped by the plugin on load, api/config/v1 disableResoureRenaming)."""
    out: dict[str, int] = {}
    for cfg in (sharing.of_kind("device-plugin") if sharing is not None else []):
        ts = (cfg.body.get("sharing") or {}).get("timeSlicing") or {}
        for r in ts.get("resources") or []:
            if isinstance(r, dict) and isinstance(r.get("replicas"), int) and r["replicas"] > 1:
                name = f"{r.get('name')}.shared" if ts.get("renameByDefault") is True else r.get("name")
                if name:
                    out[name if "/" in name else f"nvidia.com/{name}"] = r["replicas"]
    return out


_GPU = "nvidia.com/gpu"


@check("WL109", "gpu-request-name-not-offered-shared")
def shared_resource_name(cluster: Cluster) -> Iterable[Hit]:
    """A Pending pod asks for nvidia.com/gpu where time-slicing renamed it (nvidia.com/gpu.shared), or the reverse.

    What it does: for each Pending pod requesting nvidia.com/gpu or nvidia.com/gpu.shared, reads the GPU nodes'
    allocatable: with time-slicing or MPS and `renameByDefault: true` the device plugin advertises the shared
    replicas as nvidia.com/gpu.shared and nvidia.com/gpu disappears; without it there is no .shared resource.
    Fires when the name the pod asks for is offered by no node while the other one is.
    Why it matters: the scheduler only says `Insufficient nvidia.com/gpu`; the GPUs are there under another name,
    so adding nodes or restarting the device plugin does not help.
    How to fix: request the name the sharing configuration offers (nvidia.com/gpu.shared when renameByDefault is
    true), or set renameByDefault to match what the workloads request.
    References: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html; https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus
    """
    from gpusleuth.parsers.k8s_common import to_int

    offered: dict[str, list] = {}
    for n in cluster.nodes.values():
        for k, v in n.allocatable.items():
            if k.startswith("nvidia.com/gpu") and (to_int(v) or 0) > 0:
                offered.setdefault(k, []).append(n)
    if not offered:
        return
    for pod in cluster.pods:
        if (pod.status or pod.phase) != "Pending":
            continue
        asks = [k for k in pod.resource_requests if k == _GPU or (k.startswith("nvidia.com/") and k.endswith(".shared"))]
        if not asks and pod.gpu_request:
            asks = [_GPU]
        for res in asks:
            if offered.get(res):
                continue
            other = f"{_GPU}.shared" if res == _GPU else _GPU
            nodes = offered.get(other) or ([] if res != _GPU else [n for k, ns in offered.items() if k.endswith(".shared") for n in ns])
            if not nodes:
                continue
            other = next(k for k in offered if offered[k] and (k == other or (res == _GPU and k.endswith(".shared"))))
            events = [e for e in cluster.events_for(pod.name) if e.reason == "FailedScheduling"]
            evidence = [pod.evidence, *(e.evidence for e in events[-1:]), *(n.evidence.get(f"allocatable:{other}") for n in nodes[:2])]
            why = (f"the GPU nodes offer {other}: the device plugin's sharing configuration renames shared GPUs (renameByDefault), "
                   f"so {res} is not advertised" if res == _GPU else
                   f"the GPU nodes offer only {other}: the sharing configuration does not rename shared GPUs")
            nsf = f" -n {pod.namespace}" if pod.namespace else ""
            yield Hit(
                title=f"{pod.name} asks for {res}, which no node offers; the GPUs are advertised as {other}",
                explanation=f"Pod {pod.name} requests {res} and stays Pending: {why}.",
                severity=Severity.ERROR, role=Role.ROOT_CAUSE,
                evidence=tuple(dict.fromkeys(e for e in evidence if e)),
                fixes=(Fix(FixKind.IMMEDIATE, f"Request {other} instead of {res}.", (f"kubectl get pod {pod.name}{nsf} -o yaml",),
                           snippet=f"resources:\n  limits:\n    {other}: 1\n", snippet_language="yaml"),
                       Fix(FixKind.PERMANENT, "Or set sharing.timeSlicing.renameByDefault in the device plugin configuration to the name "
                                              "the workloads request, consistently across the cluster.", ())),
                node=nodes[0].name if len(nodes) == 1 else None, component=pod.name, confidence=0.8,
                facts={"pod": pod.name, "requested": res, "offered": sorted(offered)},
            )


SIG_INVALID = "k8s.object-invalid"  # knowledge/signatures.toml; explained by knowledge/api_validation.toml


@cache
def _validation() -> tuple[frozenset[str], tuple[tuple[re.Pattern, dict], ...]]:
    t = table("api_validation")
    return frozenset(t["stack_kinds"]), tuple((re.compile(r["detail"]), r) for r in t["rule"])


@check("WL111", "object-rejected-by-api-validation")
def object_rejected(logs: Logs) -> Iterable[Hit]:
    """The API server refused a workload object (`Job "x" is invalid: ...: Invalid value: ...`): nothing was created.

    What it does: Finds apimachinery's field errors (`<Kind> "<name>" is invalid: <field>: <type>: ...`, the
    ErrorType strings of k8s.io/apimachinery) in what kubectl, a controller or an event printed, one finding per
    object, and explains the field error from knowledge/api_validation.toml when a rule knows it (a GPU request
    that differs from its limit, a fractional GPU count). Objects the GPU stack owns (ClusterPolicy,
    NicClusterPolicy, RuntimeClass ...) are left to their operators' checks.
    Why it matters: a rejected object never reaches a node, so every GPU, driver and plugin check is green while
    the job "does not start"; the answer is in the object's spec, not in the cluster.
    How to fix: change the field the error names (for GPUs: only `resources.limits nvidia.com/gpu`, a whole
    number) and apply the object again.
    References: https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/; https://github.com/NVIDIA/k8s-device-plugin/issues/154
    """
    stack, rules = _validation()
    seen: dict[tuple, list] = {}
    for m in logs.matches(SIG_INVALID):
        g = signature_pattern(SIG_INVALID).search(m.line.message)
        if g is None or g.group("kind") in stack:
            continue
        seen.setdefault((g.group("kind"), g.group("name")), []).append((m, g))
    for (kind, name), found in seen.items():
        m, g = found[-1]
        detail = m.line.message[g.end():].lstrip(": ")
        rule = next(((r, d) for rx, r in rules if (d := rx.search(detail))), None)
        field = g.group("field")
        if rule is not None:
            row, d = rule
            means, fix = row["means"].format(**d.groupdict()), row["fix"].format(**d.groupdict())
        else:
            means, fix = f"the API server's validation refused {field} ({g.group('type')})", f"Change {field} as the error says and apply the {kind} again."
        yield Hit(
            title=f"The API server rejected {kind} {name}: {field}: {clip(detail, 90)}",
            explanation=(f"\"{clip(m.line.message.strip(), 240)}\" ({m.line.evidence().cite()}): {means}. The {kind} was not created, so no pod "
                         "reached a node: the GPU stack is not involved."),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(x.line.evidence() for x, _ in found[-3:])),
            fixes=(Fix(FixKind.IMMEDIATE, fix, ()),),
            component=name,
            confidence=0.9 if rule is not None else 0.75,
            facts={"kind": kind, "name": name, "field": field, "type": g.group("type"), "rule": rule[0]["detail"] if rule else None},
        )
