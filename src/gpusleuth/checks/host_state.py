"""What the node already has, against what the GPU stack puts there: a host-installed NVIDIA driver the
driver container fights with, a CDI spec generated for a driver that is gone, container engines (CRI-O,
Docker) configured so that the NVIDIA hook or runtime is never used."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.classes import clip, named_groups
from gpusleuth.facts import Cluster, Configuration, GpuInventory, Logs, RuntimeSetup
from gpusleuth.facts.configs import CdiSpecs
from gpusleuth.facts.host import DeviceCgroups
from gpusleuth.facts.configuration import truthy
from gpusleuth.facts.logs import Match
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.runtime import CrioConfig, DockerConfig

DRIVER = "nvidia-driver-daemonset"
_LIB_VERSION = re.compile(r"/lib(?:cuda|nvidia-[\w-]+)\.so\.(?P<version>\d{3}\.\d+(?:\.\d+)?)$")
# Where the GPU Operator's toolkit writes the CRI-O OCI hook (oci-nvidia-hook.json), and CRI-O's default hooks_dir.
OPERATOR_HOOKS_DIR = "/run/containers/oci/hooks.d"
CRIO_DEFAULT_HOOKS_DIRS = ("/usr/share/containers/oci/hooks.d",)


def _node(m: Match, cluster: Cluster | None) -> str | None:
    if m.log.node:
        return m.log.node
    pod = cluster.pod(m.line.pod or m.log.pod) if cluster is not None and (m.line.pod or m.log.pod) else None
    if pod is not None and pod.node:
        return pod.node
    names = cluster.node_names() if cluster is not None else []
    return names[0] if len(names) == 1 else None


def _version(m: Match) -> str | None:
    return named_groups(m.signature, m.line.message).get("version")


# ------------------------------------------------------------------------------------------------ KD108


@check("KD108", "host-driver-conflicts-with-driver-container")
def host_driver_conflicts_with_driver_container(logs: Logs, cluster: Cluster | None = None, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """A host-installed NVIDIA driver is loaded, and the GPU Operator's driver container cannot replace it.

    What it does: On nodes where the driver container announces `Starting installation of NVIDIA driver
    version X` and then cannot unload or replace the modules (`Could not unload NVIDIA driver kernel
    modules, driver is in use`, rmmod's `in use`, the installer's `appears to already be loaded`), looks
    for the version actually loaded: the kernel's `NVRM: loading NVIDIA UNIX … Kernel Module Y`, or
    nvidia-smi's driver version from the host. Y ≠ X means a host driver owns the GPU. Silent when
    k8s-driver-manager already detected the pre-installed driver and disabled the container.
    Why it matters: the driver container can never start while the host driver is loaded and in use (by
    nvidia-persistenced, Xorg, DCGM); it crash-loops, and everything behind it stays blocked although the
    GPUs work on the host.
    How to fix: keep the host driver and stop deploying the driver container (driver.enabled=false, or
    label the node nvidia.com/gpu.deploy.driver=false), or remove the host driver packages and reboot.
    References: https://github.com/NVIDIA/gpu-operator/issues/126; https://github.com/NVIDIA/gpu-operator/issues/751; https://github.com/NVIDIA/gpu-operator/issues/2150; https://github.com/canonical/data-science-stack/issues/199
    """
    if logs.matches("driver-manager.preinstalled-driver"):
        return
    stuck = [*logs.matches("driver-manager.unload-in-use"), *logs.matches("kmod.rmmod-in-use"), *logs.matches("installer.module-already-loaded")]
    if not stuck:
        return
    wanted: dict[str | None, Match] = {}
    for m in logs.matches("driver.install.start"):
        wanted[_node(m, cluster)] = m
    loaded: dict[str | None, tuple[str, Evidence]] = {}
    for m in logs.matches("nvrm.module-loaded"):
        v = _version(m)
        if v:
            loaded[_node(m, cluster)] = (v, m.line.evidence())
    for ng in inventory.nodes if inventory else []:
        smi = next((r for r in ng.reports if r.driver_version), None)
        if smi is not None and ng.node not in loaded:
            loaded[ng.node] = (smi.driver_version, smi.evidence or Evidence(smi.artifact, smi.line, f"Driver Version: {smi.driver_version}"))
    by_node: dict[str | None, list[Match]] = defaultdict(list)
    for m in stuck:
        by_node[_node(m, cluster)].append(m)
    for node, ms in by_node.items():
        want = wanted.get(node) or (wanted.get(None) if len(wanted) == 1 else None)
        have = loaded.get(node) or (loaded.get(None) if len(loaded) == 1 else None)
        want_v = _version(want) if want else None
        if not want_v or not have or have[0] == want_v or have[0].split(".")[0] == want_v:
            continue
        pod = next((m.line.pod or m.log.pod for m in ms if m.line.pod or m.log.pod), None)
        ns = next((m.log.namespace for m in ms if m.log.namespace), None)
        nsf = f" -n {ns}" if ns else ""
        yield Hit(
            title=f"A host-installed driver {have[0]} is loaded on {node or 'the node'}; the driver container wants {want_v} and cannot replace it",
            explanation=(f"The driver container installs {want_v} ({want.line.evidence().cite()}) but the loaded NVIDIA module is {have[0]} "
                         f"({have[1].cite()}), installed on the host, and it is in use: \"{clip(ms[-1].line.message, 160)}\". The container "
                         "restarts until the host driver goes away."),
            severity=Severity.CRITICAL,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys([want.line.evidence(), have[1], *(m.line.evidence() for m in ms[-2:])])),
            fixes=(
                Fix(FixKind.IMMEDIATE, "Keep the host driver on this node: stop the driver container here.",
                    (f"kubectl label node {node} nvidia.com/gpu.deploy.driver=false --overwrite",) if node else ()),
                Fix(FixKind.PERMANENT, "Decide who owns the driver: either the host (GPU Operator driver.enabled=false on such nodes) or the "
                    "operator (remove the host's NVIDIA driver packages and reboot), not both."
                    + (f" Then recreate {pod}: kubectl delete pod {pod}{nsf}" if pod else "")),
            ),
            node=node,
            component=DRIVER,
            confidence=0.85,
            facts={"host_driver": have[0], "container_driver": want_v, "pod": pod},
        )


# ------------------------------------------------------------------------------------------------ TK101


def _running_drivers(logs: Logs | None, inventory: GpuInventory | None) -> dict[str, Evidence]:
    """Driver versions the node(s) run, with where each was read."""
    out: dict[str, Evidence] = {}
    for ng in inventory.nodes if inventory else []:
        for r in ng.reports:
            if r.driver_version:
                out.setdefault(r.driver_version, r.evidence or Evidence(r.artifact, r.line, f"Driver Version: {r.driver_version}"))
    for m in logs.matches("nvrm.module-loaded") if logs else []:
        v = _version(m)
        if v and not any(v == k for k in out):
            out.setdefault(v, m.line.evidence())
    return out


@check("TK101", "cdi-spec-stale")
def cdi_spec_stale(specs: CdiSpecs, inventory: GpuInventory | None = None, logs: Logs | None = None) -> Iterable[Hit]:
    """A CDI spec mounts the libraries of a driver version the node no longer runs (not refreshed after an upgrade).

    What it does: Reads the driver version in the library file names an NVIDIA CDI spec mounts
    (libcuda.so.550.54.15, libnvidia-ml.so.550.54.15, …) and compares it with the driver the node runs
    (nvidia-smi, or the kernel's `NVRM: loading NVIDIA UNIX … Kernel Module`); also reports a spec that
    defines no devices.
    Why it matters: with CDI the container engine injects exactly what the spec lists; after a driver
    upgrade the old files are gone, so GPU containers fail to start (`no such file or directory` for the
    old library) or get libraries that do not match the loaded module (`Driver/library version mismatch`).
    How to fix: regenerate the spec after every driver change (`nvidia-ctk cdi generate
    --output=/var/run/cdi/nvidia.yaml`, or the nvidia-cdi-refresh units / the GPU Operator's toolkit with
    cdi.enabled=true) and delete stale copies from /etc/cdi, which take precedence.
    References: https://github.com/NVIDIA/NemoClaw/pull/4733; https://github.com/NVIDIA/k8s-device-plugin/issues/621; https://github.com/NVIDIA/nvidia-container-toolkit/issues/82; https://github.com/NVIDIA/nvidia-container-toolkit/issues/1611
    """
    running = _running_drivers(logs, inventory)
    for spec in specs.nvidia():
        libs = [(m.group("version"), ev) for path, ev in spec.host_paths if (m := _LIB_VERSION.search(path))]
        versions = sorted({v for v, _ in libs})
        if not spec.devices:
            yield Hit(
                title=f"CDI spec {spec.where} defines no devices",
                explanation=f"{spec.where} ({spec.kind}) has no `devices` entries, so no nvidia.com/gpu=… device can be resolved from it.",
                severity=Severity.ERROR,
                role=Role.ROOT_CAUSE,
                evidence=tuple(e for e in [spec.evidence] if e),
                fixes=(Fix(FixKind.PERMANENT, "Regenerate the spec on the node.", ("nvidia-ctk cdi generate --output=/var/run/cdi/nvidia.yaml",)),),
                component="nvidia-container-toolkit",
                confidence=0.8,
                facts={"spec": spec.where},
            )
            continue
        if not versions or not running or any(v in running for v in versions):
            continue
        run_v, run_ev = sorted(running.items())[0]
        yield Hit(
            title=f"CDI spec {spec.where} was generated for driver {', '.join(versions)}; the node runs {run_v}",
            explanation=(f"{spec.where} mounts driver libraries of version {', '.join(versions)} (e.g. {libs[0][1].text}), but the driver "
                         f"loaded now is {run_v} ({run_ev.cite()}). The spec predates a driver change: containers that get GPUs through it "
                         "fail to start on the missing files or run with libraries that do not match the kernel module."),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys([libs[0][1], *(ev for _, ev in libs[1:2]), run_ev])),
            fixes=(
                Fix(FixKind.IMMEDIATE, "Regenerate the spec on the node and check the devices it lists.",
                    ("nvidia-ctk cdi generate --output=/var/run/cdi/nvidia.yaml", "nvidia-ctk cdi list")),
                Fix(FixKind.PERMANENT, "Refresh CDI specs automatically after driver changes (nvidia-cdi-refresh.path/.service from toolkit "
                    "1.18, or the GPU Operator's toolkit with cdi.enabled=true) and remove hand-made copies in /etc/cdi."),
            ),
            component="nvidia-container-toolkit",
            confidence=0.85,
            facts={"spec": spec.where, "spec_driver": versions, "running_driver": sorted(running)},
        )


# ------------------------------------------------------------------------------------------------ TK102

NVIDIA_MAJOR = "195"  # /dev/nvidia0..N, /dev/nvidiactl, /dev/nvidia-modeset (the driver registers major 195)


@check("TK102", "nvidia-devices-revoked-in-device-cgroup")
def nvidia_devices_revoked(cgroups: DeviceCgroups) -> Iterable[Hit]:
    """A container's device cgroup no longer lets it read or write the NVIDIA devices (c 195:* m instead of rwm).

    What it does: Reads cgroup v1 devices.list pasted from inside a GPU container and finds the rules for
    the NVIDIA character devices (major 195): present, but without read and write access (`c 195:* m`).
    Silent when the list allows every device (`a *:* rwm`, a privileged container).
    Why it matters: the NVIDIA container hook gives the container the GPU device nodes behind runc's back;
    with the systemd cgroup driver, a `systemctl daemon-reload` (or anything that makes systemd re-apply the
    container scope's unit) rewrites the device rules from what runc told systemd, which lacks those nodes
    unless /dev/char links for them exist. The running container then gets "Failed to initialize NVML:
    Unknown Error" while nvidia-smi works on the host, until the container is recreated.
    How to fix: recreate the affected containers (delete the pods); then create the /dev/char links runc
    needs (`nvidia-ctk system create-dev-char-symlinks --create-all`, NVIDIA Container Toolkit 1.12 or later,
    and a udev rule that runs it when the driver loads), or run the runtime with the cgroupfs driver.
    References: https://github.com/NVIDIA/nvidia-docker/issues/1730; https://github.com/NVIDIA/nvidia-container-toolkit/issues/1227
    """
    for rules in cgroups.lists:
        if rules.allows_all():
            continue
        nvidia = [r for r in rules.rules if r.kind in ("c", "a") and r.major in (NVIDIA_MAJOR, "*")]
        if not nvidia or any({"r", "w"} <= set(r.access) for r in nvidia):
            continue
        shown = ", ".join(f"{r.kind} {r.major}:{r.minor} {r.access}" for r in nvidia[:3])
        where = f" on {rules.node}" if rules.node else ""
        yield Hit(
            title=f"The container's device cgroup{where} no longer lets it open the NVIDIA devices ({shown})",
            explanation=(f"The device rules list the NVIDIA character devices (major {NVIDIA_MAJOR}) with access '{nvidia[0].access}' only: "
                         "the container may create the nodes but not read or write them, so every NVML and CUDA call in it fails "
                         "(\"Failed to initialize NVML: Unknown Error\") while the host's nvidia-smi works. The NVIDIA hook had granted "
                         "rwm when the container started; rules like these are what systemd writes back when it re-applies the "
                         "container's scope (a `systemctl daemon-reload` with the systemd cgroup driver) and runc found no /dev/char "
                         "links for the NVIDIA nodes."),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(r.evidence for r in nvidia[:3])),
            fixes=(
                Fix(FixKind.IMMEDIATE, "Recreate the containers that lost their GPUs (delete their pods): a new container is given the "
                    "NVIDIA devices again."),
                Fix(FixKind.PERMANENT, "On each GPU node, create the /dev/char links runc needs to keep the NVIDIA devices when systemd "
                    "re-applies a scope (NVIDIA Container Toolkit 1.12 or later), and keep them with a udev rule that runs the same "
                    "command when the driver loads; or run the container runtime (and the kubelet) with the cgroupfs cgroup driver.",
                    ("nvidia-ctk system create-dev-char-symlinks --create-all",)),
            ),
            node=rules.node,
            component="nvidia-container-toolkit",
            confidence=0.8,
            facts={"rules": [f"{r.kind} {r.major}:{r.minor} {r.access}" for r in nvidia], "partial": rules.partial},
        )


# ------------------------------------------------------------------------------------------------ RT101


@check("RT101", "crio-hooks-dir-misses-nvidia-hook")
def crio_hooks_dir_misses_nvidia_hook(setup: RuntimeSetup, configuration: Configuration | None = None, logs: Logs | None = None) -> Iterable[Hit]:
    """CRI-O does not read the directory where the GPU Operator put the NVIDIA OCI hook, so containers get no GPU.

    What it does: For CRI-O configs without an nvidia runtime handler (hook mode: CDI not enabled), compares
    `hooks_dir` (CRI-O's default /usr/share/containers/oci/hooks.d when unset) with
    /run/containers/oci/hooks.d, where the toolkit writes oci-nvidia-hook.json; cites `ls` output of the hook
    file and the validator's `exec: "nvidia-smi": executable file not found` when present.
    Why it matters: without the hook nothing injects devices or driver libraries: the toolkit validator
    fails, operands stay in Init, and GPU pods see no GPU — with no error from CRI-O itself.
    How to fix: add /run/containers/oci/hooks.d to hooks_dir in crio.conf (or a crio.conf.d drop-in) and
    restart CRI-O; or enable CDI (cdi.enabled=true), which does not need the hook.
    References: https://github.com/NVIDIA/gpu-operator/issues/172; https://github.com/NVIDIA/gpu-operator/issues/280; https://github.com/NVIDIA/gpu-operator/issues/448; https://github.com/NVIDIA/gpu-operator/pull/1796
    """
    cdi = configuration.setting("cdi.enabled") if configuration else None
    if cdi is not None and truthy(cdi.value):
        return
    validator = logs.matches("validator.toolkit.nvidia-smi-missing") if logs else []
    hook_file = setup.host_paths.get(f"{OPERATOR_HOOKS_DIR}/oci-nvidia-hook.json")
    for cfg in setup.other_engines:
        if not isinstance(cfg, CrioConfig) or any(n.startswith("nvidia") for n in cfg.runtimes):
            continue
        dirs = tuple(d for d in cfg.hooks_dirs if d.startswith("/"))
        shown = dirs or CRIO_DEFAULT_HOOKS_DIRS
        if any(d.rstrip("/") == OPERATOR_HOOKS_DIR for d in shown):
            continue
        evidence = [cfg.evidence, *(e for e in [hook_file.evidence if hook_file and hook_file.exists else None]), *(m.line.evidence() for m in validator[-1:])]
        how = f"hooks_dir = {list(dirs)}" if dirs else f"no hooks_dir, so CRI-O's default {list(CRIO_DEFAULT_HOOKS_DIRS)}"
        yield Hit(
            title=f"CRI-O ({cfg.where}) does not read {OPERATOR_HOOKS_DIR}, where the NVIDIA hook is",
            explanation=(f"{cfg.where} has {how}; the GPU Operator's toolkit writes oci-nvidia-hook.json to {OPERATOR_HOOKS_DIR}, so CRI-O never "
                         "runs the NVIDIA hook and containers get no GPU." + (" The toolkit validator shows exactly that." if validator else "")),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(Fix(FixKind.PERMANENT, "Add the operator's hook directory to CRI-O's hooks_dir and restart CRI-O (or enable CDI).",
                       ("systemctl restart crio",),
                       snippet=(f"# /etc/crio/crio.conf.d/99-nvidia-hooks.conf\n[crio.runtime]\nhooks_dir = [\n  \"{CRIO_DEFAULT_HOOKS_DIRS[0]}\",\n"
                                f"  \"{OPERATOR_HOOKS_DIR}\",\n]\n"), snippet_language="toml"),),
            node=setup.node,
            component="crio",
            confidence=0.8 if validator or (hook_file and hook_file.exists) else 0.6,
            facts={"hooks_dirs": list(shown)},
        )


# ------------------------------------------------------------------------------------------------ RT102


def _docker_backed(cluster: Cluster | None, setup: RuntimeSetup) -> tuple[bool | None, Evidence | None]:
    """Whether kubelet runs pods through Docker (dockershim / cri-dockerd), and what shows it."""
    if setup.kubelet is not None and ("dockershim" in setup.kubelet.endpoint or "cri-dockerd" in setup.kubelet.endpoint):
        return True, setup.kubelet.evidence
    for node in (cluster.nodes.values() if cluster else []):
        if node.container_runtime:
            return node.container_runtime.startswith("docker://"), node.evidence.get("container_runtime")
    return None, None


@check("RT102", "docker-default-runtime-not-nvidia")
def docker_default_runtime_not_nvidia(setup: RuntimeSetup, cluster: Cluster | None = None, logs: Logs | None = None) -> Iterable[Hit]:
    """Kubernetes runs pods through Docker, and Docker's default runtime is not nvidia (or nvidia is missing).

    What it does: For a daemon.json in the artifacts, checks `runtimes.nvidia` and `default-runtime`, and
    whether kubelet uses Docker (cri-dockerd / dockershim endpoint, or the node's container runtime
    docker://). The device plugin's `did you set the docker default runtime to nvidia?` hint is cited when
    present.
    Why it matters: through dockershim/cri-dockerd a pod cannot pick a runtime per RuntimeClass, so only the
    default runtime runs: without `"default-runtime": "nvidia"` no container, the device plugin included,
    gets the driver, and the node advertises no GPUs.
    How to fix: register the nvidia runtime and make it Docker's default in /etc/docker/daemon.json
    (`nvidia-ctk runtime configure --runtime=docker --set-as-default`), then restart Docker.
    References: https://github.com/NVIDIA/deepops/issues/381; https://github.com/NVIDIA/k8s-device-plugin/issues/328; https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html#configuring-docker
    """
    backed, backed_ev = _docker_backed(cluster, setup)
    hints = logs.matches("device-plugin.toolkit-hint") if logs else []
    for cfg in setup.other_engines:
        if not isinstance(cfg, DockerConfig):
            continue
        has = any(n.startswith("nvidia") for n in cfg.runtimes)
        default = cfg.default_runtime
        if has and default and default.startswith("nvidia"):
            continue
        if backed is False:
            continue
        what = ("nvidia is not registered in its runtimes" if not has else
                f"its default runtime is {default!r}" if default else "it sets no default-runtime, so runc is the default")
        evidence = [cfg.default_runtime_evidence or cfg.evidence, *(r.evidence for r in cfg.runtimes.values() if r.name.startswith("nvidia")),
                    backed_ev, *(m.line.evidence() for m in hints[-1:])]
        yield Hit(
            title=f"Docker ({cfg.where}) does not run containers with nvidia: {what}",
            explanation=(f"{cfg.where}: {what}. " + ("Kubelet runs pods through Docker, " if backed else "If kubelet runs pods through Docker (cri-dockerd), ")
                         + "which cannot choose a runtime per pod, so GPU containers start with plain runc and see no GPU."),
            severity=Severity.ERROR if backed else Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(Fix(FixKind.PERMANENT, "Make nvidia Docker's default runtime and restart Docker.",
                       ("nvidia-ctk runtime configure --runtime=docker --set-as-default", "systemctl restart docker"),
                       snippet=('{\n  "default-runtime": "nvidia",\n  "runtimes": {\n    "nvidia": {\n'
                                '      "path": "/usr/bin/nvidia-container-runtime",\n      "runtimeArgs": []\n    }\n  }\n}\n'),
                       snippet_language="json"),),
            node=setup.node,
            component="docker",
            confidence=0.85 if backed else 0.5,
            facts={"default_runtime": default, "nvidia_registered": has, "kubelet_uses_docker": backed},
        )
