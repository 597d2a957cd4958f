"""Container engines as the node's files and processes show them: containerd / CRI-O / Docker configs,
the containerd instances that run, the endpoint kubelet talks to, and Helm releases of the operator.

A config is what one file (or one `containerd config dump`, or one `crictl info`) says; which file a
running containerd actually reads is decided later, in facts/runtime.py, from processes and kubelet.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusleuth.model.evidence import Evidence


@dataclass(frozen=True, slots=True)
class RuntimeHandler:
    """One runtime a container engine can run a pod with (`runtimes.nvidia`, `runtimes.runc`)."""

    name: str
    runtime_type: str | None = None  # io.containerd.runc.v2, oci (CRI-O)
    binary: str | None = None  # options.BinaryName (containerd), runtime_path (CRI-O), path (Docker)
    binary_key: str | None = None  # the key spelling the file used: BinaryName, binaryName, runtime_path
    options: dict = field(default_factory=dict, hash=False)
    evidence: Evidence | None = None  # the section header
    binary_evidence: Evidence | None = None


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """Something in a config file that an engine reads differently from what its author meant."""

    kind: str  # syntax | template | duplicate | ambiguous-key | misspelt-key | version-mismatch
    message: str
    evidence: Evidence | None = None
    also: tuple[Evidence, ...] = ()  # the other line(s) involved: a duplicate's first definition


@dataclass(frozen=True)
class EngineConfig:
    """What one configuration artifact says about the runtimes an engine offers."""

    engine: str  # containerd | crio | docker
    artifact: str
    path: str | None  # host path of the file, when the artifact says it; None when unknown
    path_source: str  # "cat command", "leading comment", "config dump", "file name (weak)", "crictl info", "unknown"
    runtimes: dict[str, RuntimeHandler] = field(default_factory=dict)
    default_runtime: str | None = None
    default_runtime_evidence: Evidence | None = None
    problems: tuple[ConfigProblem, ...] = ()
    evidence: Evidence | None = None  # first line of the artifact part

    def runtime(self, name: str) -> RuntimeHandler | None:
        return self.runtimes.get(name)

    @property
    def where(self) -> str:
        return self.path or self.artifact


@dataclass(frozen=True)
class ContainerdConfig(EngineConfig):
    version: int = 1  # the config schema version: declared, or 1 when the file has no version line
    version_declared: bool = False
    version_evidence: Evidence | None = None
    cri_plugin: str | None = None  # the plugin key whose runtimes this version of containerd reads
    ignored_runtimes: dict[str, RuntimeHandler] = field(default_factory=dict)  # under a key the version ignores
    imports: tuple[str, ...] = ()
    imports_evidence: Evidence | None = None
    disabled_plugins: tuple[str, ...] = ()  # top-level disabled_plugins, as written
    disabled_plugins_evidence: Evidence | None = None
    enable_cdi: bool | None = None  # None: not set in this file
    enable_cdi_evidence: Evidence | None = None
    cdi_spec_dirs: tuple[str, ...] = ()
    grpc_address: str | None = None  # [grpc] address: the socket this config makes containerd listen on
    grpc_address_evidence: Evidence | None = None
    cri_settings: dict = field(default_factory=dict)  # dotted key inside the CRI plugin section -> Evidence
    template: bool = False  # k3s/RKE2 Go template (config.toml.tmpl)
    generated_by: str | None = None  # "rke2", "k3s": the file's header says it is rendered from a template
    generated_evidence: Evidence | None = None  # that header line
    dump: bool = False  # `containerd config dump`: the merged config of a running containerd
    live: bool = False  # `crictl info`: what a running containerd's CRI plugin actually loaded
    fragment: bool = False  # only a grep of it was shown: what is absent is unknown, not missing
    socket: str | None = None  # the socket of the running containerd (crictl info), when known


@dataclass(frozen=True)
class CrioConfig(EngineConfig):
    hooks_dirs: tuple[str, ...] = ()


@dataclass(frozen=True)
class DockerConfig(EngineConfig):
    pass


@dataclass(frozen=True, slots=True)
class ContainerdInstance:
    """One running containerd, from `ps`, `systemctl` or `crictl info`."""

    config_path: str | None  # --config; None when the process line shows no flag
    socket: str | None  # --address; None when the line shows none
    service: str | None = None  # systemd unit: containerd.service, snap.k8s.containerd.service, k3s.service
    binary: str | None = None  # /usr/bin/containerd, /snap/k8s/3421/bin/containerd
    pid: int | None = None
    config_flag: bool = False  # the config path came from a flag (not a default)
    socket_flag: bool = False
    evidence: Evidence | None = None


@dataclass(frozen=True, slots=True)
class KubeletRuntime:
    """The CRI endpoint kubelet uses (`--container-runtime-endpoint`, `containerRuntimeEndpoint:`)."""

    endpoint: str  # as written: unix:///run/containerd/containerd.sock
    evidence: Evidence | None = None

    @property
    def socket(self) -> str:
        return self.endpoint.split("://", 1)[-1] if "://" in self.endpoint else self.endpoint


@dataclass(frozen=True, slots=True)
class ContainerdVersion:
    version: str  # "1.6.21", "2.0.4"
    evidence: Evidence | None = None

    @property
    def major_minor(self) -> tuple[int, int] | None:
        parts = self.version.lstrip("v").split(".")
        try:
            return int(parts[0]), int(parts[1])
        except (IndexError, ValueError):
            return None


@dataclass(frozen=True, slots=True)
class HostPath:
    """Whether a file exists on the node, from `ls`/`stat`/`test` output."""

    path: str
    exists: bool
    evidence: Evidence | None = None
    entries: tuple[str, ...] | None = None  # a directory's names, when `ls -l DIR` listed it whole
    node: str | None = None  # the node it was read on, when the source records it (a bundle's probe)


@dataclass(frozen=True)
class DriverLibraries:
    """One directory listing's copies of a driver library (`ls -l` of /usr/lib/x86_64-linux-gnu, in a container or
    on a host): each versioned file and what the soname link (libnvidia-ml.so.1) points at."""

    lib: str  # libnvidia-ml | libcuda
    versions: tuple[tuple[str, Evidence], ...]  # (470.129.06, the line listing libnvidia-ml.so.470.129.06)
    link_version: str | None = None
    link_evidence: Evidence | None = None
    node: str | None = None


@dataclass(frozen=True)
class HelmRelease:
    """A Helm release as `helm list`, `helm get values` or its release Secret shows it.

    `values` are the effective values (chart defaults deep-merged with the user's), when the artifact
    carries them; `user_values` only what the user supplied. `key_lines` maps dotted keys
    ("toolkit.env.0.value", list items by index as in K8sObject) to the line that sets them.
    """

    name: str | None
    namespace: str | None = None
    chart: str | None = None  # gpu-operator
    chart_version: str | None = None  # v25.3.0
    app_version: str | None = None
    revision: int | None = None
    status: str | None = None
    values: dict | None = None
    user_values: dict | None = None
    computed: bool = False  # values are the computed (all) values, not only the user's
    partial: bool = False  # the artifact showed only part of the values (a grep, a truncated paste)
    source: str = ""  # helm list | helm get values | values file | release secret
    artifact: str = ""
    key_lines: dict = field(default_factory=dict, hash=False)
    evidence: Evidence | None = None

    def get(self, path: str, default=None):
        cur = self.values if self.values is not None else self.user_values
        for part in path.split("."):
            if not isinstance(cur, dict) or part not in cur:
                return default
            cur = cur[part]
        return cur

    def cite(self, path: str, text: str | None = None) -> Evidence:
        line = self.key_lines.get(path)
        if line is None:
            line = self.evidence.line if self.evidence else None
        value = self.get(path)
        return Evidence(self.artifact, line, text or (f"{path}: {value}" if value is not None else f"{path} (not set)"))
