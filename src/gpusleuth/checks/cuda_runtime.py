"""CUDA runtime: the CUDA a workload brings (image, framework wheel) against what the node's driver runs (CU0xx).

Three mechanisms decide whether a CUDA application runs on a driver: backward compatibility (a newer driver runs older CUDA, always), minor-version
compatibility (any 12.x on a driver that supports 12.0), forward compatibility (cuda-compat: a newer CUDA
major on an older branch, data-center GPUs only, a deliberate override).
"""

from __future__ import annotations

import operator
import re
import weakref
from dataclasses import dataclass
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.classes import clip
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.gpus import GpuInventory, KernelEvents, NodeGpus
from gpusleuth.facts.logs import Logs, messages_text
from gpusleuth.knowledge import versions
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.k8s import Pod

_IMAGE_CUDA = re.compile(r"cuda[:\-_]?(?P<maj>\d{2})\.(?P<min>\d)(?!\d)", re.I)
_CU_TAG = re.compile(r"(?:^|[+\-_.])cu(?P<maj>1\d)(?P<min>\d)\b")
_TORCH = re.compile(r"\btorch\b[^\n]{0,40}?\+cu(?P<maj>1\d)(?P<min>\d)\b|PyTorch version: \S+\+cu(?P<maj2>1\d)(?P<min2>\d)\b")
_BANNER = re.compile(r"^CUDA Version (?P<maj>\d{2})\.(?P<min>\d+)(?:\.\d+)?\s*$")
# torch's collect_env ("CUDA used to build PyTorch: 12.1") and nvcc --version ("Cuda compilation tools, release 12.1, V12.1.105")
_BUILT_WITH = re.compile(r"^(?:CUDA used to build PyTorch|Cuda compilation tools, release)\s*:?\s*(?P<maj>1\d)\.(?P<min>\d+)")
_REQUIRE_TERM = re.compile(r"(?P<what>cuda|driver)\s*(?P<op>>=|<=|==|=|>|<)\s*(?P<ver>[\d.]+)")
_INSUFFICIENT = "CUDA driver version is insufficient for CUDA runtime version"
_OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "=": operator.eq, "==": operator.eq}
_CONSUMER = re.compile(r"GeForce|TITAN|RTX \d{4}(?! Ada)|Quadro", re.I)


@dataclass(frozen=True)
class CudaNeed:
    version: tuple[int, int]
    how: str  # NVIDIA_REQUIRE_CUDA | CUDA_VERSION | image tag | framework wheel | CUDA banner | framework build | nvcc in the image
    text: str
    evidence: Evidence
    require: str | None = None  # the whole NVIDIA_REQUIRE_CUDA expression

    @property
    def label(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"


def _pod_ev(pod: Pod, text: str) -> Evidence:
    base = pod.evidence
    return Evidence(base.artifact if base else "", base.line if base else None, text)


def needs_of(pod: Pod, logs: Logs | None) -> list[CudaNeed]:
    """Every statement of the CUDA version a pod's workload was built for, with where it was seen."""
    out = []
    req = pod.env.get("NVIDIA_REQUIRE_CUDA")
    if req:
        m = next((t for t in _REQUIRE_TERM.finditer(req) if t.group("what") == "cuda"), None)
        if m:
            out.append(CudaNeed(versions.cuda_tuple(m.group("ver")), "NVIDIA_REQUIRE_CUDA", req,
                                _pod_ev(pod, f"env NVIDIA_REQUIRE_CUDA={req}"), require=req))
    if pod.env.get("CUDA_VERSION"):
        v = pod.env["CUDA_VERSION"]
        out.append(CudaNeed(versions.cuda_tuple(v), "CUDA_VERSION", v, _pod_ev(pod, f"env CUDA_VERSION={v}")))
    images = set(pod.images) | {c.image for c in pod.containers if c.image}
    for image in sorted(images):
        tag = image.rsplit("/", 1)[-1]
        m = _IMAGE_CUDA.search(tag) or _CU_TAG.search(tag)
        if m:
            ev = next((c.evidence for c in pod.containers if c.image == image and c.evidence), None) or _pod_ev(pod, f"image {image}")
            out.append(CudaNeed((int(m.group("maj")), int(m.group("min"))), "image tag", image, ev))
    for log in (logs.for_pod(pod.name) if logs else []):
        text = messages_text(log)
        if "torch" not in text and "PyTorch" not in text and "CUDA Version " not in text and "Cuda compilation tools" not in text:
            continue  # what _TORCH, _BANNER and _BUILT_WITH need: most logs are skipped without a regex per line
        for ln in log.lines:
            m = _TORCH.search(ln.message)
            if m:
                maj, mi = m.group("maj") or m.group("maj2"), m.group("min") or m.group("min2")
                out.append(CudaNeed((int(maj), int(mi)), "framework wheel", ln.message.strip(), ln.evidence()))
                break
            b = _BANNER.match(ln.message.strip())
            if b:
                out.append(CudaNeed((int(b.group("maj")), int(b.group("min"))), "CUDA banner", ln.message.strip(), ln.evidence()))
            w = _BUILT_WITH.match(ln.message.strip())
            if w:
                how = "framework build" if w.group(0).startswith("CUDA used") else "nvcc in the image"
                out.append(CudaNeed((int(w.group("maj")), int(w.group("min"))), how, ln.message.strip(), ln.evidence()))
    return out


def require_satisfied(expr: str, driver: str, max_cuda: str) -> bool:
    """NVIDIA_REQUIRE_CUDA as nvidia-container-cli reads it: space-separated alternatives (OR) of comma-separated
    conditions (AND). cuda/driver terms are evaluated; brand/arch terms are assumed to match (the image lists
    every brand)."""
    cuda_v, drv = versions.cuda_tuple(max_cuda), versions.vtuple(driver)
    for alt in expr.split():
        ok = True
        for t in _REQUIRE_TERM.finditer(alt):
            have = cuda_v if t.group("what") == "cuda" else drv
            want = versions.cuda_tuple(t.group("ver")) if t.group("what") == "cuda" else versions.vtuple(t.group("ver"))
            have = have[: len(want)]
            if not _OPS[t.group("op")](have, want):
                ok = False
        if ok:
            return True
    return False


def _node_for(pod: Pod, inventory: GpuInventory) -> NodeGpus | None:
    if pod.node:
        return inventory.for_node(pod.node)
    with_driver = [n for n in inventory.nodes if n.driver_version]
    return with_driver[0] if len(with_driver) == 1 else None


def _max_cuda(ng: NodeGpus) -> tuple[str | None, Evidence | None]:
    if ng.cuda_version:
        return ng.cuda_version, ng.cuda_evidence
    b = versions.branch_of(ng.driver_version or "")
    return (b.max_cuda, ng.driver_evidence) if b else (None, None)


@check("CU001", "workload-cuda-newer-than-driver")
def cuda_vs_driver(cluster: Cluster, inventory: GpuInventory, logs: Logs | None = None) -> Iterable[Hit]:
    """A workload was built for a newer CUDA than its node's driver supports.

    What it does: reads the CUDA a pod needs (NVIDIA_REQUIRE_CUDA / CUDA_VERSION env, image tags such as
    cuda:13.0.1-... or ...-cuda12.8-..., framework wheels such as torch ...+cu128, the CUDA banner NVIDIA images
    print) and compares it with the highest CUDA of the node's driver (nvidia-smi "CUDA Version", GFD labels or
    the branch table). A newer major needs forward compatibility; a newer minor of the same major works through
    minor-version compatibility, which the finding explains with its limits.
    Why it matters: "CUDA driver version is insufficient for CUDA runtime version" (or the toolkit's "requirement
    error: unsatisfied condition: cuda>=...") is the most common self-inflicted outage; the cure depends on which
    compatibility mechanism applies.
    How to fix: keep the driver ahead (upgrade the branch), use an image built for the node's CUDA, or on
    data-center GPUs add the cuda-compat package deliberately (forward compatibility, with its limits).
    References: https://docs.nvidia.com/deploy/cuda-compatibility/; knowledge/driver_branches.toml
    """
    for pod in cluster.pods:
        needs = needs_of(pod, logs)
        if not needs:
            continue
        ng = _node_for(pod, inventory)
        if ng is None or not ng.driver_version:
            continue
        max_cuda, cuda_ev = _max_cuda(ng)
        if not max_cuda:
            continue
        have = versions.cuda_tuple(max_cuda)
        need = max(needs, key=lambda n: n.version)
        if need.version <= have:
            continue
        insufficient = [ln for _, ln in (logs.grep(_INSUFFICIENT, pod=pod.name) if logs else [])]
        evidence = tuple(e for e in dict.fromkeys([need.evidence, *(ln.evidence() for ln in insufficient[:2]), cuda_ev, ng.driver_evidence]) if e)
        where = f"{pod.namespace + '/' if pod.namespace else ''}{pod.name}"
        common = dict(node=ng.node, component=f"pod/{where}", evidence=evidence)
        facts = {"needs": need.label, "how": need.how, "node_max_cuda": max_cuda, "driver": ng.driver_version}
        consumer = bool(ng.product and _CONSUMER.search(ng.product))
        if need.version[0] > have[0] and need.require and require_satisfied(need.require, ng.driver_version, max_cuda) and not consumer:
            fc = versions.forward_compat()
            yield Hit(
                title=f"{where} runs CUDA {need.label} on driver {ng.driver_version} (CUDA {max_cuda}) only through forward compatibility",
                explanation=f"The image's NVIDIA_REQUIRE_CUDA accepts this driver branch by its brand/driver clauses, which is how images that "
                            f"bundle cuda-compat declare forward compatibility: a newer CUDA major on an older branch. {fc['gpus']} "
                            f"{fc['requires']} It is a deliberate override, not something to build on."
                            + (" The pod's log shows it failing anyway." if insufficient else ""),
                severity=Severity.ERROR if insufficient else Severity.WARNING, role=Role.ROOT_CAUSE, confidence=0.75,
                facts={**facts, "mechanism": "forward"}, fixes=_major_fixes(need, ng, max_cuda)[2:], **common,
            )
            continue
        if need.version[0] > have[0]:
            yield Hit(
                title=f"{where} needs CUDA {need.label} ({need.how}); its node's driver {ng.driver_version} supports up to {max_cuda}",
                explanation=f"The workload's CUDA major ({need.version[0]}) is newer than the driver's ({have[0]}). Backward and minor-version "
                            "compatibility do not cover a new major: it fails with 'CUDA driver version is insufficient for CUDA runtime "
                            "version' unless forward compatibility is set up."
                            + (" The pod's log already shows that error." if insufficient else ""),
                severity=Severity.ERROR, role=Role.ROOT_CAUSE, confidence=0.85, facts=facts,
                fixes=_major_fixes(need, ng, max_cuda), **common,
            )
            continue
        min_drv = versions.minor_compat_min(need.version[0])
        works = min_drv is not None and versions.vtuple(ng.driver_version) >= versions.vtuple(min_drv)
        blocked = need.require is not None and not require_satisfied(need.require, ng.driver_version, max_cuda)
        limitation = versions.minor_compat_limitation(need.version[0])
        if works and not blocked and not insufficient:
            yield Hit(
                title=f"{where} runs CUDA {need.label} on driver {ng.driver_version} (CUDA {max_cuda}) through minor-version compatibility",
                explanation=f"Same CUDA major ({need.version[0]}): any {need.version[0]}.x runtime runs on a driver that supports "
                            f"{need.version[0]}.0 (>= {min_drv}), so this works. Limits: {limitation}",
                severity=Severity.INFO, role=Role.INFO, confidence=0.8, facts={**facts, "mechanism": "minor-version"},
                fixes=(Fix(FixKind.PERMANENT, f"Nothing required; to use features of CUDA {need.label} (or newer PTX), move the driver to a "
                                              "branch whose CUDA version is at least that.", ()),), **common,
            )
        else:
            why = ("the container toolkit enforces the image's NVIDIA_REQUIRE_CUDA and refuses to start it ('requirement error: "
                   f"unsatisfied condition: cuda>={need.label}')" if blocked else
                   "the log shows 'CUDA driver version is insufficient', so the compatibility path does not hold (PTX JIT or a newer-driver feature)"
                   if insufficient else f"the driver is older than {min_drv}, the minimum for minor-version compatibility")
            fixes = [Fix(FixKind.PERMANENT, f"Upgrade the driver to a branch whose CUDA version is at least {need.label}.", ())]
            if blocked:
                owner = f" (owner: {pod.owner})" if pod.owner else ""
                fixes.insert(0, Fix(FixKind.WORKAROUND, "Knowingly rely on minor-version compatibility: skip the toolkit's requirement check "
                                                         f"in the container spec of the controller that runs {where}{owner} (only if the "
                                                         "application ships SASS for this GPU).",
                                    snippet="env:\n- name: NVIDIA_DISABLE_REQUIRE\n  value: \"true\"\n", snippet_language="yaml"))
            yield Hit(
                title=f"{where} needs CUDA {need.label}; driver {ng.driver_version} (CUDA {max_cuda}) does not run it: {why.split(' (')[0]}",
                explanation=f"Same CUDA major, newer minor: minor-version compatibility would normally cover it, but {why}. Limits of that "
                            f"mechanism: {limitation}",
                severity=Severity.ERROR, role=Role.ROOT_CAUSE, confidence=0.75, facts={**facts, "mechanism": "minor-version", "blocked": blocked},
                fixes=tuple(fixes), **common,
            )


def _major_fixes(need: CudaNeed, ng: NodeGpus, max_cuda: str) -> tuple[Fix, ...]:
    """Use an older image; forward compatibility with its limits; upgrade the branch (the last one always)."""
    fc = versions.forward_compat()
    consumer = bool(ng.product and _CONSUMER.search(ng.product))
    pkg = f"cuda-compat-{need.version[0]}-{need.version[1]}"
    target = sorted((b for b in versions.branches().values() if b.max_cuda_major >= need.version[0] and b.type in ("LTS", "production")),
                    key=lambda b: versions.cuda_tuple(b.max_cuda))
    upgrade = next((b for b in target if versions.cuda_tuple(b.max_cuda) >= need.version), target[-1] if target else None)
    fixes = [
        Fix(FixKind.IMMEDIATE, f"Run an image (or wheel) built for CUDA {versions.cuda_tuple(max_cuda)[0]}.x on this node (minor-version "
                               f"compatibility runs any {versions.cuda_tuple(max_cuda)[0]}.x on this driver), e.g. a torch "
                               f"+cu{versions.cuda_tuple(max_cuda)[0]}x wheel or a matching nvidia/cuda tag.", ()),
        Fix(FixKind.WORKAROUND,
            ("Forward compatibility will NOT work here: " + fc["gpus"] + f" This node has {ng.product} (CUDA error 804 "
             "'forward compatibility was attempted on non supported HW').") if consumer else
            (f"Forward compatibility: install {pkg} in the image and put its libraries first "
             f"(LD_LIBRARY_PATH=/usr/local/cuda/compat or ldconfig). Limits: {fc['gpus']} {fc['requires']} "
             f"It is a deliberate override, not something to build on; a mismatch fails with {fc['errors'][1].split(':')[0]}."),
            () if consumer else (f"apt-get install -y {pkg}",)),
    ]
    if upgrade:
        until = f" (supported until {upgrade.eol:%B %Y})" if upgrade.eol else ""
        fixes.append(Fix(FixKind.PERMANENT, f"Upgrade {ng.node or 'the node'} to driver branch {upgrade.branch} {upgrade.type}{until}, "
                                            f"which runs CUDA {upgrade.max_cuda} natively; keep the driver ahead of the workloads.", ()))
    return tuple(fixes)


# ---------------------------------------------------------------------------------------------------------------
# CUDA errors read from any log (workload, validator, pasted tracebacks), named from the catalogue
# ---------------------------------------------------------------------------------------------------------------

# Lines a dedicated check or failure class already reads (CU001/CU101 35, CU102 100, CU103 222, CU104 804,
# UD102 802, WL101 out of memory, WL103 busy, OP104 the validator): CU106 leaves those lines to them.
_OWN_SIGNATURES = ("cuda.", "validator.cuda.")
# 209 and 98 (no code for this GPU's architecture) are CU107's.
_ARCH_CODES = {209, 98}
# Xids that mean the GPU (memory, bus, firmware, NVLink) rather than the application.
_ECC_XIDS = {48, 63, 64, 92, 94, 95, 140}
_HW_REFINED = {3, 214, 220, 226, 700, 719, 999}
# Codes that are normal results, not failures: 600 (a query says "not ready yet"), 4 (CUDA called during exit).
_ROUTINE = {4, 600}


@dataclass
class _Seen:
    code: int
    how: str
    matches: list  # [(ContainerLog, LogLine)]


def _cuda_lines(logs: Logs) -> dict[tuple, dict[int, _Seen]]:
    """(namespace, pod or artifact, node) -> code -> the lines that name it, for lines no cuda.* signature owns.
    Two checks ask for the same run's logs (CU106, then the architecture check): worked out once (read it, never
    change it)."""
    global _last_cuda
    ref, size, found = _last_cuda
    if ref() is logs and size == len(logs.logs):
        return found
    found = _cuda_lines_of(logs)
    _last_cuda = (weakref.ref(logs), len(logs.logs), found)
    return found


_last_cuda: tuple = (lambda: None, 0, {})  # (the logs, how many, their _cuda_lines): the last run's only, held weakly


def _cuda_lines_of(logs: Logs) -> dict[tuple, dict[int, _Seen]]:
    from gpusleuth.knowledge import cuda_errors

    owned = logs.signatures_at()
    out: dict[tuple, dict[int, _Seen]] = {}
    for log in logs.logs:
        if log.kind == "kernel":
            continue
        text = messages_text(log)
        if "cuda" not in text and "CUDA" not in text and "Cuda" not in text:
            continue
        for ln in log.lines:
            msg = ln.message
            if "cuda" not in msg.lower():
                continue
            sigs = owned.get((ln.artifact, ln.line), ())
            if any(s.id.startswith(_OWN_SIGNATURES) for s in sigs):
                continue
            if ln.level in ("info", "debug") and "error" not in msg.lower():
                continue  # a library's debug trace naming a code is not a failure
            for err, how in cuda_errors.find_in(msg):
                if err.code in _ROUTINE:
                    continue
                key = (log.namespace, ln.pod or log.pod or log.artifact, log.node)
                seen = out.setdefault(key, {}).setdefault(err.code, _Seen(err.code, how, []))
                seen.matches.append((log, ln))
    return out


def _fill(cmd: str, pod: str | None, ns: str | None, node: str | None) -> str:
    return cmd.replace("<pod>", pod or "<pod>").replace("<namespace>", ns or "default").replace("<node>", node or "<node>")


def _xids_on(kernel, node: str | None, codes: set[int] | None = None) -> list:
    """Xid events on the node (any node when the artifacts hold one kernel log without a name), optionally of some codes."""
    if kernel is None:
        return []
    from gpusleuth.knowledge import xid as xid_table

    nodes = {x.node for x in kernel.xids}
    out = []
    for x in kernel.xids:
        if node and x.node and x.node != node and len(nodes) > 1:
            continue
        row = xid_table.xid(x.code)
        if codes is not None and x.code not in codes:
            continue
        if codes is None and (row is None or row.is_application):
            continue
        out.append(x)
    return out


@check("CU106", "cuda-error-in-log-points-below")
def cuda_error_in_log(logs: Logs, cluster: Cluster | None = None, kernel: KernelEvents | None = None) -> Iterable[Hit]:
    """A CUDA error code in a workload's log, named from the CUDA error catalogue and read down to its layer.

    What it does: reads every log line that names a CUDA error (runtime or driver name, the runtime's message
    after "CUDA error:", "(error code ...)", "Error 802:", "returned 35") and looks the code up in
    knowledge/cuda_errors.toml (CUDA 12.9 headers): what it means and which layer it usually points to. The
    layer is refined by what else the artifacts show: an uncorrectable ECC error (214), an unknown error (999),
    an initialization error (3) or a launch failure (700/719) next to a hardware Xid on the same node points at
    the GPU; the same codes with only application Xids or none stay with the workload. Lines that a more
    specific check reads (insufficient driver, no device, fabric not initialised, out of memory, PTX, forward
    compatibility, the cuda-validator) are left to it.
    Why it matters: users usually have only their job's traceback; the code names a condition several layers
    down (a GPU with a failing memory row, a stub libcuda, an MPS daemon not running), and the next step
    differs completely by layer: restart the job, fix the pod spec, or drain the node.
    How to fix: follow the layer the finding names: for hardware, drain the node and run the Xid ladder; for
    the container toolkit, fix how the GPU is injected; for the workload, fix the code or its library versions.
    `gpusleuth cuda-error CODE` prints every cause with the command that confirms it.
    References: https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html; https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html; https://github.com/vllm-project/vllm/issues/5222; https://github.com/huggingface/accelerate/issues/1192
    """
    from gpusleuth.knowledge import cuda_errors
    from gpusleuth.knowledge import xid as xid_table
    from gpusleuth.model.layers import Layer

    for (ns, who, log_node), by_code in _cuda_lines(logs).items():
        pod = cluster.pod(who) if cluster is not None and who else None
        node = (pod.node if pod else None) or log_node
        pod_name = pod.name if pod else (who if by_code and any(log.pod for s in by_code.values() for log, _ in s.matches) else None)
        where = f"pod {(ns + '/') if ns else ''}{pod_name}" if pod_name else who
        for code, seen in by_code.items():
            if code in _ARCH_CODES:
                continue
            err = cuda_errors.lookup(code)
            first_log, first = seen.matches[0]
            evidence = [ln.evidence() for _, ln in seen.matches[:3]]
            layer, confidence = err.layer, 0.6
            why = err.meaning
            if err.group in ("api-usage", "profiler"):
                confidence = 0.45
            if code in _HW_REFINED:
                hw = _xids_on(kernel, node, _ECC_XIDS if code == 214 else None)
                if hw:
                    layer, confidence = "hardware", 0.8
                    codes = ", ".join(sorted({str(x.code) for x in hw}))
                    why += (f" The kernel log shows Xid {codes} on {'the same node' if node else 'the node'}: the GPU, not the "
                            "application, failed.")
                    evidence += [x.evidence for x in hw[:2]]
                elif code == 214:
                    why += " No Xid is in the artifacts to confirm it; read the node's kernel log and ECC counters."
                    confidence = 0.65
                elif code in (700, 719, 999, 3):
                    app = _xids_on(kernel, node, {c for c, r in xid_table.catalog().items() if r.is_application})
                    if app:
                        layer, confidence = "workload", 0.7
                        why += f" The kernel log shows only application Xids ({', '.join(sorted({str(x.code) for x in app}))}): the code, not the GPU."
                        evidence += [x.evidence for x in app[:1]]
            fixes = tuple(
                Fix(FixKind.IMMEDIATE, f"{c.layer}: {c.when}.",
                    (_fill(c.confirm, pod_name, ns, node),) if c.confirm else ())
                for c in err.causes
            ) or (Fix(FixKind.IMMEDIATE, "Read the first CUDA error in the log (later ones often follow from it); rerun with "
                                         "CUDA_LAUNCH_BLOCKING=1 to see the call that failed.", ()),)
            yield Hit(
                title=f"CUDA error {err.code} ({err.runtime or err.driver}) in {where}: {err.message or err.header}",
                explanation=f"{where} logged \"{clip(first.message, 200)}\" ({first.evidence().cite()}), CUDA error "
                            f"{err.label}. {why}",
                severity=Severity.CRITICAL if layer == "hardware" and confidence >= 0.8 else
                Severity.WARNING if err.group in ("api-usage", "profiler") else Severity.ERROR,
                role=Role.ROOT_CAUSE,
                evidence=tuple(dict.fromkeys(e for e in evidence if e)),
                fixes=fixes,
                node=node,
                component=f"pod/{(ns + '/') if ns else ''}{pod_name}" if pod_name else "workload",
                confidence=confidence,
                layer=Layer(layer),
                facts={"code": err.code, "runtime": err.runtime, "driver": err.driver, "group": err.group,
                       "catalogue_layer": err.layer, "pod": pod_name, "lines": len(seen.matches)},
            )


# ---------------------------------------------------------------------------------------------------------------
# No kernel image for the GPU: the wheel's architectures against the GPU's compute capability
# ---------------------------------------------------------------------------------------------------------------

_TORCH_CAP = re.compile(r"(?P<gpu>\S.*?) with CUDA capability (?P<sm>sm_\d+) is not compatible with the current PyTorch installation")
_TORCH_ARCHS = re.compile(r"(?:current PyTorch install supports CUDA capabilities|PyTorch install supports CUDA capabilities)\s+(?P<archs>(?:sm_\d+\s*)+)")


def _sm_of(cc: str) -> str:
    return "sm_" + cc.replace(".", "")


@check("CU107", "no-kernel-image-for-gpu-architecture")
def no_kernel_image(logs: Logs, cluster: Cluster | None = None, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """`no kernel image is available for execution on the device`: the binary was not built for this GPU.

    What it does: finds CUDA error 209/98 ("no kernel image is available for execution on the device",
    cudaErrorNoKernelImageForDevice, CUDA_ERROR_NO_BINARY_FOR_GPU, "invalid device function") and PyTorch's
    warning "... with CUDA capability sm_XY is not compatible with the current PyTorch installation", reads the
    architectures the wheel says it was built for ("supports CUDA capabilities sm_50 sm_60 ..."), and the GPU's
    compute capability from the warning or from the GPU model (nvidia-smi, NVML, GFD labels) through
    knowledge/compute_capability.toml; it names the missing architecture.
    Why it matters: the driver, the container and the GPU are all fine: the framework or extension in the
    image simply has no code for this GPU (an old wheel on a new GPU, or a wheel that dropped an old GPU).
    Upgrading drivers or draining nodes does not help.
    How to fix: install a framework build that includes the GPU's architecture (e.g. a newer torch wheel for
    the GPU's CUDA, cu128 or later for Blackwell sm_120), or rebuild the extension with
    TORCH_CUDA_ARCH_LIST / -gencode for it; or schedule the workload on GPUs the image supports (node selector on
    nvidia.com/gpu.product or nvidia.com/gpu.compute.major).
    References: https://developer.nvidia.com/cuda-gpus; https://github.com/pytorch/pytorch/issues/31285; https://github.com/sconlyshootery/FeatDepth/issues/68; https://github.com/ostris/ai-toolkit/issues/530
    """
    from gpusleuth.knowledge import cuda_errors

    errors = {k: {c: s for c, s in by.items() if c in _ARCH_CODES} for k, by in _cuda_lines(logs).items()}
    hits = logs.grep_many(("is not compatible with the current PyTorch installation", "PyTorch install supports CUDA capabilities"))
    warn_by: dict[tuple, list] = {}
    for needle, found in hits.items():
        for log, ln in found:
            warn_by.setdefault((log.namespace, ln.pod or log.pod or log.artifact, log.node), []).append(ln)
    for key in list(dict.fromkeys([*[k for k, v in errors.items() if v], *warn_by])):
        ns, who, log_node = key
        pod = cluster.pod(who) if cluster is not None and who else None
        node = (pod.node if pod else None) or log_node
        pod_name = pod.name if pod else who
        where = f"pod {(ns + '/') if ns else ''}{pod_name}" if pod else who
        err_lines = [ln for s in errors.get(key, {}).values() for _, ln in s.matches]
        warns = sorted(warn_by.get(key, []), key=lambda ln: ln.line)
        gpu_name = sm = None
        built: list[str] = []
        for ln in warns:
            m = _TORCH_CAP.search(ln.message)
            if m:
                gpu_name, sm = m.group("gpu").strip(), m.group("sm")
            a = _TORCH_ARCHS.search(ln.message)
            if a:
                built = a.group("archs").split()
        product_ev = None
        if sm is None and inventory is not None:
            ng = inventory.for_node(node) if node else (inventory.nodes[0] if len(inventory.nodes) == 1 else None)
            names = [g.name for g in (ng.gpus if ng else []) if g.name] or ([ng.product] if ng and ng.product else [])
            cap = cuda_errors.capability_of(names[0]) if names else None
            if cap:
                gpu_name, sm = names[0], cap.sm
                product_ev = ng.product_evidence or next((g.ev("name") for g in ng.gpus if g.name), None) if ng else None
        if not err_lines and not (sm and built and sm not in built):
            continue  # a warning whose architecture is in the list, or nothing to go on
        cc = f"{sm[3:-1]}.{sm[-1]}" if sm else None
        missing = sm is not None and built and sm not in built
        facts = {"gpu": gpu_name, "gpu_sm": sm, "built_for": built, "pod": pod_name if pod else None}
        if missing:
            title = f"{where}: the framework was built for {' '.join(built)}, not for the {gpu_name}'s {sm}"
            why = (f"The {gpu_name} has compute capability {cc} ({sm}); the framework in the image carries code for {' '.join(built)} "
                   "only, so its kernels cannot run on this GPU (CUDA error 209, no kernel image).")
            confidence = 0.9
        elif sm:
            title = f"{where}: no kernel image for the {gpu_name} ({sm})"
            why = (f"The {gpu_name} has compute capability {cc} ({sm}); a library in the image (the framework, an extension or a "
                   "custom kernel) has no code for it.")
            confidence = 0.75
        else:
            title = f"{where}: no kernel image for this GPU's architecture"
            why = ("A library in the image has no code for the GPU's compute capability; the artifacts do not name the GPU. "
                   "Compare `nvidia-smi --query-gpu=name,compute_cap` with the architectures the image was built for.")
            confidence = 0.65
        evidence = [*(ln.evidence() for ln in err_lines[:2]), *(ln.evidence() for ln in warns[:2]), product_ev]
        nsf = f" -n {ns}" if ns else ""
        cmds = ((f"kubectl exec {pod_name}{nsf} -- nvidia-smi --query-gpu=name,compute_cap --format=csv",
                 f"kubectl exec {pod_name}{nsf} -- python -c 'import torch; print(torch.__version__, torch.cuda.get_arch_list())'")
                if pod else ("nvidia-smi --query-gpu=name,compute_cap --format=csv",))
        yield Hit(
            title=title,
            explanation=why + " The driver and the GPU are fine; the image is at fault.",
            severity=Severity.ERROR, role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(
                Fix(FixKind.IMMEDIATE, "Compare the GPU's compute capability with the architectures the framework was built for.", cmds),
                Fix(FixKind.PERMANENT, f"Use a framework build that includes {sm or 'the GPU architecture'} (for torch, a wheel for a newer "
                                       "CUDA: cu118+ for Hopper/Ada, cu128+ for Blackwell), or rebuild the extension with "
                                       f"TORCH_CUDA_ARCH_LIST={cc or '<cc>'}; or schedule the pod on GPUs the image supports.",
                    snippet=("nodeSelector:\n  nvidia.com/gpu.product: <a GPU model the image supports>\n"), snippet_language="yaml"),
            ),
            node=node, component=f"pod/{(ns + '/') if ns else ''}{pod_name}" if pod else "workload",
            confidence=confidence, facts=facts,
        )
