"""Kubernetes objects as gpusleuth needs them, whatever they were parsed from (table, describe, JSON).

Fields a format does not carry are None; combiners merge several partial views of one object.
A name is None only for a pasted fragment that never shows it (a `describe` cut mid-block); the Cluster
combiner attributes such fragments when the evidence allows, and otherwise keeps them apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from gpusleuth.model.evidence import Evidence


@dataclass(frozen=True, slots=True)
class ContainerStatus:
    name: str | None
    init: bool = False
    image: str | None = None
    state: str | None = None  # running | waiting | terminated
    reason: str | None = None  # CrashLoopBackOff, PodInitializing, Completed, Error, ...
    message: str | None = None
    exit_code: int | None = None
    ready: bool | None = None
    restarts: int | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    last_reason: str | None = None  # lastState.terminated.reason
    last_message: str | None = None  # lastState.terminated.message: often the actual error text
    last_exit_code: int | None = None
    last_started_at: datetime | None = None
    last_finished_at: datetime | None = None
    evidence: Evidence | None = None


@dataclass(frozen=True, slots=True)
class Pod:
    name: str | None
    namespace: str | None = None
    node: str | None = None
    status: str | None = None  # the STATUS column as kubectl prints it: Init:0/5, CrashLoopBackOff, ...
    phase: str | None = None
    ready: str | None = None  # "1/4"
    restarts: int | None = None
    last_restart: str | None = None  # "4m7s" from a RESTARTS cell "64 (4m7s ago)"
    age: str | None = None
    containers: tuple[ContainerStatus, ...] = ()
    labels: dict = field(default_factory=dict, hash=False)
    owner: str | None = None  # "DaemonSet/nvidia-driver-daemonset"
    gpu_request: int | None = None  # total nvidia.com/gpu requested
    resource_requests: dict = field(default_factory=dict, hash=False)  # extended resources, name -> count
    runtime_class: str | None = None
    node_selector: dict = field(default_factory=dict, hash=False)
    tolerations: tuple[dict, ...] = ()
    env: dict = field(default_factory=dict, hash=False)  # container env values visible in the artifact
    images: tuple[str, ...] = ()
    # `Start Time:` as describe prints it, in the kubectl client's zone: the offset hints at the site's zone
    start_time: datetime | None = None
    start_evidence: Evidence | None = None
    evidence: Evidence | None = None
    # the Pod as written (a manifest, `kubectl get pod -o yaml`) with the line of every key, so its spec can be
    # checked against the API's schema (facts/validation.py PodSpecs); None when read from a table or describe.
    # Its body has no `status` when its metadata shows it was read back from the API server (the Pod's fields hold it)
    manifest: "K8sObject | None" = field(default=None, hash=False, compare=False, repr=False)

    @property
    def key(self) -> tuple[str | None, str]:
        return (self.namespace, self.name)

    def container(self, name: str) -> ContainerStatus | None:
        return next((c for c in self.containers if c.name == name), None)


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str | None
    effect: str
    evidence: Evidence | None = None


@dataclass(frozen=True, slots=True)
class NodeCondition:
    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    evidence: Evidence | None = None


@dataclass(frozen=True, slots=True)
class Node:
    name: str | None
    labels: dict = field(default_factory=dict, hash=False)
    taints: tuple[Taint, ...] = ()
    capacity: dict = field(default_factory=dict, hash=False)  # resource -> str quantity
    allocatable: dict = field(default_factory=dict, hash=False)
    conditions: tuple[NodeCondition, ...] = ()
    kernel_version: str | None = None
    os_image: str | None = None
    container_runtime: str | None = None  # "containerd://1.7.27"
    kubelet_version: str | None = None
    unschedulable: bool | None = None
    allocated: dict = field(default_factory=dict, hash=False)  # resource -> requested quantity ("Allocated resources")
    # Evidence by key: "name", "capacity:<res>", "allocatable:<res>", "allocated:<res>", "label:<key>",
    # "taint:<key>", "condition:<Type>", "kernel_version", "os_image", "container_runtime", "kubelet_version",
    # "unschedulable".
    evidence: dict = field(default_factory=dict, hash=False)
    artifact: str | None = None


@dataclass(frozen=True, slots=True)
class Event:
    reason: str
    message: str
    type: str | None = None  # Normal | Warning
    namespace: str | None = None
    object: str | None = None  # "pod/gpu-textgen"
    source: str | None = None  # kubelet / default-scheduler; old form "kubelet, node-1"
    node: str | None = None
    count: int | None = None
    age: str | None = None  # "23m", "(x4 over 8m21s)" kept verbatim
    first_seen: str | None = None
    last_seen: str | None = None
    time: datetime | None = None
    evidence: Evidence | None = None


@dataclass(frozen=True, slots=True)
class DaemonSet:
    name: str
    namespace: str | None = None
    desired: int | None = None
    current: int | None = None
    ready: int | None = None
    up_to_date: int | None = None
    available: int | None = None
    node_selector: str | None = None
    age: str | None = None
    evidence: Evidence | None = None
    tolerations: tuple[dict, ...] = field(default=(), hash=False)  # the pod template's, when the artifact shows them
    tolerations_evidence: Evidence | None = None


@dataclass(frozen=True, slots=True)
class K8sObject:
    """Any API object read from YAML/JSON (ClusterPolicy, NicClusterPolicy, ConfigMap, RuntimeClass,
    Deployment, Secret, ...), kept as its body with the line of each key so evidence can cite it."""

    kind: str
    name: str | None
    namespace: str | None
    body: dict = field(hash=False)
    artifact: str = ""
    line: int | None = None  # where the object starts
    api_version: str | None = None
    key_lines: dict = field(default_factory=dict, hash=False)  # dotted path ("spec.driver.rdma.enabled") -> line

    def get(self, path: str, default=None):
        """The value at a dotted path; list items by index ("spec.toolkit.env.0.value"), and keys that hold
        dots themselves ("metadata.labels.nvidia.com/gpu.present") are found by joining parts."""
        cur, parts, i = self.body, path.split("."), 0
        while i < len(parts):
            if isinstance(cur, list) and parts[i].isdigit() and int(parts[i]) < len(cur):
                cur, i = cur[int(parts[i])], i + 1
                continue
            if not isinstance(cur, dict):
                return default
            for j in range(i + 1, len(parts) + 1):
                key = ".".join(parts[i:j])
                if key in cur:
                    cur, i = cur[key], j
                    break
            else:
                return default
        return cur

    def evidence(self, path: str, text: str | None = None) -> Evidence:
        """Cite the line of a key (or the object's start when the key's line is not known)."""
        line = self.key_lines.get(path, self.line)
        value = self.get(path)
        return Evidence(self.artifact, line, text or (f"{path}: {value}" if value is not None else f"{path} (absent)"))
