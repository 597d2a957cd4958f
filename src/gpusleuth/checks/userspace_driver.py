"""Userspace driver: NVML / libcuda and the driver branch they belong to (UD0xx).

nvidia-smi talks to the driver through NVML, so what it cannot read (ERR!, "Unable to determine the device
handle", "Failed to initialize NVML") is evidence about this layer; so are the driver's version and branch.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.errors import NotApplicable
from gpusleuth.checks.gpu_common import cordon_drain, diag_before_trust, reboot_node
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.errors import ErrorLines
from gpusleuth.facts.gpus import GpuInventory, KernelEvents
from gpusleuth.facts.configuration import Configuration
from gpusleuth.facts.host import NO_LIBRARY_LISTING, HostFacts, LibraryListings
from gpusleuth.knowledge import versions
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.gpu import UNREACHABLE
from gpusleuth.model.layers import Layer
from gpusleuth.checks.stated_common import stated_hits
from gpusleuth.facts.prose import STATED_CONFIDENCE, Prose

NEAR_EOL = timedelta(days=180)  # warn this long before a branch's end of life
_LOST = ("gpu-lost", "unknown-error", "reset-required")


@check("UD001", "nvml-gpu-unreadable")
def gpu_unreadable(inventory: GpuInventory, kernel: KernelEvents | None = None) -> Iterable[Hit]:
    """NVML cannot talk to a GPU: "GPU is lost", "Unknown Error", "GPU requires reset".

    What it does: collects what nvidia-smi printed instead of a GPU ("Unable to determine the device handle for
    GPU0000:xx:00.0: Unknown Error") and the NVML errors the node probe got, and the kernel's "GPU is lost" lines.
    Why it matters: the GPU is unusable until it is reset; the device plugin marks it unhealthy and pods on it
    fail. It is usually the visible end of a hardware event (Xid 79, 48, 95) or a GSP hang (Xid 119).
    How to fix: drain the node, look for the Xid that preceded it in the kernel log, reset the GPU or reboot the
    node, and run `dcgmi diag -r 3` before trusting it again.
    References: https://github.com/NVIDIA/open-gpu-kernel-modules/issues/387; https://github.com/NVIDIA/nvidia-container-toolkit/issues/69; https://github.com/leptonai/gpud/issues/604
    """
    for ng in inventory.nodes:
        errors = [e for e in ng.errors if e.kind in _LOST]
        lost_lines = [e for e in (kernel.of_kind("gpu-lost") if kernel else []) if e.node in (ng.node, None)]
        if not errors and not lost_lines:
            continue
        hw = kernel is not None and any(b.node in (ng.node, None) and set(b.codes()) & {79, 48, 95, 119, 120} for b in kernel.bursts)
        what = sorted({f"{e.pci_bus_id or 'all GPUs'}: {e.message}" for e in errors}) or [e.message for e in lost_lines[:2]]
        yield Hit(
            title=f"NVML cannot read {len(errors) or len(lost_lines)} GPU(s): {what[0]}",
            explanation="The driver's management library could not open or query the GPU (" + "; ".join(what) + "). "
                        "The GPU is unusable until it is reset; " + ("the hardware/firmware Xid in the kernel log explains it." if hw else
                                                                     "look in the kernel log for the Xid that preceded it."),
            severity=Severity.ERROR, role=Role.SYMPTOM if hw else Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys([*(e.evidence for e in errors if e.evidence), *(e.evidence for e in lost_lines[:2])])),
            node=ng.node, component="nvml", confidence=0.85,
            fixes=(cordon_drain(ng.node, "a GPU is lost to the driver"), reboot_node(ng.node, "a lost GPU only comes back with a reset"),
                   diag_before_trust(ng.node)),
            facts={"errors": [e.kind for e in errors]},
        )


@check("UD002", "driver-library-version-mismatch")
def version_mismatch(inventory: GpuInventory | None = None, kernel: KernelEvents | None = None, host: HostFacts | None = None) -> Iterable[Hit]:
    """The loaded kernel module and the userspace driver libraries are different versions.

    What it does: finds "Failed to initialize NVML: Driver/library version mismatch" from nvidia-smi and the
    kernel's "NVRM: API mismatch: the client has the version X, but this kernel module has the version Y";
    and on the host, the module the kernel runs (/proc/driver/nvidia/version or /sys/module/nvidia/version)
    against the driver installed on disk (`modinfo nvidia`'s version, whose libraries ship with it).
    Why it matters: after a driver upgrade without a reboot (or two driver installs, host and container) no CUDA
    or NVML call works; every GPU pod on the node fails.
    How to fix: reboot the node (or unload and reload the nvidia modules) so the kernel module matches the
    libraries; make sure only one driver installation (host package or driver container) manages the node.
    References: https://github.com/NVIDIA/gpu-operator/issues/898; nvidia-smi 'Failed to initialize NVML: Driver/library version mismatch'; kernel 'NVRM: API mismatch'
    """
    nodes: dict = {}
    if inventory is not None:
        for ng in inventory.nodes:
            for e in ng.errors:
                if e.kind == "version-mismatch":
                    nodes.setdefault(ng.node, []).append(e.evidence)
    versions_seen = {}
    for e in (kernel.of_kind("api-mismatch") if kernel else []):
        nodes.setdefault(e.node, []).append(e.evidence)
        versions_seen[e.node] = e.detail
    on_disk = {}
    for h in host.nodes if host else []:
        mi = h.modinfo.get("nvidia")
        if h.driver is None or mi is None or not mi.found or not mi.version or mi.version == h.driver.version:
            continue
        nodes.setdefault(h.node, []).extend([h.driver.evidence, mi.ev("version")])
        on_disk[h.node] = (h.driver.version, mi, h.smi_driver)
    for node, evidence in nodes.items():
        d = versions_seen.get(node, {})
        pair = f": libraries {d.get('client')}, kernel module {d.get('kernel') or '?'}" if d else ""
        explanation = ("NVML/libcuda refuse to talk to a kernel module of another version. Typical after upgrading the driver "
                       "package without rebooting, or when a host driver and the GPU Operator's driver container both install one.")
        facts = dict(d)
        if node in on_disk:
            loaded, mi, smi = on_disk[node]
            where = f" in {mi.root}" if mi.root else ""
            if not d:
                pair = f": the kernel runs {loaded}, the installed driver{where} is {mi.version}"
            explanation += (f" On the node the kernel runs module {loaded} while the driver installed{where} is {mi.version} "
                            f"({mi.filename or 'modinfo nvidia'}): its libraries and nvidia-smi fail against the loaded module until it is replaced.")
            facts.update(loaded=loaded, installed=mi.version, **({"nvidia_smi": smi} if smi else {}))
        yield Hit(
            title=f"Driver kernel module and libraries differ{pair}",
            explanation=explanation,
            severity=Severity.ERROR, role=Role.ROOT_CAUSE, evidence=tuple(x for x in dict.fromkeys(evidence) if x)[:4], node=node,
            component="nvidia-driver", confidence=0.9 if d or node not in on_disk or len(evidence) > 2 else 0.8,
            fixes=(cordon_drain(node, "no GPU call works until the versions match"),
                   reboot_node(node, "loads the kernel module that matches the installed libraries"),
                   Fix(FixKind.PERMANENT, "Keep one driver installation per node: either the host package or the GPU Operator's driver "
                                          "container (driver.enabled=false when the host has one).", ("cat /proc/driver/nvidia/version",))),
            facts=facts,
        )


@check("UD003", "nvml-field-errors")
def field_errors(inventory: GpuInventory) -> Iterable[Hit]:
    """nvidia-smi shows ERR! (or "Unknown Error") instead of values for a GPU.

    What it does: lists the fields nvidia-smi or NVML could not read per GPU (fan, temperature, power, ECC,
    utilisation); one field (power) alone is usually transient, several at once mean the GPU is in a bad state.
    Why it matters: a GPU that cannot report its temperature or ECC state often has fallen off the bus or hung;
    the device plugin may still advertise it.
    How to fix: look for Xids on that GPU in the kernel log; if several fields fail, drain and reset the GPU.
    References: https://github.com/Azure/azhpc-diagnostics/issues/77 (a lone ERR! is transient)
    """
    for ng, g in inventory.all_gpus():
        bad = [(f, m) for f, m in g.field_errors if "not supported" not in m.lower() and "permission" not in m.lower()]
        if not bad:
            continue
        many = len(bad) >= 2
        yield Hit(
            title=f"{g.label} reports {', '.join(f for f, _ in bad)} as {bad[0][1]}",
            explanation=("Several fields are unreadable at once: the GPU is in a bad state (often after an Xid)."
                         if many else "A single unreadable field is often transient; repeat nvidia-smi and watch the kernel log."),
            severity=Severity.WARNING if many else Severity.INFO, role=Role.SYMPTOM if many else Role.INFO,
            evidence=tuple(dict.fromkeys(g.ev(f) for f, _ in bad)), node=ng.node, component=f"gpu:{g.short_pci}",
            fixes=(Fix(FixKind.IMMEDIATE, "Look for Xids on this GPU and re-read it.", ("dmesg -T | grep -E 'NVRM: Xid'", f"nvidia-smi -q -i {g.index if g.index is not None else g.pci_bus_id}")),),
            confidence=0.7, facts={"fields": [f for f, _ in bad]},
        )


@check("UD004", "nvml-access-limited")
def access_limited(inventory: GpuInventory) -> Iterable[Hit]:
    """NVML answered "Insufficient Permissions" or "Not Supported": some facts could not be read.

    What it does: reports fields and GPUs NVML refused to read: permissions (the probe ran unprivileged) or "Not
    Supported" (consumer GPUs have no ECC, row remapping or power readings).
    Why it matters: absent values are not healthy values; the report says what it could not see.
    How to fix: Run the probe as root (or in a privileged pod) for permission errors; "Not Supported" on a
    consumer GPU needs nothing.
    References: nvidia-ml-py NVMLError_NotSupported / NVMLError_NoPermission
    """
    for ng in inventory.nodes:
        denied = [e for e in ng.errors if e.kind == "insufficient-permissions"]
        unsupported = [(g, f) for g in ng.gpus for f, m in g.field_errors if "not supported" in m.lower()]
        perm_fields = [(g, f) for g in ng.gpus for f, m in g.field_errors if "permission" in m.lower()]
        if denied or perm_fields:
            yield Hit(
                title=f"NVML denied access ({len(denied) + len(perm_fields)} item(s)): results are incomplete",
                explanation="Insufficient Permissions: the reader is not allowed to query some GPU state; those values are unknown, not healthy.",
                severity=Severity.INFO, role=Role.INFO, node=ng.node, component="nvml", confidence=0.9,
                evidence=tuple(dict.fromkeys([*(e.evidence for e in denied if e.evidence), *(g.ev(f) for g, f in perm_fields[:3])])),
                fixes=(Fix(FixKind.IMMEDIATE, "Run the probe as root, or in a privileged pod on the node.", ("sudo gpusleuth node",)),),
                facts={"fields": sorted({f for _, f in perm_fields})},
            )
        if unsupported:
            fields = sorted({f for _, f in unsupported})
            yield Hit(
                title=f"{len({g.index for g, _ in unsupported})} GPU(s) do not support {', '.join(fields)}",
                explanation="NVML returned Not Supported (normal on GeForce/RTX workstation cards, which lack ECC, row remapping and "
                            "some power readings); checks that need those values could not run for these GPUs.",
                severity=Severity.INFO, role=Role.INFO, node=ng.node, component="nvml", confidence=0.9,
                evidence=tuple(dict.fromkeys(g.ev(f) for g, f in unsupported[:3])), facts={"fields": fields},
            )


@check("UD005", "nvml-cannot-reach-driver")
def cannot_reach_driver(inventory: GpuInventory | None = None, kernel: KernelEvents | None = None, host: HostFacts | None = None) -> Iterable[Hit]:
    """nvidia-smi/NVML cannot reach the driver at all (not loaded, library missing, no devices, nouveau).

    What it does: finds "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", "No
    devices were found", NVML's Driver Not Loaded / Library Not Found, and nouveau (the open-source driver)
    holding the GPU in the kernel log; the node's lsmod, when the artifacts have it, says whether the nvidia
    module is loaded at all. The same lines from a tool run inside a container are TK105's.
    Why it matters: with no driver, nothing above works: the toolkit, the device plugin and every pod fail.
    How to fix: check that the nvidia module is loaded (lsmod | grep nvidia) and why not (the driver container's
    log, dmesg); blacklist nouveau and rebuild the initramfs if it is loaded.
    References: nvidia-smi 'NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver'
    """
    nodes: dict = {}
    for ng in (inventory.nodes if inventory else []):
        errs = [e for e in ng.errors if e.kind in UNREACHABLE and not e.run_in]  # inside a container: TK105
        if errs:
            nodes.setdefault(ng.node, {"errors": [], "nouveau": []})["errors"].extend(errs)
    for e in (kernel.of_kind("nouveau") if kernel else []):
        nodes.setdefault(e.node, {"errors": [], "nouveau": []})["nouveau"].append(e)
    for node, found in nodes.items():
        nouveau = found["nouveau"]
        errs = found["errors"]
        kind = errs[0].kind if errs else "nouveau"
        title = {"no-devices": "nvidia-smi finds no GPUs", "library-not-found": "NVML library not found"}.get(kind, "The NVIDIA driver is not loaded")
        fixes = [Fix(FixKind.IMMEDIATE, "See whether the module is loaded and why not.", ("lsmod | grep -E '^nvidia|nouveau'", "dmesg -T | grep -iE 'nvidia|nouveau|NVRM'"))]
        if nouveau:
            fixes.append(Fix(FixKind.PERMANENT, "Blacklist nouveau so the NVIDIA driver can bind the GPU, then rebuild the initramfs and reboot.",
                             ("printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' > /etc/modprobe.d/blacklist-nouveau.conf",
                              "update-initramfs -u || dracut --force", "systemctl reboot")))
        h = host.for_node(node) if host is not None else None
        loaded = h.loaded("nvidia") if h is not None else None
        lsmod = "" if loaded is None else (
            f" The {h.modules.source} of the node lists the nvidia module, so the module is there: look at the device files "
            "(/dev/nvidia*) and the libraries the caller sees." if loaded else
            f" The {h.modules.source} of the node confirms that no nvidia module is loaded.")
        yield Hit(
            title=title + (" (nouveau is bound to the GPU)" if nouveau else ""),
            explanation=("The open-source nouveau driver claimed the GPU, so nvidia.ko cannot bind it. " if nouveau else "")
                        + "Without the NVIDIA kernel driver NVML has nothing to talk to: the container toolkit, device plugin and every GPU pod fail above it."
                        + lsmod,
            severity=Severity.ERROR, role=Role.ROOT_CAUSE, layer=Layer.KERNEL_DRIVER if nouveau else None,
            evidence=tuple(dict.fromkeys([*(e.evidence for e in errs if e.evidence), *(e.evidence for e in nouveau[:2]),
                                          *((h.module_evidence("nvidia"),) if loaded is not None else ())])),
            node=node, component="nvidia-driver", confidence=0.75 if not nouveau else 0.85, fixes=tuple(fixes),
            facts={"kind": kind, "nouveau": bool(nouveau)},
        )


@check("UD007", "persistence-mode-off")
def persistence_off(inventory: GpuInventory) -> Iterable[Hit]:
    """Persistence mode is off on data-center GPUs.

    What it does: lists GPUs whose persistence mode is Disabled.
    Why it matters: without it the driver tears the GPU state down when the last client exits, so every job
    start pays the initialisation again and nvidia-smi is slow; NVIDIA recommends nvidia-persistenced.
    How to fix: Run the nvidia-persistenced daemon (the GPU Operator's driver container does), or
    `nvidia-smi -pm 1` until the next reboot.
    References: NVIDIA driver persistence documentation (nvidia-persistenced)
    """
    for ng in inventory.nodes:
        off = [g for g in ng.gpus if g.persistence_mode is False]
        if off:
            yield Hit(
                title=f"Persistence mode is off on {len(off)} GPU(s)",
                explanation="The driver unloads GPU state whenever no client holds it; job starts and NVML calls pay the initialisation each time.",
                severity=Severity.INFO, role=Role.INFO, evidence=tuple(g.ev("persistence_mode") for g in off[:3]), node=ng.node,
                component="nvidia-persistenced", confidence=0.9,
                fixes=(Fix(FixKind.PERMANENT, "Enable the persistence daemon.", ("systemctl enable --now nvidia-persistenced",)),),
                facts={"gpus": [g.index for g in off]},
            )


@check("UD010", "driver-branch-end-of-life")
def driver_eol(inventory: GpuInventory | None = None, today: date | None = None, prose: Prose | None = None) -> Iterable[Hit]:
    """The node's driver branch is past (or close to) its end of life.

    What it does: maps the driver version (nvidia-smi, NVML, dcgm-exporter or GFD's cuda.driver labels) to its
    branch in knowledge/driver_branches.toml and compares the branch's EOL with today's date
    (GPUSLEUTH_TODAY=YYYY-MM-DD judges it as of another day). With no machine-read driver version, a version
    a ticket states ("driver 470.82.01") is judged the same way, marked "stated", at lower confidence.
    Why it matters: an EOL branch gets no more bug or security fixes; R535 LTS ended in June 2026.
    How to fix: plan the move to a supported branch (the current LTS, R580 until June 2028, or the production
    branch), through the GPU Operator's driver.version or the host package.
    References: https://docs.nvidia.com/datacenter/tesla/drivers/615/supported-drivers-and-cuda-toolkit-versions.html; knowledge/driver_branches.toml
    """
    today = today or date.today()
    read = [ng for ng in (inventory.nodes if inventory else ()) if ng.driver_version]
    said = [s for s in (prose.stated_of("driver") if prose else ()) if versions.branch_of(s.value)] if not read else []
    if not read and not said:
        raise NotApplicable("no driver version in the artifacts (nvidia-smi, NVML, GFD labels) and none stated")
    candidates = [(ng.driver_version, ng.driver_evidence, ng.node, False) for ng in read] + [(s.value, s.evidence, None, True) for s in said]
    for version, evidence, node, stated in candidates:
        b = versions.branch_of(version)
        if b is None or b.eol is None:
            continue
        ev = (evidence,) if evidence else ()
        shown = f"{version} (stated)" if stated else version
        told = (f"A ticket states driver {version} ({evidence.cite()}); no machine output in the artifacts shows the node's driver. "
                if stated and evidence else "")
        weight = STATED_CONFIDENCE / 0.9 if stated else 1.0
        check_it = (Fix(FixKind.IMMEDIATE, "The version comes from a sentence: confirm it on the node.", ("nvidia-smi --query-gpu=driver_version --format=csv,noheader",)),) if stated else ()
        target = _supported_target(today)
        fix = Fix(FixKind.PERMANENT, f"Move to a supported branch{(': ' + target) if target else ''}, e.g. through the GPU Operator "
                                     "(driver.version) or the host driver package, node by node.", ())
        if b.eol < today:
            yield Hit(
                title=f"Driver {shown} ({b.branch} {b.type}) is past end of life since {b.eol:%B %Y}",
                explanation=told + f"{b.branch} ({b.type}) reached end of life on {b.eol.isoformat()}, {(today - b.eol).days} days ago: no more bug or "
                            f"security fixes. It supports CUDA up to {b.max_cuda}.",
                # A risk to plan for, not the cause of what is failing now: it must not read as one.
                severity=Severity.WARNING, role=Role.CONTRIBUTING, evidence=ev, node=node, component="nvidia-driver",
                confidence=round((0.9 if b.verified else 0.7) * weight, 2), fixes=(*check_it, fix),
                facts={"stated": stated, "branch": b.branch, "eol": b.eol.isoformat(), "days_past": (today - b.eol).days, "today": today.isoformat()},
            )
        elif b.eol - today <= NEAR_EOL:
            yield Hit(
                title=f"Driver {shown} ({b.branch} {b.type}) reaches end of life on {b.eol:%d %B %Y}",
                explanation=told + f"{(b.eol - today).days} days left on {b.branch}; plan the upgrade before fixes stop.",
                severity=Severity.INFO, role=Role.INFO, evidence=ev, node=node, component="nvidia-driver",
                confidence=round((0.9 if b.verified else 0.7) * weight, 2), fixes=(*check_it, fix),
                facts={"stated": stated, "branch": b.branch, "eol": b.eol.isoformat(), "days_left": (b.eol - today).days, "today": today.isoformat()},
            )


def _supported_target(today: date) -> str:
    """The supported LTS and production branches at `today`, newest EOL first ("R580 LTS until June 2028")."""
    ok = [b for b in versions.branches().values() if b.eol and b.eol >= today + NEAR_EOL and b.type in ("LTS", "production")]
    return ", ".join(f"{b.branch} {b.type} until {b.eol:%B %Y}" for b in sorted(ok, key=lambda b: b.eol, reverse=True))


@check("UD011", "cdmm-blocks-mig-and-gds")
def cdmm_trap(inventory: GpuInventory, cluster: Cluster | None = None, config: Configuration | None = None) -> Iterable[Hit]:
    """GB200/GH200 on driver 580.65.06+ under Kubernetes: CDMM is on, and MIG or GPUDirect Storage is wanted.

    What it does: on nodes whose GPUs are GB200 or GH200 and whose driver is at least 580.65.06, looks for MIG
    being enabled, pending, or requested through the nvidia.com/mig.config label, and for GPUDirect Storage
    enabled in the ClusterPolicy (spec.gds.enabled).
    Why it matters: from 580.65.06 the driver turns on Coherent Driver Memory Management by default for these
    GPUs on Kubernetes, and CDMM is incompatible with MIG and GPUDirect Storage: the MIG manager or
    GDS fails, and it is not on the datasheet.
    How to fix: do not plan MIG or GDS on these nodes while CDMM is on; check NVIDIA's guidance for the driver
    parameter before changing it, or use whole GPUs.
    References: https://docs.nvidia.com/hpc-sdk/archive/26.11/pdf/hpc-sdk2611rn.pdf; knowledge/driver_branches.toml trap cdmm-mig-gds
    """
    trap = versions.trap("cdmm-mig-gds")
    lo = versions.vtuple(trap["applies"]["driver_min"])
    gds_setting = config.setting("gds.enabled") if config else None
    gds = bool(gds_setting and config.enabled("gds.enabled"))
    for ng in inventory.nodes:
        product = ng.product or ""
        if not ng.driver_version or versions.vtuple(ng.driver_version) < lo or not any(x in product for x in trap["applies"]["gpus"]):
            continue
        wants = [g for g in ng.gpus if g.mig_current or g.mig_pending]
        evidence = [g.ev("mig") for g in wants[:2]]
        node = cluster.nodes.get(ng.node) if cluster and ng.node else None
        label = node.labels.get("nvidia.com/mig.config") if node is not None else None
        if label and label != "all-disabled":
            evidence.append(node.evidence.get("label:nvidia.com/mig.config"))
        else:
            label = None
        if gds:
            evidence.append(gds_setting.evidence)
        if not wants and not label and not gds:
            continue
        asked = " and ".join(x for x, on in (("MIG", wants or label), ("GPUDirect Storage", gds)) if on)
        yield Hit(
            title=f"{asked} requested on {product} with driver {ng.driver_version}: CDMM makes {asked} unavailable",
            explanation=f"{trap['title']}. {trap['effect']}",
            severity=Severity.ERROR, role=Role.ROOT_CAUSE, evidence=tuple(e for e in dict.fromkeys([ng.driver_evidence, ng.product_evidence, *evidence]) if e),
            node=ng.node, component="nvidia-driver", confidence=0.75,
            fixes=(Fix(FixKind.WORKAROUND, trap["fix"], (f"kubectl label node {ng.node or '<node>'} nvidia.com/mig.config=all-disabled --overwrite",) if label else ()),),
            facts={"driver": ng.driver_version, "product": product, "mig_config": label, "gds": gds},
        )


@check("UD080", "stated-nvml-symptom")
def stated_nvml_symptom(prose: Prose | None = None) -> Iterable[Hit]:
    """A ticket describes nvidia-smi failing on the node itself, or a driver package change before the failure.

    What it does: Reads the sentences of the artifacts that no parser claims (and the prose of Markdown issue
    bodies) against knowledge/phrases.toml [[symptom]] rows of this layer: nvidia-smi failing or hanging on the host, or "it stopped after the driver packages were upgraded" (unattended upgrades). Each match is a finding
    that cites the sentence, says what it implies, and lists the commands whose output would confirm it.
    Its confidence is low (0.35): a person's words, not a program's output, so any machine-read cause on the
    same scope explains it first.
    Why it matters: A ticket often holds only sentences; a userspace library newer than the loaded module (or no module at all) makes every NVML user fail, the device plugin included.
    How to fix: Run `nvidia-smi` and `cat /proc/driver/nvidia/version` on the node and read them with gpusleuth; reboot (or reload the module) after a driver package upgrade.
    References: knowledge/phrases.toml (each symptom row lists the public tickets it was learned from)
    """
    yield from stated_hits(prose, Layer.USERSPACE_DRIVER)


@check("UD012", "two-driver-library-versions")
def two_driver_library_versions(listings: LibraryListings | None = None, inventory: GpuInventory | None = None,
                                prose: Prose | None = None, errors: ErrorLines | None = None) -> Iterable[Hit]:
    """One library directory holds two versions of a driver library (libnvidia-ml.so.470.129.06 beside .525.105.17).

    What it does: Reads `ls -l` listings that show libnvidia-ml or libcuda files and finds a directory with
    more than one driver version of the same library; says which one the soname link (libnvidia-ml.so.1)
    points at and, when the artifacts show the driver the node runs, whether that is the one.
    Why it matters: the container toolkit mounts the libraries of the node's driver into the container;
    a second copy comes from the image (a driver or CUDA compat package installed in it). The loader takes
    whatever libnvidia-ml.so.1 / libcuda.so.1 points at, and if that is not the loaded kernel module's
    version, NVML fails with "Driver/library version mismatch" and CUDA with a driver/runtime error, in that
    image only, while nvidia-smi on the host works.
    How to fix: remove the driver libraries from the image (do not install nvidia driver, utils or compat
    packages in it; let the toolkit inject the node's), or make the soname link point at the node's version;
    then rebuild and redeploy the image.
    With no listing, a ticket that names two versions of one such library file (libnvidia-ml.so.525.105.17 and
    libnvidia-ml.so.470.129.06) is reported as stated, at lower confidence.
    References: https://github.com/NVIDIA/libnvidia-container/issues/213; https://github.com/NVIDIA/libnvidia-container/issues/266
    """
    if listings is None:
        yield from _stated_library_versions(prose, errors)
        return
    running = {ng.driver_version: ng.driver_evidence for ng in (inventory.nodes if inventory else []) if ng.driver_version}
    for listing in listings.listings:
        versions = [v for v, _ in listing.versions]
        if len(set(versions)) < 2:
            continue
        driver = next((v for v in versions if v in running), None)
        link = listing.link_version
        wrong = driver is not None and link is not None and link != driver
        linked = f"; {listing.lib}.so.1 points at {link}" if link else ""
        said = (f" The node runs driver {driver} ({running[driver].cite()})" + (", so the link picks the image's copy." if wrong else
                                                                                 ", which the link picks: the other copy waits for the next ldconfig.")
                if driver and link else "")
        yield Hit(
            title=f"Two versions of {listing.lib} in one directory ({', '.join(versions)}){linked}",
            explanation=f"The listing shows {listing.lib} at {' and '.join(versions)}. {_two_copies(listing.lib)}." + said,
            severity=Severity.ERROR if wrong or driver is None else Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys([*((listing.link_evidence,) if listing.link_evidence else ()), *(ev for _, ev in listing.versions),
                                          *((running[driver],) if driver else ())])),
            fixes=(
                Fix(FixKind.IMMEDIATE, f"In the container, see which {listing.lib} the loader takes and which version the node's driver is.",
                    (f"ldconfig -p | grep {listing.lib}", "cat /proc/driver/nvidia/version")),
                _REBUILD_WITHOUT_DRIVER_LIBRARIES,
            ),
            node=listing.node,
            component=listing.lib,
            layer=Layer.WORKLOAD,
            confidence=0.85 if wrong else 0.6,
            facts={"versions": versions, "link": link, "driver": driver},
        )


_REBUILD_WITHOUT_DRIVER_LIBRARIES = Fix(
    FixKind.PERMANENT, "Rebuild the image without the NVIDIA driver libraries (no driver, utils or compat packages in it): the container "
    "toolkit mounts the node's own at run time.")


def _two_copies(lib: str, seen_at: str = "") -> str:
    return (f"One is the node's driver, mounted by the container toolkit; the other came with the image. Programs load whatever "
            f"{lib}.so.1 points at, and a library that is not the loaded kernel module's version fails (NVML: \"Driver/library version "
            f"mismatch\"{seen_at})")


def _stated_library_versions(prose: Prose | None, errors: ErrorLines | None) -> Iterable[Hit]:
    """UD012 from a ticket's sentences: two versions of one driver library file named (and NVML's mismatch line, when
    the ticket quotes it, as what that does)."""
    if prose is None:
        raise NotApplicable(NO_LIBRARY_LISTING)
    mismatch = next((e for e in (errors.lines if errors is not None else ()) if "version mismatch" in e.message.lower()), None)
    by_lib: dict[str, list] = {}
    for s in prose.stated_of("driver-library"):
        lib, _, version = s.value.partition(".so.")
        by_lib.setdefault(lib, []).append((version, s))
    for lib, named in sorted(by_lib.items()):
        versions = sorted({v for v, _ in named})
        if len(versions) < 2:
            continue
        first = named[0][1]
        yield Hit(
            title=f"Stated: two versions of {lib} in one container ({', '.join(versions)})",
            explanation=(f"A ticket names {lib} at {' and '.join(versions)} ({first.evidence.cite()}). "
                         + _two_copies(lib, f", as at {mismatch.evidence.cite()}" if mismatch else "")
                         + ". Stated, not read from a listing: `ls -l` of the library directory in the container confirms it."),
            severity=Severity.ERROR, role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys([*((mismatch.evidence,) if mismatch else ()), *(s.evidence for _, s in named)])),
            fixes=(
                Fix(FixKind.IMMEDIATE, f"In the container, list the copies of {lib} and see which one the loader takes.",
                    (f"ls -l /usr/lib/x86_64-linux-gnu/{lib}.so*", f"ldconfig -p | grep {lib}", "cat /proc/driver/nvidia/version")),
                _REBUILD_WITHOUT_DRIVER_LIBRARIES,
            ),
            component=lib, layer=Layer.WORKLOAD, confidence=0.5,
            facts={"versions": versions, "stated": True},
        )
