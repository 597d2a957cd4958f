"""Workload: the user's pod, as the GPU sees it (WL0xx): application Xids, misleading utilisation, memory."""

from __future__ import annotations

from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.gpu_common import xid_groups, xid_hit
from gpusleuth.facts.gpus import GpuInventory, KernelEvents
from gpusleuth.facts.metrics import GpuMetrics
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
