"""Container runtime layer (RT): containerd / CRI-O / Docker and the runtime handlers they offer.

The question every check here answers: does the containerd that kubelet talks to
know the `nvidia` runtime, and if not, why not? Handler errors in events and logs are the symptom;
which config each containerd instance reads, and which instance the toolkit was pointed at, is the
cause.
"""

from __future__ import annotations

import fnmatch
import json
from collections import Counter, defaultdict
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.facts.configs import CdiSpecs
from gpusleuth.facts.validation import Problem, RuntimeClasses, check_path, dotted, summary, validate
from gpusleuth.knowledge.config_schemas import load as load_schema
from gpusleuth.parsers.containerd_config import _knowledge as _runc_knowledge
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.configuration import Configuration, truthy
from gpusleuth.facts.logs import Logs
from gpusleuth.facts.runtime import HandlerError, HandlerErrors, Instance, RuntimeSetup
from gpusleuth.knowledge import table
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.runtime import ContainerdConfig
from gpusleuth.checks.stated_common import platform_fixes, platform_note, stated_hits
from gpusleuth.facts.prose import Prose
from gpusleuth.model.layers import Layer
from gpusleuth.facts.platform import Platform

VALUES_FILE = "gpusleuth-toolkit-values.yaml"
_STUCK = ("ContainerCreating", "ContainerStatusUnknown")  # what a pod shows while its sandbox cannot be created


def main_handler(setup: RuntimeSetup | None, errors: list[HandlerError]) -> str:
    """The runtime handler the cluster needs: the one errors name most, else the toolkit's runtime class."""
    if errors:
        return Counter(e.handler for e in errors).most_common(1)[0][0]
    if setup and setup.toolkit and setup.toolkit.runtime_class.value:
        return setup.toolkit.runtime_class.value
    return "nvidia"


def accepted_configs(setup: RuntimeSetup, used: Instance) -> tuple[str | None, ...]:
    """The files the toolkit may be given for kubelet's containerd. Where the distribution renders the
    running config from a template or imports a drop-in directory (k3s, RKE2, MicroK8s, k0s), only that
    template or drop-in: edits to the rendered file are overwritten at the next start."""
    expected, _, _ = setup.expected_target(used)
    if expected and expected != used.config_path:
        return (expected,)
    return (used.config_path, expected)


def toolkit_misdirected(setup: RuntimeSetup) -> bool:
    """The toolkit's config or socket is not the containerd kubelet uses (needs both to be known)."""
    used, tk = setup.kubelet_instance, setup.toolkit
    if used is None or tk is None:
        return False
    if setup.toolkit_instance is not None and setup.toolkit_instance is not used:
        return True
    return tk.socket.value != used.socket or tk.config.value not in accepted_configs(setup, used)


def missing_in_used(setup: RuntimeSetup | None, handler: str, errors: list[HandlerError]) -> tuple[list[ContainerdConfig], list[ContainerdConfig]] | None:
    """(configs of kubelet's containerd, other configs that have the handler) when kubelet's containerd
    lacks `handler` and something corroborates it (an error, another config that has it, or a toolkit
    pointed elsewhere); None otherwise. This is the RT002 condition."""
    if setup is None or setup.kubelet_instance is None:
        return None
    has, chain = setup.handler_configured(handler, setup.kubelet_instance)
    if has is not False:
        return None
    others = [c for c in setup.configs_with(handler) if c not in chain and not c.live]
    if not (errors or others or toolkit_misdirected(setup)):
        return None
    return chain, others


def misdirected_only(setup: RuntimeSetup | None, handler: str, errors: list[HandlerError]) -> bool:
    """The RT003 condition: the toolkit points at another containerd, and RT002 does not already say so."""
    return bool(setup and toolkit_misdirected(setup) and missing_in_used(setup, handler, errors) is None)


def _instance_evidence(inst: Instance | None) -> list[Evidence]:
    return list(inst.evidence[:2]) if inst else []


def _toolkit_evidence(setup: RuntimeSetup) -> list[Evidence]:
    tk = setup.toolkit
    if tk is None:
        return []
    seen, out = set(), []
    for s in (tk.config, tk.socket, tk.runtime_class):
        if s.evidence and s.evidence.cite() not in seen:
            seen.add(s.evidence.cite())
            out.append(s.evidence)
    return out


def _describe_toolkit(setup: RuntimeSetup) -> str:
    tk = setup.toolkit
    if tk is None:
        return "the toolkit's settings were not in the artifacts"
    said = "; ".join(s.cite() for s in (tk.config, tk.socket, tk.drop_in, tk.config_source) if s)
    return said + (" (no Helm values, ClusterPolicy or toolkit env were in the artifacts: these are its defaults)" if tk.assumed else "")


def target_fixes(setup: RuntimeSetup, handler: str) -> tuple[Fix, ...]:
    """Point the toolkit at kubelet's containerd: values fragment + helm upgrade, or a ClusterPolicy patch."""
    import yaml
    used = setup.kubelet_instance
    if used is None:
        return ()
    config, socket, dist = setup.expected_target(used)
    if not (config and socket):
        return ()
    conf: Configuration | None = setup.configuration
    ours = {"CONTAINERD_CONFIG": config, "CONTAINERD_SOCKET": socket, "CONTAINERD_RUNTIME_CLASS": handler}
    keep = [e for e in (conf.env_list("toolkit") if conf else []) if e.get("name") not in ours and e.get("name") not in ("RUNTIME_CONFIG", "RUNTIME_SOCKET")]
    env = [{"name": k, "value": v} for k, v in ours.items()] + [{"name": e.get("name"), "value": e.get("value")} for e in keep]
    snippet = yaml.safe_dump({"toolkit": {"env": env}}, sort_keys=False, default_flow_style=False)
    where = f" ({dist.name})" if dist else ""
    note = f" {dist.note}" if dist and dist.note else ""
    rel = conf.release if conf else None
    fixes = []
    if rel and rel.name and rel.namespace:
        version = f" --version {rel.chart_version}" if rel.chart_version else ""
        pin = "" if version else (f" Add --version with the chart version `helm list -n {rel.namespace}` shows, so the upgrade "
                                  "does not also move the chart to its latest release.")
        fixes.append(Fix(
            FixKind.PERMANENT,
            f"Point the toolkit at the containerd kubelet uses{where}: save this as {VALUES_FILE} and upgrade release "
            f"{rel.name} in namespace {rel.namespace} (-f replaces toolkit.env as a whole; the entries shown keep what was set).{pin}{note}",
            (f"helm upgrade {rel.name} nvidia/gpu-operator -n {rel.namespace}{version} --reuse-values -f {VALUES_FILE}",),
            snippet, "yaml",
        ))
    else:
        fixes.append(Fix(
            FixKind.PERMANENT,
            f"Point the toolkit at the containerd kubelet uses{where} with this values fragment. The GPU Operator's Helm "
            f"release name and namespace are not in the artifacts: find them, then run `helm upgrade <release> nvidia/gpu-operator "
            f"-n <namespace> --version <current chart version> --reuse-values -f {VALUES_FILE}`.{note}",
            ("helm list -A --filter gpu-operator",),
            snippet, "yaml",
        ))
    patch = {"spec": {"toolkit": {"env": env}}}
    policy = conf.policy_name if conf else "cluster-policy"
    fixes.append(Fix(
        FixKind.WORKAROUND,
        f"Or patch ClusterPolicy {policy} directly (takes effect at once; a merge patch replaces spec.toolkit.env as a whole, "
        "and the next `helm upgrade` writes the Helm values back over it).",
        (f"kubectl patch clusterpolicies.nvidia.com/{policy} --type merge -p '{json.dumps(patch, separators=(',', ':'))}'",),
    ))
    verify = (f"sudo grep -n -A3 'runtimes.{handler}' {config}",
              f"sudo crictl --runtime-endpoint unix://{socket} info | grep -A4 '\"{handler}\"'")
    fixes.append(Fix(
        FixKind.IMMEDIATE,
        "After the toolkit pod has restarted, check that kubelet's containerd now offers the runtime; pods stuck in "
        "ContainerCreating retry sandbox creation on their own.",
        verify,
    ))
    return tuple(fixes)


def _stuck_pods(cluster: Cluster | None, errors: list[HandlerError], node: str | None) -> list[Evidence]:
    if cluster is None:
        return []
    names = {e.pod for e in errors if e.pod}
    out = []
    for pod in cluster.pods:
        if pod.evidence and (pod.name in names or (pod.status in _STUCK and (node is None or pod.node in (None, node)))):
            out.append(pod.evidence)
    return out[:4]


def _platform_unless_known(platform: Platform | None, used: Instance | None) -> str:
    """The platform's note, unless the containerd instance already names the same distribution (said above)."""
    if platform is None or (used is not None and used.distribution is not None and used.distribution.id == platform.row.distribution
                            and used.distribution.id != "standard"):
        return ""
    return platform_note(platform)


@check("RT001", "runtime-handler-not-configured")
def runtime_handler_not_configured(
    found: HandlerErrors, cluster: Cluster | None = None, setup: RuntimeSetup | None = None, platform: Platform | None = None
) -> Iterable[Hit]:
    """The container engine has no runtime handler of the name pods ask for (`no runtime for "nvidia" is configured`).

    What it does: Finds FailedCreatePodSandBox events and runtime log lines with containerd's `no runtime for
    "nvidia" is configured`, dockershim's `RuntimeHandler "nvidia" not supported` or CRI-O's `failed to find
    runtime handler nvidia from runtime list`, grouped by node and handler; links them to the config
    finding (RT002/RT003) that explains them when the runtime setup is known.
    Why it matters: Every pod with runtimeClassName nvidia (GPU workloads and the GPU Operator's own operands)
    stays in ContainerCreating; nothing in the pod is wrong.
    How to fix: Make the containerd kubelet uses offer the handler: the NVIDIA Container Toolkit must configure
    that instance (toolkit.env CONTAINERD_CONFIG / CONTAINERD_SOCKET), then containerd reloads. When the
    platform is known (k3s, RKE2, k0s, MicroK8s, EKS, ...: knowledge/runtimes.toml [[platform]]), the finding
    names its config path, socket, template and the toolkit settings it needs.
    References: https://github.com/NVIDIA/gpu-operator/issues/413; https://github.com/NVIDIA/gpu-operator/issues/236; https://github.com/NVIDIA/gpu-operator/issues/1298; https://github.com/NVIDIA/gpu-operator/pull/2168
    """
    errors = found.errors
    groups: dict[tuple, list[HandlerError]] = defaultdict(list)
    for e in errors:
        groups[(e.node or (setup.node if setup else None), e.handler)].append(e)
    for (node, handler), errs in groups.items():
        cause = "RT002" if missing_in_used(setup, handler, errs) else "RT003" if misdirected_only(setup, handler, errs) else None
        pods = sorted({e.pod for e in errs if e.pod})
        engines = sorted({e.engine for e in errs})
        known = next((e.known for e in errs if e.known), None)
        evidence = [e.evidence for e in errs[:4]] + _stuck_pods(cluster, errs, node)
        used = setup.kubelet_instance if setup else None
        if cause is None and used:
            evidence += _instance_evidence(used)
        text = (
            f"The {'/'.join(engines)} runtime on {node or 'the node'} has no runtime handler {handler!r}, so the sandbox of "
            f"{', '.join(pods[:6]) or 'the affected pods'}{' and others' if len(pods) > 6 else ''} cannot be created; "
            f"the pods wait in ContainerCreating."
        )
        if known:
            text += f" CRI-O lists the handlers it has: {known}."
        for note in dict.fromkeys(e.note for e in errs if e.note):
            text += f" {note}"
        if cause:
            text += f" {cause} says why: the containerd kubelet uses was never given the {handler!r} runtime."
        fixes = () if cause else (Fix(
            FixKind.IMMEDIATE,
            "Find which containerd kubelet talks to and whether its config (and its imported drop-ins) defines the runtime; "
            "then point the toolkit (toolkit.env CONTAINERD_CONFIG/CONTAINERD_SOCKET) at it.",
            ("ps -ef | grep -E '[c]ontainerd|[k]ubelet'", "sudo crictl info | grep -A4 runtimes",
             "kubectl get pods -A -l app=nvidia-container-toolkit-daemonset -o wide"),
        ), *platform_fixes(platform, handler))
        if not cause:
            text += platform_note(platform, handler)
        yield Hit(
            title=f"containerd has no {handler!r} runtime: pods stuck in ContainerCreating" if "containerd" in engines
            else f"container runtime has no {handler!r} handler: pods stuck in ContainerCreating",
            explanation=text,
            severity=Severity.ERROR,
            role=Role.SYMPTOM if cause else Role.ROOT_CAUSE,
            evidence=tuple(evidence),
            fixes=fixes,
            node=node,
            component="container-runtime",
            confidence=0.95 if cause else 0.7,
            caused_by=(cause,) if cause else (),
            facts={"handler": handler, "pods": pods, "errors": len(errs)},
        )


@check("RT002", "nvidia-runtime-missing-from-kubelet-containerd")
def nvidia_runtime_missing_from_kubelet_containerd(setup: RuntimeSetup, found: HandlerErrors | None = None, platform: Platform | None = None) -> Iterable[Hit]:
    """The containerd kubelet uses has no nvidia runtime in its config, while another containerd's config has it.

    What it does: Matches kubelet's --container-runtime-endpoint (or the only / the distribution's containerd)
    to a running instance and to the config file it reads (with its imported drop-ins, or `crictl info`),
    and looks for the runtime handler there; compares with the other configs and with the toolkit's
    CONTAINERD_CONFIG/CONTAINERD_SOCKET. Fires when the handler is missing and an error, another config or
    a misdirected toolkit corroborates it.
    Why it matters: This is the two-containerd trap: two containerd instances run, the toolkit (at its defaults) wrote the
    runtime into /etc/containerd/config.toml, and kubelet's containerd (snap.k8s.containerd) never got it.
    Every GPU pod and operand fails with `no runtime for "nvidia" is configured`.
    How to fix: Set toolkit.env CONTAINERD_CONFIG, CONTAINERD_SOCKET and CONTAINERD_RUNTIME_CLASS to kubelet's
    containerd (the ready values fragment and helm upgrade command are in the finding), or patch the
    ClusterPolicy; the toolkit then configures and reloads the right instance.
    References: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html#custom-configuration-for-runtime-containerd; NVIDIA/gpu-operator controllers/object_controls.go (toolkit defaults /etc/containerd/config.toml, /run/containerd/containerd.sock); canonical/k8s-snap containerd-base-dir
    """
    errors = found.errors if found else []
    handler = main_handler(setup, errors)
    found = missing_in_used(setup, handler, errors)
    if found is None:
        return
    chain, others = found
    used = setup.kubelet_instance
    evidence: list[Evidence] = []
    if setup.kubelet and setup.kubelet.evidence:
        evidence.append(setup.kubelet.evidence)
    evidence += _instance_evidence(used)
    main = chain[0] if chain else None
    if main:
        shown = [r.evidence for r in main.runtimes.values() if r.evidence][:2] or [main.evidence]
        evidence += [e for e in shown if e]
        if main.imports_evidence:
            evidence.append(main.imports_evidence)
    for other in others[:2]:
        rt = other.runtimes[handler]
        evidence += [e for e in (rt.evidence, rt.binary_evidence) if e]
    evidence += _toolkit_evidence(setup)
    evidence += [e.evidence for e in errors[:2]]
    how = setup.kubelet_instance_how or "kubelet endpoint"
    have = ", ".join(sorted(main.runtimes)) if main and main.runtimes else "none"
    text = (
        f"kubelet talks to {used.label} (matched by {how}). "
        + (f"Its running CRI plugin (`crictl info`, {main.artifact}) lists the runtimes: {have}; no {handler!r}. " if main and main.live
           else f"That containerd reads {main.where}, whose runtimes are: {have}; no {handler!r}. " if main else "")
    )
    unseen = [g for g in (main.imports if main else ()) if not any(c.path and fnmatch.fnmatch(c.path, g) for c in chain[1:])]
    if unseen:
        text += f"It also imports {', '.join(unseen)}; no file from there was in the artifacts. "
    owned = {id(o): _owner(setup, o) for o in others}
    for o in others:
        owner = owned[id(o)]
        text += (f"The {handler!r} runtime is configured in {o.where}, which belongs to another containerd ({owner.label}). " if owner
                 else f"The {handler!r} runtime is configured in {o.where}, which kubelet's containerd does not read"
                 + (" (its config has no `imports` line that matches it)" if main and not main.live else "") + ". ")
    if setup.toolkit:
        text += f"The NVIDIA Container Toolkit was told: {_describe_toolkit(setup)}"
        text += (", i.e. the other instance: whatever it writes and reloads, kubelet's containerd never gets the runtime."
                 if toolkit_misdirected(setup) else ".")
    if len(setup.instances) > 1:
        text += f" Containerd instances running: {'; '.join(i.label for i in setup.instances)}."
    if errors:
        text += f" Result: `no runtime for \"{handler}\" is configured` ({len(errors)} error line(s))."
    confidence = (0.95 if errors else 0.7 if unseen else 0.85) * (1.0 if how.startswith("kubelet endpoint") else 0.85)
    orphans = [o for o in others if owned[id(o)] is None and o.path] if main and not main.live else []
    elsewhere = (f"the toolkit was pointed at {setup.toolkit.config.value} of another containerd" if toolkit_misdirected(setup)
                 else f"it is configured in {others[0].where}" if others else "pods fail with it")
    yield Hit(
        title=f"kubelet's containerd ({used.unit or used.socket}) has no {handler!r} runtime; {elsewhere}",
        explanation=(text + _platform_unless_known(platform, used)).strip(),
        severity=Severity.CRITICAL,
        role=Role.ROOT_CAUSE,
        evidence=tuple(evidence),
        fixes=target_fixes(setup, handler) if toolkit_misdirected(setup) or not orphans else _import_fixes(main, orphans, used),
        node=setup.node,
        component="containerd",
        confidence=confidence,
        facts={
            "handler": handler,
            "kubelet_socket": used.socket,
            "kubelet_config": used.config_path,
            "configs_with_handler": [o.where for o in others],
            "toolkit_config": setup.toolkit.config.value if setup.toolkit else None,
            "toolkit_socket": setup.toolkit.socket.value if setup.toolkit else None,
            "unseen_imports": unseen,
        },
    )


def _owner(setup: RuntimeSetup, cfg: ContainerdConfig) -> Instance | None:
    """The running containerd (other than kubelet's) that reads `cfg`, directly or as an import."""
    for inst in setup.instances:
        if inst is not setup.kubelet_instance and inst.config is not None and (inst.config is cfg or cfg in setup.imported_by(inst.config)):
            return inst
    return None


def _import_fixes(main: ContainerdConfig, orphans: list[ContainerdConfig], used: Instance) -> tuple[Fix, ...]:
    """The runtime sits in a drop-in kubelet's containerd never imports: import its directory."""
    dirs = sorted({o.path.rsplit("/", 1)[0] + "/*.toml" for o in orphans})
    unit = used.unit or "containerd"
    return (
        Fix(FixKind.PERMANENT,
            f"Make {main.where} import the drop-in directory (a top-level key: put it above the first [table]), then restart "
            f"containerd; running containers keep running.",
            (f"sudo systemctl restart {unit}",),
            "imports = [" + ", ".join(f'"{d}"' for d in sorted(set(main.imports) | set(dirs))) + "]\n", "toml"),
    )


@check("RT003", "toolkit-targets-other-containerd")
def toolkit_targets_other_containerd(setup: RuntimeSetup, found: HandlerErrors | None = None, platform: Platform | None = None) -> Iterable[Hit]:
    """The NVIDIA Container Toolkit is pointed at a containerd (or a config file) that kubelet's containerd does not keep.

    What it does: Compares the toolkit's CONTAINERD_CONFIG/CONTAINERD_SOCKET (Helm toolkit.env, ClusterPolicy spec.toolkit.env, the
    toolkit DaemonSet env; /etc/containerd/config.toml and /run/containerd/containerd.sock when unset) with
    the instance kubelet's endpoint names (another instance, or a socket nothing listens on, as with k3s,
    RKE2, MicroK8s, k0s and the k8s snap), and, on k3s/RKE2/MicroK8s/k0s, with the template or drop-in
    the distribution wants edited: their config.toml is rendered at every start ("# File generated by
    rke2. DO NOT EDIT. Use config.toml.tmpl instead."), so edits to it are lost. Says what is lost: the
    runtime itself, or (when the distribution registered `nvidia` on its own) nvidia as the default runtime
    that pods without runtimeClassName rely on. Stays silent when RT002 already shows the consequence.
    Why it matters: The toolkit adds the nvidia runtime (and, when asked, makes it the default) in the config
    it was given and reloads that containerd; kubelet's containerd never keeps it, and GPU pods fail as
    soon as they are scheduled or after the next restart.
    How to fix: Give the toolkit kubelet's containerd socket and the file that survives (values fragment in the
    finding: config.toml.tmpl on k3s/RKE2), or patch the ClusterPolicy; pods can also name
    `runtimeClassName: nvidia` and stop depending on the default.
    References: https://github.com/NVIDIA/gpu-operator/issues/522; https://github.com/NVIDIA/gpu-operator/issues/473; https://github.com/NVIDIA/gpu-operator/issues/415; NVIDIA GPU Operator docs (toolkit env for K3s, RKE2, MicroK8s, k0s)
    """
    errors = found.errors if found else []
    handler = main_handler(setup, errors)
    if not misdirected_only(setup, handler, errors):
        return
    used, tk = setup.kubelet_instance, setup.toolkit
    evidence = ([setup.kubelet.evidence] if setup.kubelet and setup.kubelet.evidence else []) + _instance_evidence(used)
    evidence += _instance_evidence(setup.toolkit_instance) + _toolkit_evidence(setup)
    accepted = accepted_configs(setup, used)
    rendered = used.config is not None and used.config.generated_by and tk.config.value == used.config_path
    dist = used.distribution.name if used.distribution else (used.config.generated_by if used.config else None) or "the distribution"
    if rendered:
        target = f"{tk.config.value}, which {dist} renders from {accepted[0]} at every start"
        evidence.insert(0, used.config.generated_evidence)
    else:
        target = (setup.toolkit_instance.label if setup.toolkit_instance and setup.toolkit_instance.socket == tk.socket.value
                  else "no running containerd (nothing listens there)")
    wrong = [s.cite().split(" from ", 1)[0] for s, bad in (
        (tk.socket, tk.socket.value != used.socket),
        (tk.config, tk.config.value not in accepted),
    ) if bad]
    has, _ = setup.handler_configured(handler, used)
    default = setup.default_runtime_of(used)
    wants_default = tk.set_as_default is not None and truthy(tk.set_as_default.value)
    pods = [name for name, _ in setup.default_runtime_pods]
    lost_default = default is not None and not default.name.startswith("nvidia") and (pods or wants_default)
    if has:
        have = next((r for c in ([used.config] if used.config else []) for n, r in c.runtimes.items() if n == handler), None)
        consequence = (f"kubelet's containerd does offer {handler!r} (the distribution registers it on its own"
                       + (f", {have.evidence.cite()}" if have and have.evidence else "") + "), so pods with runtimeClassName "
                       f"{handler} start; what the toolkit adds beyond that never reaches it.")
        if have and have.evidence:
            evidence.append(have.evidence)
        if lost_default:
            consequence += (f" Its default runtime is {default.name!r}" + (" (no default_runtime_name set)" if default.implicit else "")
                            + (f", although the toolkit was asked to make {handler} the default ({tk.set_as_default.cite()})" if wants_default else "")
                            + (f": {', '.join(pods[:4])} {'asks' if len(pods) == 1 else 'ask'} for a GPU without runtimeClassName and "
                               f"{'starts' if len(pods) == 1 else 'start'} without the NVIDIA hook "
                               "(no devices, no driver libraries)." if pods else "."))
            evidence += [e for e in (default.evidence, tk.set_as_default.evidence if wants_default else None) if e]
    else:
        consequence = f"The {handler!r} runtime will be written into the wrong config and kubelet's containerd will refuse GPU pods."
    breaks = not has or bool(lost_default and pods)
    title = (f"The toolkit edits {tk.config.value}, which {dist} regenerates from {accepted[0]}" if rendered
             else f"The toolkit is pointed at {' and '.join(wrong)}, not at the containerd kubelet uses ({used.unit or used.socket})")
    fixes = target_fixes(setup, handler)
    if pods and lost_default:
        fixes = (Fix(FixKind.IMMEDIATE, f"Or, without touching containerd: give {', '.join(pods[:3])} the NVIDIA runtime class "
                     "(`runtimeClassName: nvidia` in the pod template) and recreate them.",
                     snippet="spec:\n  runtimeClassName: nvidia\n", snippet_language="yaml"), *fixes)
    yield Hit(
        title=title + ("" if breaks else " (nothing fails yet)"),
        explanation=(
            f"kubelet uses {used.label} (matched by {setup.kubelet_instance_how}). The toolkit was told {_describe_toolkit(setup)}: "
            f"its target is {target}. {consequence} Running instances: {'; '.join(i.label for i in setup.instances) or 'none seen'}."
            + (f" {used.distribution.note}" if rendered and used.distribution and used.distribution.note else "")
            + _platform_unless_known(platform, used)
        ),
        severity=Severity.ERROR if breaks else Severity.WARNING,
        role=Role.ROOT_CAUSE if breaks else Role.CONTRIBUTING,
        evidence=tuple(dict.fromkeys(e for e in evidence if e)),
        fixes=fixes,
        node=setup.node,
        component="nvidia-container-toolkit",
        confidence=0.5 if tk.assumed else 0.8 if rendered else 0.75,
        facts={"kubelet_socket": used.socket, "toolkit_config": tk.config.value, "toolkit_socket": tk.socket.value,
               "expected_config": accepted[0], "handler_in_kubelet_containerd": has,
               "default_runtime": default.name if default else None, "default_runtime_pods": pods},
    )


def _relevant_configs(setup: RuntimeSetup) -> list[ContainerdConfig]:
    """Configs that can matter to Kubernetes: kubelet's containerd's chain when known, else all files."""
    used = setup.kubelet_instance
    if used and used.config is not None:
        return [used.config, *setup.imported_by(used.config)]
    others = {id(i.config) for i in setup.instances if i is not used and i.config is not None}
    return [c for c in setup.configs if id(c) not in others]


@check("RT004", "nvidia-runtime-binary-unusable")
def nvidia_runtime_binary_unusable(setup: RuntimeSetup) -> Iterable[Hit]:
    """An nvidia runtime is defined without a usable BinaryName, so containerd runs plain runc for it.

    What it does: For each nvidia* runtime of a runc type in the configs kubelet's containerd reads (or any
    config when that is unknown): no options.BinaryName at all, a misspelt key (`BinaryNme`, dropped
    silently), BinaryName and binaryName with different values (containerd folds case, which one wins is
    undefined), or a BinaryName whose file `ls`/`stat` showed missing.
    Why it matters: Without the nvidia-container-runtime binary the runtime is runc under another name: pods
    start, but get no GPU devices or driver libraries (unless CDI injects them), or fail to start when
    the binary is missing.
    How to fix: Set options.BinaryName to the toolkit's binary (/usr/local/nvidia/toolkit/nvidia-container-runtime
    with the GPU Operator, /usr/bin/nvidia-container-runtime with the packages), once, then reload containerd;
    or let the toolkit rewrite the section.
    References: https://github.com/containerd/containerd/blob/main/api/types/runc/options/oci.proto; https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html
    """
    for cfg in _relevant_configs(setup):
        for name, rt in cfg.runtimes.items():
            if not name.startswith("nvidia"):
                continue
            if rt.runtime_type and not rt.runtime_type.startswith("io.containerd.runc") and cfg.engine == "containerd":
                continue
            misspelt = [p for p in cfg.problems if p.kind == "misspelt-key" and f"runtime {name!r}" in p.message and "BinaryName" in p.message]
            ambiguous = [p for p in cfg.problems if p.kind == "ambiguous-key" and f"runtime {name!r}" in p.message and "different values" in p.message]
            probe = setup.host_paths.get(rt.binary) if rt.binary else None
            if rt.binary is None and cfg.engine == "containerd":
                why = misspelt[0].message if misspelt else f"runtime {name!r} has no options.BinaryName: containerd runs runc for it"
                evidence = [e for e in (rt.evidence, *(p.evidence for p in misspelt)) if e]
                title = f"{name} runtime in {cfg.where} has no BinaryName" + (" (misspelt key)" if misspelt else "")
            elif ambiguous:
                why, evidence = ambiguous[0].message, [e for e in (rt.evidence, ambiguous[0].evidence) if e]
                title = f"{name} runtime in {cfg.where} sets BinaryName twice with different values"
            elif probe is not None and not probe.exists:
                why = f"runtime {name!r} runs {rt.binary}, and that file does not exist on the node"
                evidence = [e for e in (rt.binary_evidence, probe.evidence) if e]
                title = f"{name} runtime binary {rt.binary} is missing on the node"
            else:
                continue
            yield Hit(
                title=title,
                explanation=f"{why}. GPU pods using the {name!r} runtime get no NVIDIA devices or libraries from it.",
                severity=Severity.ERROR,
                role=Role.ROOT_CAUSE,
                evidence=tuple(evidence),
                fixes=(Fix(
                    FixKind.PERMANENT,
                    f"Give the {name!r} runtime one BinaryName (the toolkit installs /usr/local/nvidia/toolkit/nvidia-container-runtime "
                    "under the GPU Operator), then reload containerd.",
                    snippet=f"[{_runtime_header(cfg, name)}.options]\n  BinaryName = \"/usr/local/nvidia/toolkit/nvidia-container-runtime\"\n",
                    snippet_language="toml",
                ),),
                node=setup.node,
                component="containerd",
                confidence=0.8,
                facts={"config": cfg.where, "runtime": name, "binary": rt.binary},
            )


def _runtime_header(cfg: ContainerdConfig, name: str) -> str:
    key = cfg.cri_plugin or "io.containerd.grpc.v1.cri"
    quoted = f"'{key}'" if cfg.version == 3 else f'"{key}"' if "." in key else key
    return f"plugins.{quoted}.containerd.runtimes.{name}"


@check("RT005", "containerd-config-version-mismatch")
def containerd_config_version_mismatch(setup: RuntimeSetup) -> Iterable[Hit]:
    """Runtimes are written in a config layout the running containerd does not read.

    What it does: Reports runtimes under a CRI plugin key the file's `version` ignores (a file without
    `version = 2` using plugins."io.containerd.grpc.v1.cri"; `[plugins.cri]` in a version 2 file; version 3
    keys in a version 2 file or the reverse), and a version 3 file where the containerd version is known to
    be 1.x.
    Why it matters: containerd skips such sections without an error; the nvidia runtime simply is not there.
    How to fix: Write the runtimes under the key of the file's version (v1 `plugins.cri`, v2
    `plugins."io.containerd.grpc.v1.cri"`, v3 `plugins.'io.containerd.cri.v1.runtime'`), with the version
    line containerd expects; containerd 1.x needs version 2.
    References: containerd/containerd docs/cri/config.md (config versions); https://github.com/containerd/containerd/issues/10132; https://github.com/NVIDIA/nvidia-container-toolkit/pull/862
    """
    version = setup.containerd_version
    mm = version.major_minor if version else None
    for cfg in _relevant_configs(setup):
        if cfg.live:
            continue
        for p in cfg.problems:
            if p.kind != "version-mismatch":
                continue
            nvidia = any(n.startswith("nvidia") for n in cfg.ignored_runtimes)
            yield Hit(
                title=f"{cfg.where}: runtimes written under a plugin key its version ignores",
                explanation=p.message + ".",
                severity=Severity.ERROR if nvidia else Severity.WARNING,
                role=Role.ROOT_CAUSE,
                evidence=tuple(e for e in (p.evidence, cfg.version_evidence) if e),
                node=setup.node,
                component="containerd",
                confidence=0.8,
                facts={"config": cfg.where, "version": cfg.version, "ignored": sorted(cfg.ignored_runtimes)},
            )
        min_version = next((tuple(r["min_containerd"]) for r in table("runtimes")["config_version"] if r["version"] == cfg.version and "min_containerd" in r), None)
        if min_version and mm and mm < min_version and cfg.runtimes:
            yield Hit(
                title=f"{cfg.where} is a version {cfg.version} config; containerd {version.version} does not read it",
                explanation=(
                    f"The file declares version {cfg.version} (containerd {min_version[0]}.{min_version[1]} and later); containerd "
                    f"{version.version} does not read its runtimes ({', '.join(cfg.runtimes)}), so `containerd config dump` shows none of them."
                ),
                severity=Severity.ERROR,
                role=Role.ROOT_CAUSE,
                evidence=tuple(e for e in (cfg.version_evidence, version.evidence) if e),
                node=setup.node,
                component="containerd",
                confidence=0.85,
                facts={"config": cfg.where, "version": cfg.version, "containerd": version.version},
            )


@check("RT006", "nvidia-not-default-and-no-runtimeclass")
def nvidia_not_default_and_no_runtimeclass(setup: RuntimeSetup, configuration: Configuration | None = None, platform: Platform | None = None) -> Iterable[Hit]:
    """GPU pods rely on nvidia being containerd's default runtime, but it is not and CDI is off.

    What it does: Fires only when all three are shown: a GPU-requesting pod spec without runtimeClassName,
    kubelet's containerd config with a default_runtime_name other than nvidia, and CDI disabled (the
    containerd config's enable_cdi = false, or cdi.enabled false in the ClusterPolicy/Helm values).
    Why it matters: With runc as default and no CDI, such a pod starts without the NVIDIA hook: no devices,
    no driver libraries, `nvidia-smi: not found` or CUDA finds no device. Recent GPU Operators use the
    RuntimeClass `nvidia` and CDI, so a non-default nvidia runtime alone is normal.
    How to fix: Add `runtimeClassName: nvidia` to the pod spec, or enable CDI (cdi.enabled=true), or, on
    purpose, make nvidia the default (toolkit.env CONTAINERD_SET_AS_DEFAULT "true").
    References: https://github.com/NVIDIA/k8s-device-plugin/issues/652; NVIDIA/gpu-operator controllers/object_controls.go (transformToolkitCtrForCDI)
    """
    cfg = setup.kubelet_instance.config if setup.kubelet_instance else None
    if cfg is None or cfg.default_runtime is None or cfg.default_runtime.startswith("nvidia"):
        return
    cdi_off = cfg.enable_cdi is False
    cdi_ev = cfg.enable_cdi_evidence
    if configuration is not None:
        s = configuration.setting("cdi.enabled")
        if s is not None and truthy(s.value) is False:
            cdi_off, cdi_ev = True, s.evidence
        elif s is not None and truthy(s.value):
            return
    if not cdi_off:
        return
    pods = setup.default_runtime_pods
    if not pods:
        return
    names = [name for name, _ in pods]
    yield Hit(
        title=f"GPU pods without runtimeClassName run with containerd's default {cfg.default_runtime!r} and CDI off",
        explanation=(
            f"{', '.join(names[:5])} request nvidia.com/gpu without runtimeClassName, so they get {cfg.where}'s default runtime "
            f"{cfg.default_runtime!r}; CDI is disabled, so nothing injects the GPUs: the containers see no NVIDIA devices."
            + platform_note(platform)
        ),
        severity=Severity.WARNING,
        role=Role.ROOT_CAUSE,
        evidence=tuple(e for e in ([ev for _, ev in pods[:3]] + [cfg.default_runtime_evidence, cdi_ev]) if e),
        fixes=(Fix(FixKind.PERMANENT, "Run GPU pods with the nvidia RuntimeClass (or enable CDI).", snippet="spec:\n  runtimeClassName: nvidia\n", snippet_language="yaml"),
               *platform_fixes(platform)),
        node=setup.node,
        component="containerd",
        confidence=0.6,
        facts={"pods": names, "default_runtime": cfg.default_runtime},
    )


@check("RT007", "containerd-dropin-replaces-cri-section")
def containerd_dropin_replaces_cri_section(setup: RuntimeSetup) -> Iterable[Hit]:
    """A drop-in that sets CRI plugin options replaces the main file's whole CRI section on containerd 1.x.

    What it does: For a main config with `imports` and a seen drop-in it imports (conf.d/99-nvidia.toml) that
    writes under the same CRI plugin, lists the main file's CRI settings the drop-in does not repeat
    (sandbox_image, runc SystemdCgroup, registry config_path, ...). Warns when containerd is 1.x or its
    version is unknown; silent on 2.x, which merges key by key.
    Why it matters: containerd before 2.0 merges imports plugin by plugin: the drop-in's CRI section wins as a
    whole, so adding the nvidia runtime silently drops SystemdCgroup (pods crash with cgroup errors) or the
    pause image and registry mirrors.
    How to fix: Copy the lost settings into the drop-in (newer toolkits copy them, nvidia-container-toolkit#1311), or put the nvidia
    runtime into the main file, or move to containerd 2.x.
    References: https://github.com/containerd/containerd/issues/5837; https://github.com/containerd/containerd/pull/9982; https://github.com/NVIDIA/nvidia-container-toolkit/pull/1311; measured on containerd 1.6 (company note)
    """
    version = setup.containerd_version
    mm = version.major_minor if version else None
    before = tuple(table("runtimes")["imports"]["replace_before"])
    if mm and mm >= before:
        return
    for main in setup.configs:
        if not main.imports or main.live or main.dump:
            continue
        for drop in setup.imported_by(main):
            if drop.cri_plugin != main.cri_plugin or not drop.cri_settings:
                continue
            lost = [k for k in main.cri_settings if k not in drop.cri_settings]
            if not lost:
                continue
            key_ones = [k for k in lost if k.endswith(("SystemdCgroup", "sandbox_image", "config_path"))] or lost
            evidence = [e for e in (main.imports_evidence, *(main.cri_settings[k] for k in key_ones[:4]), drop.evidence) if e]
            if version and version.evidence:
                evidence.append(version.evidence)
            yield Hit(
                title=f"{drop.where} replaces the CRI settings of {main.where} on containerd {version.version if version else '1.x'}",
                explanation=(
                    f"{main.where} imports {drop.where}, which writes under plugins.{main.cri_plugin!r}. containerd before "
                    f"{before[0]}.{before[1]} takes an imported plugin section as a whole, so these settings of the main file are lost: "
                    f"{', '.join(lost[:8])}{' ...' if len(lost) > 8 else ''}."
                    + ("" if version else " (The containerd version is not in the artifacts; on 2.x the sections merge and this does not apply.)")
                ),
                severity=Severity.WARNING,
                role=Role.CONTRIBUTING if mm is None else Role.ROOT_CAUSE,
                evidence=tuple(evidence),
                fixes=(Fix(FixKind.PERMANENT, f"Repeat the lost CRI settings in {drop.where} (or move the runtime into {main.where}); "
                           "check the merged result with `containerd config dump`.", ("sudo containerd config dump | grep -nE 'SystemdCgroup|sandbox_image|BinaryName'",)),),
                node=setup.node,
                component="containerd",
                confidence=0.85 if mm else 0.5,
                facts={"main": main.where, "drop_in": drop.where, "lost": lost},
            )


@check("RT008", "containerd-config-unreadable")
def containerd_config_unreadable(setup: RuntimeSetup) -> Iterable[Hit]:
    """A containerd config is not valid TOML (or defines a key twice): containerd will not start with it.

    What it does: Reports the TOML error with its line, and keys or tables defined twice, for every
    containerd config given (Go templates are reported as gaps, not here). What could still be read from
    the file is used by the other checks.
    Why it matters: containerd refuses to start (or to restart after the toolkit's edit) with an invalid
    config; every pod on the node then fails. A pasted file may also just be cut short: check the original.
    How to fix: Fix the line named (remove the duplicate table, close the quote/bracket), then
    `containerd config dump` to confirm it loads, and restart containerd.
    References: containerd-config.toml(5); TOML 1.0 (a key or table may be defined once)
    """
    used = setup.kubelet_instance.config if setup.kubelet_instance else None
    for cfg in setup.configs:
        bad = [p for p in cfg.problems if p.kind in ("syntax", "duplicate")]
        if not bad or cfg.template:
            continue
        # Only an error when the artifacts tie the file to the containerd that runs (kubelet's, or the only one).
        mine = used is cfg or (used is None and len(setup.instances) == 1 and setup.instances[0].config is cfg)
        runner = next((i for i in setup.instances if i.config is cfg and not i.inferred), None)
        yield Hit(
            title=f"{cfg.where} is not a config containerd can load: {bad[0].message.split(':', 1)[0]}",
            explanation=" ".join(p.message + "." for p in bad[:4]) + (
                " This is the config of the containerd kubelet uses." if used is cfg else ""
            ) + (
                f" {runner.label} is running, so it loaded the file before this edit: its next restart will fail." if runner else ""
            ) + " (If the file on the node is fine, the paste was cut.)",
            severity=Severity.ERROR if mine else Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=tuple(e for p in bad[:4] for e in (*p.also, p.evidence) if e),
            fixes=(Fix(FixKind.IMMEDIATE, "Fix the lines named, then verify the merged config loads.",
                       (f"sudo containerd{f' --config {cfg.path}' if cfg.path else ''} config dump >/dev/null && echo OK",)),),
            node=setup.node,
            component="containerd",
            confidence=0.7,
            facts={"config": cfg.where, "problems": [p.message for p in bad]},
        )


# The plugin ids under which containerd serves the CRI API (1.x: grpc.v1.cri, `cri` in a version 1 file; 2.x: the
# runtime and images plugins the CRI service is built from).
_CRI_PLUGINS = ("cri", "io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images")


@check("RT010", "containerd-cri-plugin-disabled")
def containerd_cri_plugin_disabled(setup: RuntimeSetup) -> Iterable[Hit]:
    """A containerd config disables the CRI plugin: the kubelet cannot run any pod through that containerd.

    What it does: Reads `disabled_plugins` of every containerd config given and reports one that names the CRI
    plugin (`cri`, `io.containerd.grpc.v1.cri`, or containerd 2's `io.containerd.cri.v1.*`). A short id in a
    version 2 or 3 file is worse: containerd rejects the file (`invalid disabled plugin URI "cri" expect
    io.containerd.x.vx`) and does not start. It also says when the file imports itself. Stays silent for a
    file the artifacts show is not the config of the containerd the kubelet uses (Docker's own containerd).
    Why it matters: the kubelet talks to containerd only through CRI. Docker's containerd package ships
    `disabled_plugins = ["cri"]`, and a config rebuilt from another containerd (the container toolkit writing
    back `containerd config dump` on k0s-like setups) can carry it over: every pod on the node then fails with
    `unknown service runtime.v1.RuntimeService` or the node goes NotReady, GPU or not.
    How to fix: remove the CRI plugin from `disabled_plugins` in the file the kubelet's containerd reads and
    restart containerd; if the NVIDIA container toolkit wrote the file from `containerd config dump`, make it
    edit the file instead (toolkit env RUNTIME_CONFIG_SOURCE=file=<path>).
    References: https://github.com/NVIDIA/gpu-operator/issues/1323; https://github.com/containerd/containerd/blob/main/docs/PLUGINS.md
    """
    used = setup.kubelet_instance.config if setup.kubelet_instance else None
    for cfg in setup.configs:
        if cfg.live or cfg.template:
            continue
        cri = [d for d in cfg.disabled_plugins if d in _CRI_PLUGINS]
        if not cri or (used is not None and used is not cfg and cfg.path and used.path and cfg.path != used.path):
            continue
        short = cfg.version >= 2 and any("." not in d for d in cri)
        if short:
            what = (f"a version {cfg.version} file may not name a plugin by its short id: containerd rejects it "
                    f"(invalid disabled plugin URI \"{cri[0]}\" expect io.containerd.x.vx) and does not start")
        else:
            what = "containerd starts without its CRI plugin, so the kubelet's calls fail (unknown service runtime.v1.RuntimeService)"
        selfish = bool(cfg.path and any(fnmatch.fnmatch(cfg.path, g) for g in cfg.imports))
        configured = bool(cfg.cri_settings or cfg.runtimes)
        explanation = (f"{cfg.where} sets disabled_plugins = {list(cfg.disabled_plugins)}: {what}. The kubelet runs pods only through "
                       "CRI, so no pod (GPU or not) can start on a node whose containerd reads this file.")
        if configured:
            explanation += (" The same file configures the CRI plugin (its runtimes" + (f", default {cfg.default_runtime!r}" if cfg.default_runtime else "")
                            + "), which a disabled plugin never reads: the file looks rebuilt from another containerd's config (a `containerd config "
                            "dump` written back, as the NVIDIA container toolkit does on some distributions) rather than written for this one.")
        if selfish:
            explanation += f" It also imports itself ({cfg.path} is in its own imports)."
        path = cfg.path or "the config file the kubelet's containerd reads (its --config, else /etc/containerd/config.toml)"
        commands = ((f"sudo grep -n disabled_plugins {cfg.path}", f"sudo containerd --config {cfg.path} config dump >/dev/null && echo OK",
                     "sudo systemctl restart containerd") if cfg.path else ("ps -o args= -C containerd",))
        yield Hit(
            title=f"{cfg.where} disables containerd's CRI plugin ({', '.join(cri)}): the kubelet cannot run pods through it",
            explanation=explanation,
            severity=Severity.CRITICAL if used is cfg or configured else Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(e for e in (cfg.disabled_plugins_evidence, cfg.imports_evidence if selfish else None,
                                       cfg.default_runtime_evidence, cfg.version_evidence if short else None) if e),
            fixes=(Fix(FixKind.IMMEDIATE, f"Remove {', '.join(repr(c) for c in cri)} from disabled_plugins in {path}, check that the file loads, and restart containerd.",
                       commands),
                   Fix(FixKind.PERMANENT, "If the NVIDIA container toolkit (GPU Operator) rewrote this file from `containerd config dump`, make it edit "
                       "the file instead: set the toolkit's RUNTIME_CONFIG_SOURCE to file=<the path of this config>, then restart the toolkit pod.", ())),
            node=setup.node,
            component="containerd",
            confidence=0.85 if used is cfg or configured else 0.6,
            facts={"config": cfg.where, "disabled_plugins": list(cfg.disabled_plugins), "rejected_at_start": short, "imports_itself": selfish},
        )


@check("RT009", "containerd-config-keys-misread")
def containerd_config_keys_misread(setup: RuntimeSetup) -> Iterable[Hit]:
    """A containerd config sets an option under a spelling containerd drops or folds into another one.

    What it does: Reports runc options that are no runc option but close to one (`SystemdCgrup`: containerd
    drops it without a word, `containerd config dump` no longer shows it), and keys of one table that
    differ only by case (`SystemdCgroup` and `systemdCgroup`: containerd folds them into one field). BinaryName
    is left to RT004.
    Why it matters: The setting that looks right does nothing: a dropped SystemdCgroup leaves runc on cgroupfs
    while kubelet uses systemd, and which of two spellings wins is not defined.
    How to fix: Use the canonical spelling once (SystemdCgroup, BinaryName, ...) and delete the other; check the
    result with `containerd config dump`.
    References: containerd/containerd api/types/runc/options/oci.proto (field names containerd decodes case-insensitively); measured: `containerd config dump` drops misspelt keys (company note)
    """
    for cfg in _relevant_configs(setup):
        misread = [p for p in cfg.problems if (p.kind == "ambiguous-key" and not p.message.startswith("runtime "))
                   or (p.kind == "misspelt-key" and "BinaryName" not in p.message)]
        if misread:
            yield Hit(
                title=f"{cfg.where} sets options containerd drops or reads as one",
                explanation=" ".join(p.message + "." for p in misread[:4]),
                severity=Severity.WARNING,
                role=Role.ROOT_CAUSE,
                evidence=tuple(e for p in misread[:4] for e in (p.evidence, *p.also) if e),
                fixes=(Fix(FixKind.PERMANENT, "Keep the canonical spelling once, then check what containerd loaded.",
                           ("sudo containerd config dump | grep -n -i -E 'SystemdCgroup|BinaryName'",)),),
                node=setup.node,
                component="containerd",
                confidence=0.6,
                facts={"config": cfg.where, "problems": [p.message for p in misread]},
            )


@check("RT080", "stated-runtime-symptom")
def stated_runtime_symptom(prose: Prose | None = None, platform: Platform | None = None) -> Iterable[Hit]:
    """A ticket describes GPUs working on the host but not in containers, pods stuck in ContainerCreating, the runtime config being overwritten, or pods running on runc.

    What it does: Reads the sentences of the artifacts that no parser claims (and the prose of Markdown issue
    bodies) against knowledge/phrases.toml [[symptom]] rows of this layer: "nvidia-smi works on the host but not in the pod", GPU pods stuck in ContainerCreating, "our config.toml keeps getting overwritten", pods shown with the (default) runtime, or a failure after a cluster/runtime upgrade. Each match is a finding
    that cites the sentence, says what it implies, and lists the commands whose output would confirm it.
    Its confidence is low (0.35): a person's words, not a program's output, so any machine-read cause on the
    same scope explains it first.
    Why it matters: A ticket often holds only sentences; these all point at the container engine: the pod did not run under the nvidia runtime, or the engine kubelet talks to has no nvidia runtime because its config was generated or replaced.
    How to fix: Confirm with `crictl info`, `containerd config dump` and the pod's runtimeClassName; on distributions that generate the config, change the template (the finding names it for the platform), or run GPU pods with runtimeClassName: nvidia.
    References: knowledge/phrases.toml (each symptom row lists the public tickets it was learned from)
    """
    yield from stated_hits(prose, Layer.CONTAINER_RUNTIME, platform)


# ------------------------------------------------------------------------------------------------ RT160

_CRI_SCHEMA = {1: "containerd-cri-v2", 2: "containerd-cri-v2", 3: "containerd-cri-v3"}


def _cri_problems(cfg: ContainerdConfig) -> list[tuple[Problem, Evidence]]:
    name = _CRI_SCHEMA.get(cfg.version)
    if not name or cfg.live or not cfg.cri_plugin:
        return []
    cs = load_schema(name)
    _, _, runc = _runc_knowledge()
    out, seen = [], set()
    for key, ev in cfg.cri_settings.items():
        parts = tuple(key.split("."))
        p = check_path(parts, cs)
        if p is not None and cfg.version in (1, 2) and check_path(parts, load_schema("containerd-cri-v3")) is None:
            p = None  # containerd 2.x reads version 2 files too, with its own newer keys (cgroup_writable, sandboxer ...)
        if p is None or p.path in seen:
            continue
        seen.add(p.path)
        # a runc option written beside the runtime instead of under its options table
        if len(p.path) == 4 and p.path[:2] == ("containerd", "runtimes") and p.key.lower() in runc:
            real = runc[p.key.lower()]
            p = Problem("misplaced-key", p.path, f"`{p.key}` under containerd.runtimes.{p.path[2]} is not read there: it is a runc option "
                        f"and belongs under containerd.runtimes.{p.path[2]}.options", closest=real,
                        belongs=("containerd", "runtimes", p.path[2], "options", real))
        elif p.kind == "unknown-key" and cfg.version == 3:
            older = check_path(parts, load_schema("containerd-cri-v2"))
            if older is None:
                p = Problem("removed", p.path, f"{p.dotted} is a version 2 (containerd 1.x) key of the CRI plugin; a version 3 file does "
                            f"not read it under {cfg.cri_plugin!r}")
        out.append((p, ev))
    return out


@check("RT160", "containerd-cri-key-not-read")
def containerd_cri_key_not_read(setup: RuntimeSetup) -> Iterable[Hit]:
    """A containerd config sets keys in its CRI plugin section that containerd's CRI plugin does not have.

    What it does: checks every key of the CRI plugin section of each containerd config (version 1 and 2:
    `plugins.cri` / `plugins."io.containerd.grpc.v1.cri"`, version 3: `plugins.'io.containerd.cri.v1.runtime'`)
    against the CRI plugin's config structs (knowledge/schemas/containerd-cri-v2.json from containerd 1.6-1.7
    pkg/cri/config, containerd-cri-v3.json from containerd 2.x internal/cri/config): keys that are not there
    (with the key meant), runc options written beside a runtime instead of under its `options` table
    (`SystemdCgroup` under `runtimes.runc`), and version 2 keys in a version 3 file. runc options themselves
    are RT009's; runtimes under the wrong plugin key RT005's.
    Why it matters: containerd decodes its config with go-toml and drops keys its structs do not have without a
    word: a misplaced `BinaryName` or `SystemdCgroup` leaves runc without the NVIDIA hook or on the wrong cgroup
    driver while the file looks right.
    How to fix: move the key to where the CRI plugin reads it (the corrected snippet is given), restart
    containerd, and check with `containerd config dump`.
    References: https://github.com/containerd/containerd/blob/main/docs/cri/config.md; https://github.com/containerd/containerd/blob/release/1.7/pkg/cri/config/config.go
    """
    for cfg in _relevant_configs(setup):
        problems = _cri_problems(cfg)
        if not problems:
            continue
        ps = [p for p, _ in problems]
        first = ps[0]
        snippet = None
        if first.belongs or first.closest:
            target = first.belongs or (*first.path[:-1], first.closest)
            table = ".".join(f'"{t}"' if "." in str(t) else str(t) for t in (("plugins", cfg.cri_plugin) + tuple(target[:-1])))
            written = next((ev.text for p, ev in problems if p is first and ev and "=" in ev.text), "")
            snippet = f"[{table}]\n  {target[-1]} = {written.split('=', 1)[1].strip() if written else '...'}\n"
        yield Hit(
            title=f"{cfg.where}: {first.message}",
            explanation=(f"Checked against containerd's CRI plugin config for a version {cfg.version} file "
                         f"({load_schema(_CRI_SCHEMA[cfg.version]).cite}): {summary(ps)} containerd drops keys its config structs do "
                         "not have without a warning, so these settings are not in effect."),
            severity=Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(ev for _, ev in problems[:6] if ev)),
            fixes=(Fix(FixKind.PERMANENT, "Write the key where the CRI plugin reads it, restart containerd and check what it loaded.",
                       ("sudo containerd config dump | grep -n -A3 'runtimes'",), snippet=snippet, snippet_language="toml" if snippet else None),),
            node=setup.node,
            component="containerd",
            confidence=0.7,
            facts={"config": cfg.where, "version": cfg.version,
                   "problems": [{"kind": p.kind, "path": p.dotted, "belongs": dotted(p.belongs) if p.belongs else None} for p in ps]},
        )


# ------------------------------------------------------------------------------------------------ RT161


@check("RT161", "cdi-spec-field-not-read")
def cdi_spec_field_not_read(specs: CdiSpecs) -> Iterable[Hit]:
    """A CDI spec has fields the CDI specification does not have, values of the wrong type, or fields its cdiVersion does not allow.

    What it does: checks every CDI spec (/etc/cdi, /var/run/cdi) against the spec's Go types
    (knowledge/schemas/cdi-spec.json, from cncf-tags/container-device-interface specs-go): unknown or misplaced
    fields (with the field meant), wrong types, and fields newer than the `cdiVersion` the file declares
    (`hostPath` in deviceNodes needs 0.5.0, `netDevices` 1.1.0 ...).
    Why it matters: the runtime's CDI cache (containerd, CRI-O, nvidia-container-runtime in CDI mode) refuses a
    spec whose fields need a newer cdiVersion than it declares, and drops fields it does not know: devices in the
    spec cannot be resolved ("unresolvable CDI devices") or come without the mounts and device nodes meant.
    How to fix: regenerate the spec with the toolkit (`nvidia-ctk cdi generate --output=/var/run/cdi/nvidia.yaml`)
    rather than editing it, or raise cdiVersion to the version the fields need.
    References: https://github.com/cncf-tags/container-device-interface/blob/main/SPEC.md; https://github.com/cncf-tags/container-device-interface/blob/main/specs-go/config.go
    """
    cs = load_schema("cdi-spec")
    for spec in specs.specs:
        if not spec.body:
            continue
        problems = [p for p in validate(spec.body, cs, spec_version=spec.cdi_version) if p.kind not in ("deprecated", "removed")]
        problems = [p for p in problems if not (p.kind == "not-yet" and "needs version" not in p.message)]
        if not problems:
            continue
        refused = [p for p in problems if p.kind in ("wrong-type", "not-yet")]
        yield Hit(
            title=f"CDI spec {spec.where}: {problems[0].message}",
            explanation=(f"Checked against the CDI spec types ({cs.cite}): {summary(problems)} "
                         + ("The runtime's CDI cache refuses the spec, so its devices cannot be resolved. " if refused else "")
                         + ("Fields the spec types do not have are dropped." if any(p.ignored for p in problems) else "")),
            severity=Severity.ERROR if refused else Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(spec.key_lines.get(p.path) or spec.evidence for p in problems[:6] if spec.key_lines.get(p.path) or spec.evidence)),
            fixes=(Fix(FixKind.IMMEDIATE, "Regenerate the spec with the toolkit instead of editing it.",
                       ("sudo nvidia-ctk cdi generate --output=/var/run/cdi/nvidia.yaml", "nvidia-ctk cdi list")),),
            component="cdi",
            confidence=0.7,
            facts={"spec": spec.where, "cdiVersion": spec.cdi_version,
                   "problems": [{"kind": p.kind, "path": p.dotted, "belongs": dotted(p.belongs) if p.belongs else None} for p in problems]},
        )


# ------------------------------------------------------------------------------------------------ RT162


@check("RT162", "docker-runtime-key-not-read")
def docker_runtime_key_not_read(setup: RuntimeSetup) -> Iterable[Hit]:
    """A Docker daemon.json runtime entry has keys dockerd does not read (`args` for `runtimeArgs`).

    What it does: checks each `runtimes.<name>` entry of daemon.json against moby's runtime type
    (knowledge/schemas/docker-daemon-runtimes.json: path, runtimeArgs, runtimeType, options), with the key meant.
    Why it matters: dockerd refuses unknown keys only at the top level of daemon.json; inside a runtime entry it
    drops them, so arguments written as `args` never reach nvidia-container-runtime. An empty list dropped this way
    changes nothing and is reported as information.
    How to fix: use the key dockerd reads (`runtimeArgs`), or let `nvidia-ctk runtime configure --runtime=docker`
    write the entry, then restart dockerd.
    References: https://github.com/moby/moby/blob/master/api/types/system/runtime.go; https://github.com/NVIDIA/nvidia-container-toolkit/issues/56
    """
    cs = load_schema("docker-daemon-runtimes")
    for cfg in setup.other_engines:
        if cfg.engine != "docker":
            continue
        for name, h in cfg.runtimes.items():
            entry = {**({"path": h.binary} if h.binary else {}), **h.options}
            problems = [p for p in validate({"runtimes": {name: entry}}, cs) if p.kind != "deprecated"]
            if not problems:
                continue
            matters = [p for p in problems if p.value not in ([], {}, "", None)]
            yield Hit(
                title=f"{cfg.where} runtime {name!r}: {problems[0].message}",
                explanation=(f"Checked against moby's runtime type ({cs.cite}): {summary(problems)} dockerd drops keys it does not know "
                             "inside a runtime entry" + (", so what they say does not reach the runtime." if matters else "; these are empty, so nothing is lost.")),
                severity=Severity.WARNING if matters else Severity.INFO,
                role=Role.ROOT_CAUSE if matters else Role.SYMPTOM,
                evidence=tuple(e for e in (h.evidence,) if e),
                fixes=(Fix(FixKind.PERMANENT, "Use the key dockerd reads and restart dockerd.",
                           ("sudo nvidia-ctk runtime configure --runtime=docker", "sudo systemctl restart docker")),),
                component="dockerd",
                confidence=0.7 if matters else 0.4,
                facts={"config": cfg.where, "runtime": name,
                       "problems": [{"kind": p.kind, "path": p.dotted, "closest": p.closest} for p in problems]},
            )


# ------------------------------------------------------------------------------------------------ RT163


def _complete(cfg: ContainerdConfig) -> bool:
    return not (cfg.fragment or cfg.template or cfg.live) and "default" not in (cfg.path_source or "")


@check("RT163", "runtimeclass-handler-not-in-runtime-table")
def runtimeclass_handler_not_in_runtime_table(classes: RuntimeClasses, setup: RuntimeSetup | None = None) -> Iterable[Hit]:
    """An NVIDIA RuntimeClass names a handler that the containerd config or the toolkit's setting calls by another name.

    What it does: the runtime name is stated three times: the RuntimeClass's `handler`, the runtime table of
    the containerd config kubelet's containerd reads (`runtimes.<name>`, with its drop-ins), and the toolkit's
    CONTAINERD_RUNTIME_CLASS (the name the toolkit writes into that table). For each RuntimeClass whose handler
    names an NVIDIA runtime it reports a containerd config shown whole that has NVIDIA runtimes but not this one,
    and an explicit toolkit setting that writes another name. Configs shown in part (a grep, a template) are not judged.
    Why it matters: containerd looks the handler up by exact name; a pod with that runtimeClassName fails to start
    with `no runtime for "<handler>" is configured` although an NVIDIA runtime is configured under another name.
    How to fix: make the names agree: set the RuntimeClass handler to the runtime's name in the containerd config,
    or set the toolkit's CONTAINERD_RUNTIME_CLASS (toolkit.env in the GPU Operator's values) to the handler and let
    the toolkit rewrite the config.
    References: https://kubernetes.io/docs/concepts/containers/runtime-class/; https://github.com/NVIDIA/gpu-operator/blob/main/deployments/gpu-operator/values.yaml (operator.runtimeClass)
    """
    configs = [c for c in (_relevant_configs(setup) if setup else []) if c.engine == "containerd" and _complete(c)]
    nvidia_in = {n for c in configs for n, h in c.runtimes.items() if "nvidia" in n or "nvidia" in (h.binary or "")}
    all_in = {n for c in configs for n in c.runtimes}
    toolkit = setup.toolkit.runtime_class if setup and setup.toolkit else None
    for rc in classes.objects:
        handler = rc.body["handler"]
        if "nvidia" not in handler and "nvidia" not in (rc.name or ""):
            continue
        problems, evidence = [], [rc.evidence("handler", f"handler: {handler}")]
        if configs and nvidia_in and handler not in all_in:
            problems.append(f"the containerd config ({', '.join(c.where for c in configs[:2])}) has NVIDIA runtime(s) "
                            f"{', '.join(sorted(nvidia_in))} but no {handler!r}")
            evidence += [h.evidence for c in configs for n, h in c.runtimes.items() if n in nvidia_in and h.evidence][:2]
        if toolkit and not toolkit.default and toolkit.value and toolkit.value != handler:
            problems.append(f"the toolkit writes its runtime as {toolkit.value!r} ({toolkit.cite()})")
            if toolkit.evidence:
                evidence.append(toolkit.evidence)
        if not problems:
            continue
        target = sorted(nvidia_in)[0] if nvidia_in and handler not in all_in else (toolkit.value if toolkit else handler)
        yield Hit(
            title=f"RuntimeClass {rc.name} has handler {handler!r}, but " + problems[0],
            explanation=(f"RuntimeClass {rc.name} sends its pods to the runtime {handler!r}; " + "; ".join(problems)
                         + ". containerd looks the handler up by its exact name, so these pods cannot start."),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=(Fix(FixKind.PERMANENT, "Make the RuntimeClass handler and the runtime's name agree.",
                       snippet=f"apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: {rc.name}\nhandler: {target}\n",
                       snippet_language="yaml"),),
            node=setup.node if setup else None,
            component="containerd",
            confidence=0.75,
            facts={"runtimeclass": rc.name, "handler": handler, "containerd_runtimes": sorted(all_in),
                   "toolkit_runtime_class": toolkit.value if toolkit and not toolkit.default else None},
        )


# ------------------------------------------------------------------------------------------------ RT164


@check("RT164", "crio-runtime-key-not-read")
def crio_runtime_key_not_read(setup: RuntimeSetup) -> Iterable[Hit]:
    """A CRI-O runtime handler (`[crio.runtime.runtimes.<name>]`) has keys CRI-O does not read there, or a runtime_type it refuses.

    What it does: checks each runtime handler of every crio.conf and crio.conf.d drop-in gpusleuth reads
    (runtime_path, runtime_type, runtime_root, monitor_path, allowed_annotations ...) against CRI-O's own
    config types (knowledge/schemas/crio-runtime.json, from cri-o/cri-o pkg/config
    RuntimeConfig and RuntimeHandler): keys a handler does not have (with the key meant), settings of
    `[crio.runtime]` written inside a handler (`hooks_dir`, `default_runtime`, with where they belong),
    values of the wrong type, and a `runtime_type` other than oci, vm or pod.
    Why it matters: CRI-O decodes its config with BurntSushi/toml and drops keys its structs do not have
    without a word: a `hooks_dir` written under `[crio.runtime.runtimes.nvidia]` leaves the NVIDIA OCI hook
    undiscovered, a misspelt `runtime_path` leaves the handler on the runc found in $PATH, so GPU containers
    start without their devices. A runtime_type outside the allowed set makes CRI-O refuse the handler.
    How to fix: write the key where CRI-O reads it (the corrected snippet is given), or let
    `nvidia-ctk runtime configure --runtime=crio` write the drop-in, then restart CRI-O and check with
    `crio status config`.
    References: https://github.com/cri-o/cri-o/blob/main/docs/crio.conf.5.md; https://github.com/cri-o/cri-o/blob/main/pkg/config/config.go
    """
    cs = load_schema("crio-runtime")
    for cfg in setup.other_engines:
        if cfg.engine != "crio":
            continue
        problems: list[tuple[Problem, Evidence | None, str | None]] = []
        for name, h in cfg.runtimes.items():
            entry = dict(h.options)
            for p in validate({"runtimes": {name: entry}}, cs, root=("crio", "runtime"), at=("crio", "runtime")):
                if p.kind != "deprecated":
                    problems.append((p, h.evidence, name))
        if not problems:
            continue
        ps = [p for p, _, _ in problems]
        refused = [p for p in ps if p.kind in ("bad-value", "wrong-type")]
        first = ps[0]
        snippet = None
        target = first.belongs or ((*first.path[:-1], first.closest) if first.closest else None)
        if target:
            value = first.closest if first.kind == "bad-value" else first.value
            table = ".".join(str(t) for t in target[:-1])
            snippet = f"[{table}]\n  {target[-1]} = {json.dumps(value) if value is not None else '...'}\n"
        yield Hit(
            title=f"{cfg.where}: {first.message}",
            explanation=(f"Checked against CRI-O's runtime config types ({cs.cite}): {summary(ps)} "
                         + ("CRI-O refuses a handler with a runtime_type other than oci, vm or pod. " if refused else "")
                         + ("CRI-O drops keys its config types do not have without a warning, so these settings are not in effect."
                            if any(p.ignored for p in ps) else "")).strip(),
            severity=Severity.ERROR if refused else Severity.WARNING,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(ev for _, ev, _ in problems[:6] if ev)),
            fixes=(Fix(FixKind.PERMANENT, "Write the key where CRI-O reads it, restart CRI-O and check what it loaded.",
                       ("sudo systemctl restart crio", "sudo crio status config | grep -n -A6 'crio.runtime.runtimes'"),
                       snippet=snippet, snippet_language="toml" if snippet else None),),
            node=setup.node,
            component="crio",
            confidence=0.7,
            facts={"config": cfg.where, "runtimes": sorted({n for _, _, n in problems if n}),
                   "problems": [{"kind": p.kind, "path": p.dotted, "closest": p.closest,
                                 "belongs": dotted(p.belongs) if p.belongs else None} for p in ps]},
        )


SIG_NVML_MISSING = "device-plugin.nvml-library-missing"  # knowledge/signatures.toml rows RT111 reads
SIG_RUNTIME_HINT = "device-plugin.toolkit-hint"


@check("RT111", "nvml-not-injected-into-operand")
def nvml_not_injected(logs: Logs, cluster: Cluster | None = None, platform: Platform | None = None) -> Iterable[Hit]:
    """The device plugin (or GFD) cannot load libnvidia-ml.so.1: its container was started without the NVIDIA runtime.

    What it does: Finds the device plugin's `could not load NVML library` and NVML's `ERROR_LIBRARY_NOT_FOUND`
    in the logs of the operands that get the driver library from the runtime (the device plugin, GFD), one
    finding per pod, with the plugin's own hint line (`did you set the docker default runtime to nvidia?`).
    Stays silent for a pod whose spec asks for a RuntimeClass: the runtime was requested there, and a library
    missing under it is a driver that is not installed or not ready (DP001 and the driver checks report that).
    The DRA kubelet plugin, which loads NVML from the driver root it mounts, is not read here.
    Why it matters: these images carry no driver; the NVIDIA container runtime (or a CDI spec) mounts the library
    in. When the container engine the kubelet really talks to starts them with plain runc (nvidia not its default
    runtime and no RuntimeClass on the pod, or the nvidia runtime set in docker's daemon.json or another containerd
    than the kubelet's, as on k3s, RKE2 and microk8s), the plugin advertises no GPUs and every GPU pod stays
    Pending while nvidia-smi on the host works.
    How to fix: make nvidia the default runtime of the engine the kubelet uses (`crictl info` on the node shows
    it; k3s, RKE2 and microk8s render their own containerd config from a template), or give the operand pods
    `runtimeClassName: nvidia`; then delete the pod so that it starts again under the NVIDIA runtime. Where the
    platform is known (k3s, RKE2, microk8s, OpenShift...), the finding names its containerd template and socket.
    References: https://github.com/NVIDIA/k8s-device-plugin/issues/182; https://github.com/NVIDIA/k8s-device-plugin/issues/444; https://github.com/NVIDIA/k8s-device-plugin#prerequisites
    """
    hints = logs.matches(SIG_RUNTIME_HINT)
    by_pod: dict = {}
    for m in logs.matches(SIG_NVML_MISSING):
        if m.log.kind in ("kernel", "journal"):
            continue
        by_pod.setdefault((m.log.namespace, m.line.pod or m.log.pod, m.line.artifact if not (m.line.pod or m.log.pod) else None), []).append(m)
    for (namespace, pod_name, _), ms in by_pod.items():
        pod = cluster.pod(pod_name) if cluster is not None and pod_name else None
        if pod is not None and pod.runtime_class:
            continue
        namespace = namespace or (pod.namespace if pod else None)
        node = (pod.node if pod else None) or ms[-1].log.node
        last = ms[-1].line
        hint = [h.line for h in hints if h.log is ms[-1].log and h.line.line > last.line][:1]
        component = "gpu-feature-discovery" if (pod_name or "").startswith("gpu-feature-discovery") else "nvidia-device-plugin-daemonset"
        where = f"pod {pod_name}" + (f" on node {node}" if node else "") if pod_name else last.artifact
        unknown = " (its spec is not in the artifacts, so whether it asks for a RuntimeClass is not known)" if pod is None else ""
        commands = [f"kubectl debug node/{node} -it --image=busybox -- chroot /host sh -c 'crictl info | grep -i defaultRuntimeName'"] if node else []
        if pod_name and namespace:
            commands.append(f"kubectl get pod {pod_name} -n {namespace} -o jsonpath='{{.spec.runtimeClassName}}'")
        fixes = [Fix(FixKind.IMMEDIATE, "See which runtime the node's container engine starts pods with"
                     + (", and that the pod names no RuntimeClass." if pod_name else "."), tuple(commands))]
        fixes.append(Fix(FixKind.PERMANENT, "Configure nvidia in the containerd the kubelet uses (as its default runtime, or as a RuntimeClass the "
                         "operand pods name), restart that containerd, then start the pod again under it.",
                         (f"kubectl delete pod {pod_name} -n {namespace}",) if pod_name and namespace else ()))
        yield Hit(
            title=f"NVML is not in the {component}'s container: it was not started with the NVIDIA runtime",
            explanation=(f"{where}: \"{last.message.strip()[:200]}\". The image has no driver library of its own; the NVIDIA container "
                         f"runtime mounts it. The pod names no RuntimeClass{unknown}, so the container engine the kubelet uses started it with "
                         "its default runtime, which is not nvidia; less often the toolkit looks for the driver where it is not installed."
                         + (f" The plugin itself asks: \"{hint[0].message.strip()[:160]}\"" if hint else "") + platform_note(platform)),
            severity=Severity.CRITICAL,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys([*(x.line.evidence() for x in ms[-2:]), *(h.evidence() for h in hint),
                                          *([pod.evidence] if pod is not None and pod.evidence else [])])),
            fixes=(*fixes, *platform_fixes(platform)),
            node=node,
            component=component,
            confidence=0.8 if pod is not None else 0.65,
            facts={"pod": pod_name, "namespace": namespace, "runtime_class": None if pod is not None else "unknown"},
        )
