"""Container toolkit layer (TK): the NVIDIA Container Toolkit daemonset that installs nvidia-container-runtime
and writes the runtime into containerd's config, and the settings it is given.

A failing toolkit pod is usually the messenger: when the runtime setup shows it was pointed at the wrong
containerd, it is reported as a symptom of that (RT002/RT003); otherwise its decisive log line says
which setting is wrong.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.checks.container_runtime import main_handler, misdirected_only, missing_in_used, target_fixes
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.configuration import Configuration
from gpusleuth.facts.logs import Logs
from gpusleuth.facts.runtime import TOOLKIT_DAEMONSET, HandlerErrors, RuntimeSetup, toolkit_knowledge
from gpusleuth.knowledge import table
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.k8s import Pod
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


def _decisive(logs: Logs | None, pod: str) -> tuple[dict, Evidence, str, str] | None:
    """The most specific known failure line in the toolkit pod's logs: (row, evidence, matched path, meaning)."""
    if logs is None:
        return None
    lines = [ln for log in logs.logs for ln in log.lines
             if (ln.pod or log.pod) == pod or (log.pod is None and (ln.container or log.container) == TOOLKIT_CONTAINER)]
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
    for pod in pods:
        state = _failing(pod)
        found = _decisive(logs, pod.name)
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


@check("TK080", "stated-toolkit-symptom")
def stated_toolkit_symptom(prose: Prose, platform: Platform | None = None) -> Iterable[Hit]:
    """A ticket describes the container toolkit pod failing, or a toolkit upgrade before the failure.

    What it does: Reads the sentences of the artifacts that no parser claims (and the prose of Markdown issue
    bodies) against knowledge/phrases.toml [[symptom]] rows of this layer: the toolkit pod crash-looping or exiting, or "it broke after the toolkit was upgraded". Each match is a finding
    that cites the sentence, says what it implies, and lists the commands whose output would confirm it.
    Its confidence is low (0.35): a person's words, not a program's output, so any machine-read cause on the
    same scope explains it first.
    Why it matters: a ticket often holds only sentences; the toolkit writes the nvidia runtime into the node's engine config and restarts the engine; on distributions that run their own containerd it must be given that containerd's config (or template) and socket.
    How to fix: read the toolkit pod's log with gpusleuth; give the toolkit the platform's CONTAINERD_CONFIG / CONTAINERD_SOCKET (the finding shows them).
    References: knowledge/phrases.toml (each symptom row lists the public tickets it was learned from)
    """
    yield from stated_hits(prose, Layer.CONTAINER_TOOLKIT, platform)
