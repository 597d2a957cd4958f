"""Workload: the user's pod, as the GPU sees it (WL0xx): application Xids, misleading utilisation, memory."""

from __future__ import annotations

from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.gpu_common import xid_groups, xid_hit
from gpusleuth.facts.gpus import GpuInventory, KernelEvents
from gpusleuth.knowledge import xid as xid_table
from gpusleuth.model.finding import Hit


@check("WL001", "xid-application-fault")
def application_xid(kernel: KernelEvents, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """An application fault on the GPU (Xid 13, 31, 43 and the other application Xids): the code, not the card.

    What it does: reports Xids the catalogue classes as application faults (illegal memory access, MMU page
    fault, a kernel stopped by the driver), per GPU and process, unless a hardware Xid earlier in the same burst
    explains them.
    Why it matters: these are usually your fault, not the hardware's (seed 004): restarting the pod and
    looking at the model fixes them; cordoning the node does not.
    How to fix: restart the workload; debug with compute-sanitizer or CUDA_LAUNCH_BLOCKING=1; only if the same
    GPU keeps faulting with different applications suspect the hardware and run `dcgmi diag -r 3`.
    """
    codes = {c for c, row in xid_table.catalog().items() if row.is_application}
    return [xid_hit(code, node, pci, group, inventory) for (node, pci, code), group in xid_groups(kernel, codes).items()]
