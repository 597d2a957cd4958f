"""The container runtime setup of a node: which containerd instances run, which one kubelet talks to,
which config file each reads, and which one the NVIDIA Container Toolkit was told to configure.

The two-containerd trap in one sentence: two containerd instances ran (the OS's `containerd.service` and the k8s snap's
`snap.k8s.containerd.service`); kubelet used the snap one; the toolkit, left at its defaults, put the
`nvidia` runtime into /etc/containerd/config.toml, the other one's file. This view lines those facts up,
each with its evidence, so that a check can say so. Matching is by normalised socket and config path;
where a fact is inferred (a default path, a distribution's layout) it says so.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from functools import cache

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.configuration import Configuration, Setting
from gpusleuth.facts.logs import Logs
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.knowledge import table
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Gap
from gpusleuth.model.k8s import K8sObject
from gpusleuth.model.runtime import (
    ContainerdConfig,
    ContainerdInstance,
    ContainerdVersion,
    EngineConfig,
    HostPath,
    KubeletRuntime,
)
from gpusleuth.parsers.containerd_config import normalise_path

TOOLKIT_DAEMONSET = "nvidia-container-toolkit-daemonset"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Layout:
    config: str
    socket: str
    toolkit_config: str | None = None
    data_hint: str | None = None

    def match(self, config: str | None, socket: str | None) -> dict | None:
        """Placeholder values when the observed config or socket fits this layout, else None."""
        for pattern, value in ((self.config, config), (self.socket, socket)):
            if value is None:
                continue
            rx = "^" + _PLACEHOLDER.sub(lambda m: f"(?P<{m.group(1)}>/.+?)" if m.start() == 0 else f"(?P<{m.group(1)}>[^/]+)",
                                         re.escape(pattern).replace(r"\{", "{").replace(r"\}", "}")) + "$"
            m = re.match(rx, value)
            if m:
                return m.groupdict()
        return None

    def fill(self, template: str, values: dict) -> str | None:
        values = dict(values)
        if "data" not in values and self.data_hint:
            values["data"] = self.data_hint
        try:
            return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
        except KeyError:
            return None


@dataclass(frozen=True)
class Distribution:
    id: str
    name: str
    services: tuple[str, ...]
    process_paths: tuple[str, ...]
    layouts: tuple[Layout, ...]
    note: str | None = None


@cache
def distributions() -> tuple[Distribution, ...]:
    out = []
    for row in table("runtimes")["distribution"]:
        out.append(Distribution(
            id=row["id"], name=row["name"], services=tuple(row.get("services", ())),
            process_paths=tuple(row.get("process_paths", ())),
            layouts=tuple(Layout(lay["config"], lay["socket"], lay.get("toolkit_config"), lay.get("data_hint")) for lay in row.get("layout", ())),
            note=row.get("note"),
        ))
    return tuple(out)


@cache
def toolkit_knowledge() -> dict:
    return table("runtimes")["toolkit"]


@dataclass
class Instance:
    """One running containerd, merged from every artifact that shows it."""

    config_path: str | None = None
    socket: str | None = None
    service: str | None = None
    binary: str | None = None
    pid: int | None = None
    config_flag: bool = False
    socket_flag: bool = False
    evidence: list[Evidence] = field(default_factory=list)
    distribution: Distribution | None = None
    config: ContainerdConfig | None = None  # the file it reads, when that file was given
    socket_from_config: bool = False  # the socket was read from the config's [grpc] address
    inferred: bool = False  # no process listing: assumed from a config file at a distribution's path

    @property
    def unit(self) -> str | None:
        """The systemd unit, as seen or as the distribution names its only one."""
        if self.service:
            return self.service
        if self.distribution and len(self.distribution.services) == 1:
            return self.distribution.services[0]
        return None

    @property
    def label(self) -> str:
        parts = [f"{self.unit} ({self.binary})" if self.unit and self.binary else self.unit or self.binary or "containerd"]
        if self.socket:
            parts.append(f"socket {self.socket}")
        if self.inferred:
            parts.append(f"assumed from {self.config_path} (no process listing)")
        return ", ".join(parts)

    def absorb(self, other: ContainerdInstance) -> None:
        for name in ("service", "binary", "pid"):
            if getattr(self, name) is None and getattr(other, name) is not None:
                setattr(self, name, getattr(other, name))
        if other.config_path and (other.config_flag or not self.config_flag) and (self.config_path is None or other.config_flag):
            self.config_path, self.config_flag = other.config_path, other.config_flag or self.config_flag
        if other.socket and (other.socket_flag or not self.socket_flag) and (self.socket is None or other.socket_flag):
            self.socket, self.socket_flag = other.socket, other.socket_flag or self.socket_flag
        if other.evidence and other.evidence not in self.evidence:
            self.evidence.append(other.evidence)


BUILTIN_DEFAULT_RUNTIME = "runc"  # containerd CRI default_runtime_name when no file sets it (config versions 1-3)


@dataclass(frozen=True)
class DefaultRuntime:
    """containerd's default runtime handler for one instance, and where that was read."""

    name: str
    evidence: Evidence | None
    implicit: bool  # no file sets it: containerd's built-in default
    config: ContainerdConfig


@dataclass(frozen=True)
class TargetSetting:
    """One toolkit setting (CONTAINERD_CONFIG, ...) as the toolkit will see it, with where it comes from."""

    name: str
    value: str | None
    source: str
    evidence: Evidence | None
    default: bool = False  # not set; value is the toolkit's default

    def cite(self) -> str:
        where = f" ({self.evidence.cite()})" if self.evidence else ""
        return f"{self.name}={self.value}{' (default, not set)' if self.default else ''} from {self.source}{where}"


@dataclass
class ToolkitTarget:
    config: TargetSetting
    socket: TargetSetting
    runtime_class: TargetSetting
    config_source: TargetSetting | None = None
    drop_in: TargetSetting | None = None
    set_as_default: TargetSetting | None = None
    assumed: bool = False  # no Helm values, ClusterPolicy or toolkit DaemonSet seen: defaults assumed

    def settings(self) -> list[TargetSetting]:
        return [s for s in (self.config, self.socket, self.runtime_class, self.config_source, self.drop_in, self.set_as_default) if s]


@dataclass
class RuntimeSetup:
    node: str | None = None
    configs: list[ContainerdConfig] = field(default_factory=list)
    other_engines: list[EngineConfig] = field(default_factory=list)  # CRI-O, Docker
    instances: list[Instance] = field(default_factory=list)
    kubelet: KubeletRuntime | None = None
    kubelet_instance: Instance | None = None
    kubelet_instance_how: str | None = None  # "kubelet endpoint" | "only containerd running" | "distribution"
    toolkit: ToolkitTarget | None = None
    toolkit_instance: Instance | None = None
    containerd_version: ContainerdVersion | None = None
    host_paths: dict[str, HostPath] = field(default_factory=dict)
    configuration: Configuration | None = None
    # GPU-requesting pods (or workload templates) without runtimeClassName: they get containerd's default runtime.
    default_runtime_pods: list[tuple[str, Evidence | None]] = field(default_factory=list)

    def configs_with(self, handler: str) -> list[ContainerdConfig]:
        return [c for c in self.configs if handler in c.runtimes]

    def imported_by(self, main: ContainerdConfig) -> list[ContainerdConfig]:
        """Seen configs whose path one of main's `imports` globs matches."""
        return [c for c in self.configs if c is not main and c.path and any(fnmatch.fnmatch(c.path, g) for g in main.imports)]

    def handler_configured(self, handler: str, instance: Instance | None) -> tuple[bool | None, list[ContainerdConfig]]:
        """Whether the containerd `instance` offers `handler`, and the configs that say so (the live
        `crictl info` of its socket first, then its file and that file's drop-ins). None when unknown."""
        if instance is None:
            return None, []
        live = [c for c in self.configs if c.live and not c.fragment and c.socket and c.socket == instance.socket]
        if live:
            return handler in live[0].runtimes, live[:1]
        if instance.config is None:
            return None, []
        chain = [instance.config, *self.imported_by(instance.config)]
        return any(handler in c.runtimes for c in chain), chain

    def default_runtime_of(self, instance: Instance | None) -> DefaultRuntime | None:
        """The runtime containerd gives a pod without runtimeClassName: what its running CRI plugin
        reports, else the last of its file and drop-ins that sets default_runtime_name, else containerd's
        built-in "runc" when its whole main config is shown without the key. None when unknown."""
        if instance is None:
            return None
        live = [c for c in self.configs if c.live and c.socket and c.socket == instance.socket and c.default_runtime]
        if live:
            return DefaultRuntime(live[0].default_runtime, live[0].default_runtime_evidence, False, live[0])
        main = instance.config
        if main is None:
            return None
        for cfg in reversed([main, *self.imported_by(main)]):
            if cfg.default_runtime:
                return DefaultRuntime(cfg.default_runtime, cfg.default_runtime_evidence, False, cfg)
        if main.template or main.dump or main.live or not main.cri_plugin:
            return None
        section = next((ev for key, ev in main.cri_settings.items() if key.startswith("containerd.")), None)
        ev = section or main.generated_evidence or main.evidence
        cited = Evidence(ev.artifact, ev.line, f"{main.where} sets no default_runtime_name: containerd's default runtime is runc") if ev else None
        return DefaultRuntime(BUILTIN_DEFAULT_RUNTIME, cited, True, main)

    def expected_target(self, instance: Instance) -> tuple[str | None, str | None, Distribution | None]:
        """(CONTAINERD_CONFIG, CONTAINERD_SOCKET) the toolkit needs to configure `instance`."""
        dist = instance.distribution
        config, socket = instance.config_path, instance.socket
        if dist:
            for layout in dist.layouts:
                values = layout.match(config, socket)
                if values is None:
                    continue
                if layout.toolkit_config:
                    config = layout.fill(layout.toolkit_config, values) or config
                elif config is None:
                    config = layout.fill(layout.config, values)
                socket = socket or layout.fill(layout.socket, values)
                break
        return config, socket, dist


@dataclass(frozen=True)
class HandlerError:
    """An event or log line saying the engine has no runtime handler of some name."""

    handler: str
    engine: str
    evidence: Evidence
    pod: str | None
    namespace: str | None
    node: str | None
    known: str | None = None  # CRI-O lists the handlers it has
    note: str | None = None  # knowledge about this engine's message


@dataclass
class HandlerErrors:
    errors: list[HandlerError]


@cache
def _handler_patterns() -> tuple[tuple[dict, re.Pattern], ...]:
    return tuple((row, re.compile(row["pattern"])) for row in table("runtimes")["handler_error"])


@combiner(HandlerErrors)
def build_handler_errors(facts: Facts) -> HandlerErrors:
    """Every runtime-handler error in events and logs (knowledge/runtimes.toml [[handler_error]]), read once."""
    try:
        cluster = facts.get(Cluster)
    except NotApplicable:
        cluster = None
    try:
        logs = facts.get(Logs)
    except NotApplicable:
        logs = None
    if cluster is None and logs is None:
        raise NotApplicable("no events or logs to search for runtime handler errors")
    out: list[HandlerError] = []
    patterns = _handler_patterns()
    for event in cluster.events if cluster else ():
        for row, rx in patterns:
            m = rx.search(event.message or "")
            if m and event.evidence:
                pod = event.object.rsplit("/", 1)[-1] if event.object else None
                node = event.node or (event.source.split(",", 1)[1].strip() if event.source and "," in event.source else None)
                if node is None and pod and cluster.pod(pod):
                    node = cluster.pod(pod).node
                out.append(HandlerError(m.group("handler"), row["engine"], event.evidence, pod, event.namespace, node,
                                        m.groupdict().get("known"), row.get("note")))
                break
    found = logs.grep_many(row["needle"] for row, _rx in patterns) if logs else {}
    for row, rx in patterns if logs else ():
        for log, line in found[row["needle"]]:
            m = rx.search(line.message)
            if m:
                out.append(HandlerError(m.group("handler"), row["engine"], line.evidence(), line.pod or log.pod, log.namespace,
                                        log.node, m.groupdict().get("known"), row.get("note")))
    return HandlerErrors(out)


def _distribution(inst: Instance) -> Distribution | None:
    dists = distributions()
    for d in dists:
        if inst.service and inst.service in d.services:
            return d
    for d in dists:
        if inst.binary and any(inst.binary.startswith(p) or inst.binary == p for p in d.process_paths):
            return d
        if inst.config_path and any(inst.config_path.startswith(p) for p in d.process_paths if p.endswith("/")):
            return d
    for d in sorted(dists, key=lambda d: d.id != "standard"):  # the standard paths are the standard's first
        if any(layout.match(inst.config_path, inst.socket) is not None for layout in d.layouts):
            return d
    return None


def _merge_instances(found: list[ContainerdInstance]) -> list[Instance]:
    merged: list[Instance] = []
    service_only = [i for i in found if i.config_path is None and i.socket is None]
    for inst in (i for i in found if not (i.config_path is None and i.socket is None)):
        same = next((m for m in merged if (inst.pid and m.pid == inst.pid) or (inst.socket and m.socket == inst.socket)), None)
        if same is None:
            same = Instance()
            merged.append(same)
        same.absorb(inst)
    for m in merged:
        m.distribution = _distribution(m)
    for inst in service_only:
        home = next((m for m in merged if m.service == inst.service), None) or next(
            (m for m in merged if m.service is None and m.distribution and inst.service in m.distribution.services), None)
        if home is None:
            home = Instance()
            merged.append(home)
        home.absorb(inst)
        home.distribution = home.distribution or _distribution(home)
    return merged


def _instances_from_configs(configs: list[ContainerdConfig]) -> list[Instance]:
    """Without any process listing, each config file at a distribution's main config path stands for the
    containerd that reads it (socket from its [grpc] address or the layout)."""
    out: list[Instance] = []
    for cfg in configs:
        if cfg.live or cfg.dump or not cfg.path:
            continue
        path = cfg.path[: -len(".tmpl")] if cfg.template and cfg.path.endswith(".tmpl") else cfg.path
        # k3s and RKE2 share a layout ({data}/agent/etc/containerd/config.toml): the file's own header and
        # the distribution's data directory tell them apart.
        order = sorted(distributions(), key=lambda d: (cfg.generated_by != d.id,
                                                         not any(path.startswith(p) for p in d.process_paths if p.endswith("/")),
                                                         d.id != "standard"))
        for dist in order:
            layout, values = next(((lay, v) for lay in dist.layouts if (v := lay.match(path, None)) is not None), (None, None))
            if layout is None:
                continue
            socket = cfg.grpc_address or layout.fill(layout.socket, values)
            if socket and not any(i.socket == socket for i in out):
                out.append(Instance(config_path=path, socket=socket, evidence=[cfg.evidence] if cfg.evidence else [],
                                    distribution=dist, inferred=True))
            break
    return out


def _is_process(i: ContainerdInstance) -> bool:
    """Seen as a process or unit (ps, systemctl), not only as a socket a `crictl info` talked to."""
    return bool(i.pid or i.service or i.binary or i.config_path)


def _socket_only(found: list[ContainerdInstance], inferred: list[Instance]) -> list[Instance]:
    """No process listing: the containerds the config files stand for, joined by socket with the ones a
    `crictl info` reached."""
    out = list(inferred)
    for i in found:
        same = next((m for m in out if m.socket and m.socket == i.socket), None)
        if same is None:
            same = Instance(distribution=None)
            out.append(same)
        same.absorb(i)
        same.distribution = same.distribution or _distribution(same)
    return out


def _attach_configs(instances: list[Instance], configs: list[ContainerdConfig]) -> None:
    files = [c for c in configs if not c.live and c.path]
    for inst in instances:
        match = [c for c in files if c.path == inst.config_path and not c.template]
        match = match or [c for c in files if inst.config_path and c.path == inst.config_path + ".tmpl"]
        match = match or [c for c in files if c.grpc_address and c.grpc_address == inst.socket]
        if match:
            inst.config = sorted(match, key=lambda c: (c.dump, c.path_source == "file name (weak)"))[0]
            if not inst.socket_flag and inst.config.grpc_address and inst.config.grpc_address != inst.socket:
                inst.socket, inst.socket_from_config = inst.config.grpc_address, True


def _toolkit_daemonset_env(objects: list[K8sObject]) -> tuple[dict[str, tuple[str, Evidence]], K8sObject | None]:
    """Host-side env of the toolkit DaemonSet: in-container paths mapped back through hostPath volumes."""
    ds = next((o for o in objects if o.kind == "DaemonSet" and (o.name or "").startswith(TOOLKIT_DAEMONSET)), None)
    if ds is None:
        return {}, None
    spec = ds.get("spec.template.spec") or {}
    volumes = {v.get("name"): (v.get("hostPath") or {}).get("path") for v in spec.get("volumes") or () if isinstance(v, dict)}
    out: dict[str, tuple[str, Evidence]] = {}
    for ci, ctr in enumerate(spec.get("containers") or ()):
        if not isinstance(ctr, dict) or ctr.get("name") != "nvidia-container-toolkit-ctr":
            continue
        mounts = {m.get("mountPath", "").rstrip("/"): m.get("name") for m in ctr.get("volumeMounts") or () if isinstance(m, dict)}
        for ei, env in enumerate(ctr.get("env") or ()):
            if not isinstance(env, dict) or not isinstance(env.get("value"), str):
                continue
            value = env["value"]
            directory, _, base = value.rpartition("/")
            host_dir = volumes.get(mounts.get(directory))
            host_value = f"{host_dir.rstrip('/')}/{base}" if host_dir and base else value
            line = ds.key_lines.get(f"spec.template.spec.containers.{ci}.env.{ei}.value", ds.line)
            out[env.get("name")] = (host_value, Evidence(ds.artifact, line, f"{env.get('name')}={value}" + (f" (host {host_value})" if host_value != value else "")))
    return out, ds


def _target(config: Configuration | None, objects: list[K8sObject], toolkit_pods: list) -> ToolkitTarget | None:
    tk = toolkit_knowledge()
    ds_env, ds = _toolkit_daemonset_env(objects)
    if config is None and ds is None and not toolkit_pods:
        return None
    origin = f"DaemonSet {ds.name}" if ds else None
    pod = next((p for p in toolkit_pods if p.env and p.evidence), None)
    if ds is None and pod is not None:  # a describe of the toolkit pod shows its env (paths in-container)
        origin = f"pod {pod.name}"
        ds_env = {k: (v, Evidence(pod.evidence.artifact, pod.evidence.line, f"{k}={v} (env of pod {pod.name})"))
                  for k, v in pod.env.items() if isinstance(v, str)}

    def pick(names: list[str] | str, default: str | None) -> TargetSetting | None:
        names = [names] if isinstance(names, str) else names
        for name in names:
            if name in ds_env and not ds_env[name][0].startswith(("/runtime/",)):
                value, ev = ds_env[name]
                return TargetSetting(name, value, origin, ev)
        unset: Setting | None = None
        for name in names:
            s = config.env("toolkit", name) if config else None
            if s is not None and s.explicit and s.value is not None:
                return TargetSetting(name, normalise_path(str(s.value)) if str(s.value).startswith("/") else str(s.value), s.source, s.evidence)
            unset = unset or s
        if default is None:
            return None
        if unset is not None:
            return TargetSetting(names[0], default, unset.source, unset.evidence, default=True)
        if config is not None:
            seen = "ClusterPolicy" if config.cluster_policy is not None else "Helm values"
            return TargetSetting(names[0], default, f"toolkit default (the {seen} shown do not set it)", None, default=True)
        return TargetSetting(names[0], default, "toolkit default (no Helm values, ClusterPolicy or DaemonSet env seen)", None, default=True)

    assumed = config is None and not ds_env
    return ToolkitTarget(
        config=pick(tk["config_env"], tk["default_config"]),
        socket=pick(tk["socket_env"], tk["default_socket"]),
        runtime_class=pick(tk["runtime_class_env"], tk["default_runtime_class"]),
        config_source=pick(tk["config_source_env"], None),
        drop_in=pick(tk["drop_in_env"], None),
        set_as_default=pick(tk["set_as_default_env"], None),
        assumed=assumed,
    )


def _default_runtime_pods(cluster: Cluster | None, objects: list[K8sObject]) -> list[tuple[str, Evidence | None]]:
    """GPU-requesting pods (and workload templates) whose spec was seen and names no runtimeClassName.

    A pod's GPU request is only known from an artifact that shows its spec (YAML/JSON, a whole describe,
    which prints `Runtime Class Name:` only when one is set), so a known request with no runtime class
    means the spec has none; a `get pods` row knows neither and is not counted."""
    out: list[tuple[str, Evidence | None]] = []
    for pod in cluster.pods if cluster else ():
        if (pod.gpu_request or 0) > 0 and not pod.runtime_class:
            out.append((f"Pod/{pod.name}", pod.evidence))
    for o in objects:
        spec = o.get("spec.template.spec")
        if not isinstance(spec, dict) or spec.get("runtimeClassName"):
            continue
        if any("nvidia.com/gpu" in ((c.get("resources") or {}).get("limits") or {}) for c in spec.get("containers") or () if isinstance(c, dict)):
            out.append((f"{o.kind}/{o.name}", o.evidence("spec.template.spec.containers")))
    return out


def _kubelet_from_objects(objects: list[K8sObject]) -> KubeletRuntime | None:
    for o in objects:
        if o.kind == "KubeletConfiguration" and isinstance(o.get("containerRuntimeEndpoint"), str):
            return KubeletRuntime(o.get("containerRuntimeEndpoint"), o.evidence("containerRuntimeEndpoint"))
    return None


@combiner(RuntimeSetup)
def build_runtime_setup(facts: Facts) -> RuntimeSetup:
    configs = facts.all(ContainerdConfig)
    engines = [c for c in facts.all(EngineConfig) if not isinstance(c, ContainerdConfig)]
    found = facts.all(ContainerdInstance)
    kubelets = facts.all(KubeletRuntime)
    objects = facts.all(K8sObject)
    try:
        configuration = facts.get(Configuration)
    except NotApplicable:
        configuration = None
    try:
        cluster = facts.get(Cluster)
    except NotApplicable:
        cluster = None
    toolkit_pods = [p for p in (cluster.pods if cluster else ()) if (p.name or "").startswith(TOOLKIT_DAEMONSET)]
    toolkit_ds = any(o.kind == "DaemonSet" and (o.name or "").startswith(TOOLKIT_DAEMONSET) for o in objects)
    if not (configs or engines or found or kubelets or toolkit_pods or toolkit_ds or facts.all(HostPath)) and configuration is None:
        raise NotApplicable("no container runtime configs, containerd processes, kubelet endpoint, toolkit settings or host files in the artifacts")

    setup = RuntimeSetup(configs=configs, other_engines=engines, configuration=configuration)
    for cfg in configs:
        where = cfg.evidence.cite() if cfg.evidence else cfg.artifact
        for p in cfg.problems:
            if p.kind == "template":
                facts.gaps.append(Gap("containerd config", p.message, where))
        if cfg.path is None and not cfg.live:
            facts.gaps.append(Gap("containerd config", "which host file this config is was not shown (no `cat /path` "
                                  "prompt or `# /path` comment): it cannot be matched to a running containerd", where))
    setup.instances = _merge_instances(found) if any(_is_process(i) for i in found) else _socket_only(found, _instances_from_configs(configs))
    _attach_configs(setup.instances, configs)
    setup.kubelet = kubelets[0] if kubelets else _kubelet_from_objects(objects)
    if setup.kubelet:
        sock = normalise_path(setup.kubelet.socket)
        setup.kubelet_instance = next((i for i in setup.instances if i.socket == sock), None)
        if setup.kubelet_instance:
            setup.kubelet_instance_how = "kubelet endpoint"
        elif sock:
            inst = Instance(socket=sock, evidence=[setup.kubelet.evidence] if setup.kubelet.evidence else [])
            inst.distribution = _distribution(inst)
            _attach_configs([inst], configs)
            setup.kubelet_instance, setup.kubelet_instance_how = inst, "kubelet endpoint (no process seen for it)"
    elif len(setup.instances) == 1:
        only = setup.instances[0]
        how = "only containerd config given, no process listing" if only.inferred else "only containerd running"
        setup.kubelet_instance, setup.kubelet_instance_how = only, how
    else:
        k8s_own = [i for i in setup.instances if i.distribution and i.distribution.id != "standard"]
        if len(k8s_own) == 1:
            setup.kubelet_instance, setup.kubelet_instance_how = k8s_own[0], f"distribution ({k8s_own[0].distribution.name} runs its own containerd for Kubernetes)"

    setup.toolkit = _target(configuration, objects, toolkit_pods)
    if setup.toolkit:
        sock = setup.toolkit.socket.value
        cfg = setup.toolkit.config.value
        setup.toolkit_instance = next((i for i in setup.instances if i.socket == sock), None) or next(
            (i for i in setup.instances if i.config_path and cfg in (i.config_path, i.config_path + ".tmpl")), None)

    versions = facts.all(ContainerdVersion)
    if versions:
        setup.containerd_version = versions[0]
    elif cluster:
        for node in cluster.nodes.values():
            rt = node.container_runtime or ""
            if rt.startswith("containerd://"):
                setup.containerd_version = ContainerdVersion(rt.split("://", 1)[1], node.evidence.get("container_runtime"))
                break
    setup.host_paths = {h.path: h for h in facts.all(HostPath)}
    setup.default_runtime_pods = _default_runtime_pods(cluster, objects)
    names = cluster.node_names() if cluster else []
    if len(names) == 1:
        setup.node = names[0]
    elif toolkit_pods and toolkit_pods[0].node and len({p.node for p in toolkit_pods}) == 1:
        setup.node = toolkit_pods[0].node
    return setup

