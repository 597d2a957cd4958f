"""Helpers for the failure-class check tests: artifacts as the user pastes them go through the real
sources and parsers; Kubernetes objects that no parser here produces yet are added as model objects whose
evidence quotes the line kubectl printed."""

from __future__ import annotations

import tempfile
from pathlib import Path

from gpusleuth.analysis.diagnose import build_facts
from gpusleuth.analysis.engine import run_checks
from gpusleuth.checks import get_check
from gpusleuth.facts import Facts
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Finding
from gpusleuth.model.k8s import ContainerStatus, Event, Node, Pod, Taint
from gpusleuth.sources.loose import read_directory


def facts_from(files: dict[str, str] | None = None, *objs) -> Facts:
    """Facts from text artifacts (written to a temp folder and read like the user's folder) plus objects."""
    tmp = Path(tempfile.mkdtemp(prefix="gpusleuth-breadth-"))
    for name, text in (files or {}).items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text, encoding="utf-8")
    facts = build_facts(read_directory(tmp))
    for o in objs:
        facts.add(o)
    return facts


def run(code: str, facts: Facts) -> list[Finding]:
    findings, outcomes = run_checks(facts, checks=[get_check(code)])
    errors = [o for o in outcomes if o.status == "error"]
    assert not errors, errors
    return findings


def cites(f: Finding) -> list[str]:
    return [e.cite() for e in f.evidence]


def pod(name: str, ns: str = "gpu-operator", node: str | None = "gpu-node-1", status: str = "Running", ready: str = "1/1",
        restarts: int = 0, line: int = 2, artifact: str = "pods.txt", containers=(), **kw) -> Pod:
    text = f"{ns}   {name}   {ready}   {status}   {restarts}   12m   10.42.0.17   {node or '<none>'}"
    return Pod(name, ns, node=node, status=status, ready=ready, restarts=restarts, containers=tuple(containers),
               evidence=Evidence(artifact, line, text), **kw)


def waiting(name: str, reason: str, message: str | None = None, line: int = 30, artifact: str = "describe.txt", init: bool = False,
            image: str | None = None) -> ContainerStatus:
    return ContainerStatus(name, init=init, image=image, state="waiting", reason=reason, message=message,
                           evidence=Evidence(artifact, line, f"Reason:       {reason}"))


def event(obj: str, reason: str, message: str, line: int, ns: str | None = "gpu-operator", type_: str = "Warning",
          artifact: str = "events.txt", node: str | None = None, age: str = "2m") -> Event:
    return Event(reason, message, type_, ns, obj, "default-scheduler" if reason == "FailedScheduling" else "kubelet", node,
                 age=age, evidence=Evidence(artifact, line, f"{age}   {type_}   {reason}   {obj}   {message}"[:400]))


def node(name: str, labels: dict | None = None, capacity: dict | None = None, allocatable: dict | None = None,
         taints=(), runtime: str | None = "containerd://1.7.27", artifact: str = "nodes.txt", line: int = 1) -> Node:
    labels, capacity, allocatable = labels or {}, capacity or {}, allocatable or {}
    ev = {f"label:{k}": Evidence(artifact, line + 3 + i, f"{k}={v}") for i, (k, v) in enumerate(labels.items())}
    base = line + 4 + len(labels)
    ev.update({f"capacity:{k}": Evidence(artifact, base + i, f"  {k}:  {v}") for i, (k, v) in enumerate(capacity.items())})
    base += len(capacity) + 1
    ev.update({f"allocatable:{k}": Evidence(artifact, base + i, f"  {k}:  {v}") for i, (k, v) in enumerate(allocatable.items())})
    ev["container_runtime"] = Evidence(artifact, base + len(allocatable) + 2, f"  Container Runtime Version:  {runtime}")
    return Node(name, labels=labels, taints=tuple(taints), capacity=capacity, allocatable=allocatable, container_runtime=runtime,
                evidence=ev, artifact=artifact)


def taint(key: str, value: str | None, effect: str = "NoSchedule", line: int = 9, artifact: str = "nodes.txt") -> Taint:
    shown = f"{key}={value}:{effect}" if value else f"{key}:{effect}"
    return Taint(key, value, effect, Evidence(artifact, line, f"Taints:             {shown}"))
