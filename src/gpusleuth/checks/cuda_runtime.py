"""CUDA runtime: the CUDA a workload brings (image, framework wheel) against what the node's driver runs (CU0xx).

Three mechanisms decide whether a CUDA application runs on a driver: backward compatibility (a newer driver runs older CUDA, always), minor-version
compatibility (any 12.x on a driver that supports 12.0), forward compatibility (cuda-compat: a newer CUDA
major on an older branch, data-center GPUs only, a deliberate override).
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.gpus import GpuInventory, NodeGpus
from gpusleuth.facts.logs import Logs, messages_text
from gpusleuth.knowledge import versions
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.k8s import Pod

_IMAGE_CUDA = re.compile(r"cuda[:\-_]?(?P<maj>\d{2})\.(?P<min>\d)(?!\d)", re.I)
_CU_TAG = re.compile(r"(?:^|[+\-_.])cu(?P<maj>1\d)(?P<min>\d)\b")
_TORCH = re.compile(r"\btorch\b[^\n]{0,40}?\+cu(?P<maj>1\d)(?P<min>\d)\b|PyTorch version: \S+\+cu(?P<maj2>1\d)(?P<min2>\d)\b")
_BANNER = re.compile(r"^CUDA Version (?P<maj>\d{2})\.(?P<min>\d+)(?:\.\d+)?\s*$")
_REQUIRE_TERM = re.compile(r"(?P<what>cuda|driver)\s*(?P<op>>=|<=|==|=|>|<)\s*(?P<ver>[\d.]+)")
_INSUFFICIENT = "CUDA driver version is insufficient for CUDA runtime version"
_OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "=": operator.eq, "==": operator.eq}
_CONSUMER = re.compile(r"GeForce|TITAN|RTX \d{4}(?! Ada)|Quadro", re.I)


@dataclass(frozen=True)
class CudaNeed:
    version: tuple[int, int]
    how: str  # NVIDIA_REQUIRE_CUDA | CUDA_VERSION | image tag | framework wheel | CUDA banner
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
        if "torch" not in text and "PyTorch version: " not in text and "CUDA Version " not in text:
            continue  # what _TORCH and _BANNER need: most logs are skipped without a regex per line
        for ln in log.lines:
            m = _TORCH.search(ln.message)
            if m:
                maj, mi = m.group("maj") or m.group("maj2"), m.group("min") or m.group("min2")
                out.append(CudaNeed((int(maj), int(mi)), "framework wheel", ln.message.strip(), ln.evidence()))
                break
            b = _BANNER.match(ln.message.strip())
            if b:
                out.append(CudaNeed((int(b.group("maj")), int(b.group("min"))), "CUDA banner", ln.message.strip(), ln.evidence()))
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
