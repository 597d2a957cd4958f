"""Container toolkit layer (TK): the NVIDIA Container Toolkit daemonset that installs nvidia-container-runtime
and writes the runtime into containerd's config, and the settings it is given.

A failing toolkit pod is usually the messenger: when the runtime setup shows it was pointed at the wrong
containerd, it is reported as a symptom of that (RT002/RT003); otherwise its decisive log line says
which setting is wrong.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache
from operator import attrgetter
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.classes import clip
from gpusleuth.checks.container_runtime import main_handler, misdirected_only, missing_in_used, target_fixes
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.configuration import Configuration
from gpusleuth.facts.errors import ErrorLines
from gpusleuth.facts.gpus import GpuInventory
from gpusleuth.facts.host import HostFacts
from gpusleuth.facts.logs import Logs
from gpusleuth.facts.runtime import TOOLKIT_DAEMONSET, HandlerErrors, RuntimeSetup, toolkit_knowledge
from gpusleuth.knowledge import table
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.gpu import UNREACHABLE
from gpusleuth.model.k8s import Pod
from gpusleuth.model.logs import LogLine
from gpusleuth.checks.stated_common import platform_fixes, platform_note, stated_hits
from gpusleuth.facts.prose import Prose
from gpusleuth.model.layers import Layer
from gpusleuth.facts.platform import Platform

_FAILING = re.compile(r"^(?:Init:)?(?:Error|CrashLoopBackOff|RunContainerError|CreateContainerError|CreateContainerConfigError|ContainerCannotRun|StartError|OOMKilled)$")
TOOLKIT_CONTAINER = "nvidia-container-toolkit-ctr"


@cache
def _failures() -> tuple[tuple[dict, re.Pattern], ...]:
    return tuple((row, re.compile(row["pattern"])) for row in table("runtimes")["toolkit_failure"])


def _failing(pod: Pod) -> str | None:
    """Why the pod counts as failing: its STATUS, or a container's waiting/terminated reason."""
    if pod.status and _FAILING.match(pod.status):
        return pod.status
    for c in pod.containers:
        for reason in (c.reason, c.last_reason):
            if reason and _FAILING.match(reason) and (c.state != "running" or reason != c.last_reason):
                return reason
    return None


def _toolkit_lines(logs: Logs | None) -> tuple[list, dict[str, list[int]], list[int]]:
    """(the logs, pod -> indexes of the logs that hold its lines, indexes of the logs that hold toolkit container
    lines whose pod nothing names), so that every failing toolkit pod of a fleet is read without a pass over every
    log. A log is indexed by the pods its lines name (one C-level pass), not line by line."""
    every = logs.logs if logs is not None else []
    by_pod: dict[str, list[int]] = defaultdict(list)
    shared: list[int] = []
    for k, log in enumerate(every):
        pods = set(map(_POD, log.lines))
        if None in pods:  # lines that name no pod are the log's pod's, or nobody's
            pods.discard(None)
            if log.pod is not None:
                pods.add(log.pod)
            elif any((ln.container or log.container) == TOOLKIT_CONTAINER for ln in log.lines if ln.pod is None):
                shared.append(k)
        for p in pods:
            by_pod[p].append(k)
    return every, by_pod, shared


_POD = attrgetter("pod")


def _lines_of(index: tuple[list, dict[str, list[int]], list[int]], pod: str) -> list[LogLine]:
    """The toolkit pod's lines and the toolkit lines that name no pod, in the artifacts' order, from the index."""
    every, by_pod, shared = index
    return [ln for k in sorted({*by_pod.get(pod, ()), *shared}) for log in (every[k],) for ln in log.lines
            if (who := ln.pod or log.pod) == pod or (who is None and (ln.container or log.container) == TOOLKIT_CONTAINER)]


def _decisive(index: tuple[list, dict[str, list[int]], list[int]], pod: str) -> tuple[dict, Evidence, str, str] | None:
    """The most specific known failure line in the toolkit pod's logs: (row, evidence, matched path, meaning)."""
    return _first_failure(_lines_of(index, pod))


def _first_failure(lines: list[LogLine]) -> tuple[dict, Evidence, str, str] | None:
    """(row, evidence, matched path, meaning) of the first failure row, most specific first, that one of the lines
    matches: the first such line in their order."""
    for row, rx in _failures():
        for ln in lines:
            m = rx.search(ln.message)
            if m:
                groups = {k: v or "" for k, v in m.groupdict().items()}
                return row, ln.evidence(), groups.get("path", ""), row["meaning"].format(**groups)
    return None


@check("TK001", "toolkit-daemonset-failing")
def toolkit_daemonset_failing(
    cluster: Cluster, logs: Logs | None = None, setup: RuntimeSetup | None = None, found: HandlerErrors | None = None,
    platform: Platform | None = None,
) -> Iterable[Hit]:
    """The nvidia-container-toolkit daemonset pod is in Error or CrashLoopBackOff.

    What it does: Finds toolkit pods whose status or container state is Error, CrashLoopBackOff or a
    container creation error, and reads the toolkit log for its decisive line (socket not found or
    refused, config unreadable, `containerd config dump` failed, restart failed). When the runtime setup
    shows the toolkit was pointed at a containerd kubelet does not use, the crash is reported as a symptom
    of that (RT002/RT003).
    Why it matters: Until the toolkit completes, the runtime has no nvidia handler and the operator's
    validators, device plugin and every GPU pod wait behind it.
    How to fix: Correct the setting the log line names (toolkit.env CONTAINERD_SOCKET / CONTAINERD_CONFIG,
    RUNTIME_CONFIG_SOURCE=file when `containerd config dump` cannot run on the host), then let the pod
    restart. On a known platform (knowledge/runtimes.toml [[platform]]) the fix gives that platform's
    CONTAINERD_CONFIG / CONTAINERD_SOCKET values and says which file it generates.
    References: https://github.com/NVIDIA/gpu-operator/issues/522; https://github.com/NVIDIA/gpu-operator/issues/1323; https://github.com/NVIDIA/cloud-native-docs/pull/312
    """
    pods = [p for p in cluster.pods if (p.name or "").startswith(TOOLKIT_DAEMONSET) and _failing(p)]
    errors = found.errors if found else []
    handler = main_handler(setup, errors)
    cause = "RT002" if missing_in_used(setup, handler, errors) else "RT003" if misdirected_only(setup, handler, errors) else None
    tk = toolkit_knowledge()
    index = _toolkit_lines(logs) if pods else ([], {}, [])
    for pod in pods:
        state = _failing(pod)
        found = _decisive(index, pod.name)
        evidence = [e for e in (pod.evidence, found[1] if found else None) if e]
        target = setup.toolkit if setup else None
        if target:
            for s in (target.config, target.socket):
                if s.evidence and s.evidence.cite() not in {e.cite() for e in evidence}:
                    evidence.append(s.evidence)
        ns = pod.namespace or "gpu-operator"
        logs_cmd = f"kubectl logs -n {ns} {pod.name} -c {TOOLKIT_CONTAINER} --previous"
        text = f"Toolkit pod {ns}/{pod.name} is {state}."
        if found:
            row, _, path, meaning = found
            text += f" Its log says: {meaning}."
            if path.startswith(tk["container_socket_dir"]) and target:
                text += f" ({path} is the toolkit's mount of the host socket {target.socket.value}.)"
        else:
            text += " No decisive line from its log was in the artifacts."
        if cause:
            text += f" It was pointed at a containerd that kubelet does not use ({cause})."
            yield Hit(
                title=f"nvidia-container-toolkit is {state}: it was pointed at the wrong containerd",
                explanation=text,
                severity=Severity.ERROR,
                role=Role.SYMPTOM,
                evidence=tuple(evidence),
                node=pod.node or (setup.node if setup else None),
                component="nvidia-container-toolkit",
                confidence=0.85,
                caused_by=(cause,),
                facts={"pod": pod.name, "state": state, "decisive": found[0]["id"] if found else None},
            )
            continue
        fixes: tuple[Fix, ...] = ()
        if found and found[0]["cause"] in ("socket", "config") and setup and setup.kubelet_instance:
            fixes = target_fixes(setup, handler)
        elif found and found[0]["id"] == "config-dump-failed" and not (target and target.config_source and "file" in (target.config_source.value or "")):
            fixes = (Fix(FixKind.WORKAROUND, "Make the toolkit read the config file instead of running `containerd config dump` on the host.",
                         snippet="toolkit:\n  env:\n  - name: RUNTIME_CONFIG_SOURCE\n    value: file\n", snippet_language="yaml"),)
        if not fixes:
            fixes = platform_fixes(platform)
        fixes += (Fix(FixKind.IMMEDIATE, "Read the crashed toolkit container's log to its last lines.", (logs_cmd,)),)
        text += platform_note(platform)
        yield Hit(
            title=f"nvidia-container-toolkit is {state}" + (f": {found[0]['id'].replace('-', ' ')}" if found else ""),
            explanation=text,
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(evidence),
            fixes=fixes,
            node=pod.node or (setup.node if setup else None),
            component="nvidia-container-toolkit",
            confidence=0.8 if found else 0.5,
            facts={"pod": pod.name, "state": state, "decisive": found[0]["id"] if found else None},
        )


@check("TK002", "toolkit-env-value-not-string")
def toolkit_env_value_not_string(configuration: Configuration) -> Iterable[Hit]:
    """A toolkit.env value is a YAML boolean or number instead of a string.

    What it does: Looks at toolkit.env in the Helm values and spec.toolkit.env in the ClusterPolicy for
    values such as `value: true` or `value: 1` that YAML reads as non-strings.
    Why it matters: Kubernetes env values must be strings: the ClusterPolicy rendered from such values is
    rejected (`spec.toolkit.env[N].value in body must be of type string`), so `helm install/upgrade` fails
    and the toolkit keeps its old settings.
    How to fix: Quote the value (`value: "true"`), or use `--set-string` on the command line.
    References: NVIDIA/gpu-operator ClusterPolicy CRD (spec.toolkit.env is a list of EnvVar with string values)
    """
    for rel in configuration.values_docs:
        for i, item in enumerate(rel.get("toolkit.env") or ()):
            if isinstance(item, dict) and "value" in item and not isinstance(item["value"], str):
                name = item.get("name")
                line = rel.key_lines.get(f"toolkit.env.{i}.value")
                flags = rel.source == "helm --set flags"
                shown = str(item["value"]).lower() if isinstance(item["value"], bool) else item["value"]
                how = (f"is set with `--set toolkit.env[{i}].value={shown}`, which Helm reads as a {type(item['value']).__name__}" if flags
                       else f"has the unquoted value {item['value']!r}; YAML reads it as a {type(item['value']).__name__}")
                fix = (Fix(FixKind.PERMANENT, "Pass the value with --set-string, which keeps it a string.",
                           (f"--set-string 'toolkit.env[{i}].value={shown}'",)) if flags else
                       Fix(FixKind.PERMANENT, "Quote the value.",
                           snippet=f"toolkit:\n  env:\n  - name: {name}\n    value: \"{shown}\"\n", snippet_language="yaml"))
                yield Hit(
                    title=f"toolkit.env {name} is {type(item['value']).__name__} {item['value']!r}, not a string",
                    explanation=(
                        f"In {rel.artifact}, toolkit.env {name} {how}, and the ClusterPolicy's env values must be strings, so Helm "
                        "cannot apply it."
                    ),
                    severity=Severity.ERROR,
                    role=Role.ROOT_CAUSE,
                    evidence=(Evidence(rel.artifact, line, f"{name}: {item['value']}"),),
                    fixes=(fix,),
                    component="gpu-operator",
                    confidence=0.9,
                    facts={"name": name, "value": item["value"]},
                )


@check("TK003", "toolkit-env-misses-platform-paths")
def toolkit_env_misses_platform_paths(configuration: Configuration, platform: Platform, setup: RuntimeSetup | None = None) -> Iterable[Hit]:
    """The toolkit is told to edit a config file or talk to a socket that the platform does not use that way.

    What it does: Compares toolkit.env CONTAINERD_CONFIG / CONTAINERD_SOCKET (Helm values, --set flags,
    ClusterPolicy) with the platform's row in knowledge/runtimes.toml [[platform]]: a config that the
    platform regenerates (K3s/RKE2 config.toml instead of config.toml.tmpl, MicroK8s containerd.toml instead
    of containerd-template.toml) or a socket other than the platform's. When the artifacts show the containerd
    kubelet uses and the toolkit's target, RT002/RT003 judge that instead, from the node's own files.
    Why it matters: the toolkit's edit to a generated file is lost at the next restart of the distribution
    (nvidia stops being registered or the default), and a wrong socket means the toolkit signals a containerd
    that is not there (or not kubelet's), so the runtime never picks the change up.
    How to fix: set the platform's values (the finding gives them as a values fragment) and upgrade the
    release; the toolkit pod rewrites the right file and restarts the right containerd.
    References: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html#rancher-kubernetes-engine-2;
    https://docs.k3s.io/advanced#configuring-containerd; https://github.com/k3s-io/k3s/issues/4070
    """
    import yaml
    p = platform.row
    if p.runtime != "containerd" or not p.toolkit_env:
        return
    if setup is not None and setup.kubelet_instance is not None and setup.toolkit is not None and not setup.toolkit.assumed:
        return  # the node's own containerd is known: RT002/RT003 judge the toolkit's target against it, with its evidence
    wrong: list[tuple[str, str, str, object]] = []
    for name in ("CONTAINERD_CONFIG", "CONTAINERD_SOCKET"):
        want = p.toolkit_env.get(name)
        got = configuration.env("toolkit", name)
        if not want or got is None or not got.explicit or not isinstance(got.value, str) or not got.value:
            continue
        value = got.value.rstrip("/")
        if name == "CONTAINERD_CONFIG":
            # the platform regenerates the file, and its own toolkit target is another one (K3s: the template); where
            # the generated file is itself the target (EKS, AKS, GKE), the toolkit pod rewrites it each time it starts
            generated = p.generated and p.template and value == p.config.rstrip("/") != want.rstrip("/")
            if generated or (value != want.rstrip("/") and not value.startswith(want.rstrip("/")) and p.id not in ("kubeadm", "kubespray", "eks", "aks", "gke", "kind")):
                why = (f"{value} is generated by {p.name} from {p.edit_target()}: the toolkit's changes are lost at the next restart" if generated
                       else f"{p.name}'s containerd does not read {value}; its toolkit target is {want}")
                wrong.append((name, want, why, got))
        elif value != want.rstrip("/"):
            wrong.append((name, want, f"{p.name}'s containerd listens on {p.socket}, not {value}", got))
    if not wrong:
        return
    stated = platform.stated
    env = [{"name": k, "value": v} for k, v in p.toolkit_env.items()]
    snippet = yaml.safe_dump({"toolkit": {"env": env}}, sort_keys=False, default_flow_style=False)
    yield Hit(
        title=f"toolkit.env {' and '.join(w[0] for w in wrong)} {'does' if len(wrong) == 1 else 'do'} not fit {platform.name}",
        explanation=(f"The platform is {p.name} ({platform.how}). " + " ".join(f"{w[0]}={w[3].value} ({w[3].source}): {w[2]}." for w in wrong)
                     + (" The platform is known only from the ticket's words: confirm it (node labels, `kubectl get nodes -o wide`)."
                        if stated else "")),
        severity=Severity.ERROR,
        role=Role.ROOT_CAUSE,
        evidence=tuple(dict.fromkeys(e for e in [*(w[3].evidence for w in wrong), *platform.evidence] if e)),
        fixes=(Fix(FixKind.PERMANENT, f"Give the toolkit the {p.name} paths and upgrade the release (`helm upgrade <release> nvidia/gpu-operator "
                                      f"-n <namespace> --reuse-values -f toolkit-values.yaml`).", ("helm list -A --filter gpu-operator",),
                   snippet, "yaml"),),
        component="nvidia-container-toolkit",
        confidence=0.5 if stated else 0.8,
        facts={"platform": p.id, "stated_platform": stated, "settings": {w[0]: w[3].value for w in wrong}, "expected": {w[0]: w[1] for w in wrong}},
    )


@check("TK080", "stated-toolkit-symptom")
def stated_toolkit_symptom(prose: Prose | None = None, platform: Platform | None = None) -> Iterable[Hit]:
    """A ticket describes the container toolkit pod failing, or a toolkit upgrade before the failure.

    What it does: Reads the sentences of the artifacts that no parser claims (and the prose of Markdown issue
    bodies) against knowledge/phrases.toml [[symptom]] rows of this layer: the toolkit pod crash-looping or exiting, "the toolkit breaks containerd" (a config the runtime cannot use), or
    "it broke after the toolkit was upgraded". Each match is a finding
    that cites the sentence, says what it implies, and lists the commands whose output would confirm it.
    Its confidence is low (0.35): a person's words, not a program's output, so any machine-read cause on the
    same scope explains it first.
    Why it matters: A ticket often holds only sentences; the toolkit writes the nvidia runtime into the node's engine config and restarts the engine; on distributions that run their own containerd it must be given that containerd's config (or template) and socket.
    How to fix: Read the toolkit pod's log with gpusleuth; give the toolkit the platform's CONTAINERD_CONFIG / CONTAINERD_SOCKET (the finding shows them).
    References: knowledge/phrases.toml (each symptom row lists the public tickets it was learned from)
    """
    yield from stated_hits(prose, Layer.CONTAINER_TOOLKIT, platform)


_IN_CONTAINER_SAYS = {
    "library-not-found": "cannot find the NVML library",
    "driver-not-loaded": "cannot talk to the NVIDIA driver",
    "no-devices": "finds no GPU",
}


_TOOLKIT_COMPONENTS = frozenset({"nvidia-container-cli", "nvidia-container-toolkit"})


@check("TK105", "driver-unreachable-inside-container")
def driver_unreachable_in_container(inventory: GpuInventory, host: HostFacts | None = None,
                                    errors: ErrorLines | None = None) -> Iterable[Hit]:
    """nvidia-smi run inside a container cannot reach the driver, while nothing shows the node's driver down.

    What it does: finds nvidia-smi's "couldn't find libnvidia-ml.so", "couldn't communicate with the NVIDIA
    driver" and "No devices were found" in the output of a command that ran it in a container (`docker run`,
    `podman run`, `kubectl exec`, `ctr run`...), and reports them unless the same node's own nvidia-smi failed
    too or its lsmod shows no nvidia module (then the driver is the cause: UD005).
    Why it matters: inside a container these lines are about what the runtime gave the container: the driver's
    libraries and device nodes are injected at start by the toolkit's hook or a CDI spec. A node whose driver
    works still gives a container none of it when the container did not run under the NVIDIA runtime, when the
    hook cannot find the driver, or when its ldconfig step fails, and reinstalling the driver changes nothing.
    When the toolkit's own error lines are in the artifacts (nvidia-container-cli, the runtime or its hook),
    the first is cited as what the toolkit said went wrong.
    How to fix: run nvidia-smi on the node itself; if it works, look at the injection: which runtime started
    the container, the toolkit's log (/var/log/nvidia-container-toolkit.log with debug on), what
    `nvidia-container-cli -k -d /dev/tty info` finds, and the ldconfig setting in
    /etc/nvidia-container-runtime/config.toml.
    References: https://github.com/NVIDIA/nvidia-docker/issues/1163; https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/troubleshooting.html
    """
    said = next((e for e in (errors.lines if errors is not None else ()) if e.component in _TOOLKIT_COMPONENTS
                 and not e.retry and not e.noise and e.level in ("error", "fatal")), None)
    toolkit_said = f" The toolkit says what went wrong at {said.evidence.cite()}: \"{clip(said.message, 160)}\"." if said else ""
    for ng in inventory.nodes:
        inside = [e for e in ng.errors if e.run_in and e.kind in UNREACHABLE]
        if not inside:
            continue
        h = host.for_node(ng.node) if host is not None else None
        if any(e.kind in UNREACHABLE and not e.run_in for e in ng.errors) or (h is not None and h.loaded("nvidia") is False):
            continue  # the node's own view shows the driver down: UD005 reports it
        first = inside[0]
        loaded = (f" The {h.modules.source} of the node lists the nvidia module." if h is not None and h.loaded("nvidia") else "")
        yield Hit(
            title=f"nvidia-smi inside a container {_IN_CONTAINER_SAYS[first.kind]}",
            explanation=f"{first.evidence.cite() if first.evidence else 'The output'}: \"{first.message}\", printed by `{first.run_in}`, "
                        "which ran it in a container. There it says what the container was given, not what the node has: "
                        "the driver's libraries and device nodes are injected when the container starts (the toolkit's hook "
                        "or a CDI spec), and nothing in the artifacts shows the node's driver down." + loaded + toolkit_said,
            severity=Severity.ERROR, role=Role.ROOT_CAUSE, node=ng.node, component="nvidia-container-toolkit", confidence=0.65,
            evidence=tuple(dict.fromkeys([*(e.evidence for e in inside if e.evidence), *((said.evidence,) if said else ())])),
            fixes=(
                Fix(FixKind.IMMEDIATE, "Run nvidia-smi on the node itself, then see what the toolkit finds of the driver.",
                    ("nvidia-smi", "nvidia-container-cli -k -d /dev/tty info")),
                Fix(FixKind.PERMANENT, "Fix the injection the toolkit's view points at: the container's runtime (the NVIDIA runtime or "
                                       "a CDI device), the toolkit's driver root, and the ldconfig setting in "
                                       "/etc/nvidia-container-runtime/config.toml.", ()),
            ),
            facts={"kind": first.kind, "command": first.run_in},
        )
