"""GPU sharing: MIG geometries (mig-parted, applied by the GPU Operator's MIG manager) and the device plugin's
time-slicing / MPS configuration (OP1xx, DP1xx).

MIG is hardware partitioning (compute in sevenths, memory in eighths, no 5g or 6g profile); MPS
gives soft caps and weak fault isolation; time-slicing none at all. Profiles per GPU model and the isolation
table live in knowledge/mig_profiles.toml.
"""

from __future__ import annotations

import difflib

from gpusleuth.knowledge.config_schemas import load as load_schema

import re
from collections import Counter
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.gpus import GpuInventory
from gpusleuth.facts.plugin_config import PluginWiring
from gpusleuth.facts.sharing import SharingConfigs
from gpusleuth.knowledge import mig as mig_table
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.sharing import SharingConfig

_PROFILE = re.compile(r"^(?P<c>\d+)g\.(?P<m>\d+)gb(?P<me>\+me)?$")
# the keys of one mig-configs entry, from mig-parted's api/spec/v1 MigConfigSpec (knowledge/schemas/mig-parted-config.json)
_ENTRY_KEYS = set(load_schema("mig-parted-config").schema["properties"]["mig-configs"]["additionalProperties"]["items"]["properties"])
_MIG_LABEL = "nvidia.com/mig.config"


def _label_users(cluster: Cluster | None, config_name: str) -> list[tuple[str, Evidence | None]]:
    """Nodes whose nvidia.com/mig.config label selects this config."""
    if cluster is None:
        return []
    return [(n.name, n.evidence.get(f"label:{_MIG_LABEL}")) for n in cluster.nodes.values() if n.labels.get(_MIG_LABEL) == config_name]


def _models_for(nodes: list[str], cluster: Cluster | None, inventory: GpuInventory | None) -> list[mig_table.MigModel]:
    """MIG models of the GPUs on these nodes (all nodes when none is named); empty when nothing says."""
    products = set()
    for ng in (inventory.nodes if inventory else []):
        if ng.product and (not nodes or ng.node in nodes):
            products.add(ng.product)
    for n in (cluster.nodes.values() if cluster else []):
        if (not nodes or n.name in nodes) and n.labels.get("nvidia.com/gpu.product"):
            products.add(n.labels["nvidia.com/gpu.product"])
    models = {m.model: m for p in sorted(products) if (m := mig_table.model_for(p))}
    return [models[k] for k in sorted(models)]  # sorted: the same report whatever the hash seed


def _entry_problems(cfg: SharingConfig, path: tuple, entry, models: list[mig_table.MigModel], specific: bool) -> list[tuple[str, Evidence]]:
    out: list[tuple[str, Evidence]] = []
    ev = cfg.evidence
    if not isinstance(entry, dict):
        return [("an entry must be a mapping with devices / mig-enabled / mig-devices", ev(path))]
    for key in entry:
        if key not in _ENTRY_KEYS:
            close = difflib.get_close_matches(str(key).replace("_", "-").lower(), sorted(_ENTRY_KEYS), n=1, cutoff=0.7)
            hint = f"did you mean '{close[0]}'? " if close else ""
            out.append((f"unknown key '{key}' ({hint}mig-parted knows {', '.join(sorted(_ENTRY_KEYS))})", ev(path + (key,))))
    devices = entry.get("devices")
    if not (devices == "all" or (isinstance(devices, list) and all(isinstance(d, int) for d in devices))):
        out.append((f"devices must be 'all' or a list of GPU indices, not {devices!r}", ev(path + ("devices",))))
    enabled = entry.get("mig-enabled")
    if not isinstance(enabled, bool):
        out.append((f"mig-enabled must be true or false, not {enabled!r}", ev(path + ("mig-enabled",))))
    wanted = entry.get("mig-devices") or {}
    if wanted and enabled is False:
        out.append(("mig-devices given while mig-enabled is false", ev(path + ("mig-devices",))))
    if not isinstance(wanted, dict):
        return out + [("mig-devices must map profile names to counts", ev(path + ("mig-devices",)))]
    for name, count in wanted.items():
        m = _PROFILE.match(str(name))
        where = ev(path + ("mig-devices", name))
        if not m:
            out.append((f"'{name}' is not a MIG profile name (<compute>g.<memory>gb)", where))
        elif int(m.group("c")) in (5, 6):
            out.append((f"'{name}': there is no 5g or 6g profile; compute comes in 1/7, 2/7, 3/7, 4/7 and 7/7", where))
        if not isinstance(count, int) or count < 0:
            out.append((f"'{name}': count must be a whole number, not {count!r}", where))
    specific = specific and "device-filter" not in entry  # a device filter may target another model on the node
    names = [str(n) for n in wanted]
    fits = [m for m in models if all(n in m.profiles for n in names)] if models else []
    if specific and models:
        for m in models:
            missing = [n for n in names if n not in m.profiles and _PROFILE.match(n)]
            for n in missing:
                out.append((f"'{n}' does not exist on {m.model} (its profiles: {', '.join(m.profiles)})", ev(path + ("mig-devices", n))))
    elif names:
        known = {p for m in mig_table.models() for p in m.profiles}
        for n in names:
            if _PROFILE.match(n) and n not in known:
                out.append((f"'{n}' is not a MIG profile of any known GPU", ev(path + ("mig-devices", n))))
        fits = fits or [m for m in mig_table.models() if all(n in m.profiles for n in names)]
    counts = {str(n): c for n, c in wanted.items() if isinstance(c, int)}
    over = [_overflow(m, counts) for m in fits]
    if fits and all(over):
        out.append((over[0], ev(path + ("mig-devices",))))
    return out


def _overflow(m: mig_table.MigModel, counts: dict[str, int]) -> str | None:
    """Why these instances cannot fit one GPU of model m (None when the sums fit)."""
    for n, c in counts.items():
        p = m.profiles.get(n)
        if p and c > p.max_instances:
            return f"{c} x {n} on {m.model}: at most {p.max_instances} fit on one GPU"
    compute = sum(m.profiles[n].compute_slices * c for n, c in counts.items() if n in m.profiles)
    memory = sum(m.profiles[n].memory_slices * c for n, c in counts.items() if n in m.profiles)
    if compute > m.compute_unit or memory > m.memory_unit:
        return (f"the profiles add up to {compute}/{m.compute_unit} compute and {memory}/{m.memory_unit} memory slices on {m.model}; "
                f"one GPU has {m.compute_unit} and {m.memory_unit}")
    media = sum(c for n, c in counts.items() if n.endswith("+me"))
    if media > 1:
        return f"{media} '+me' instances: only one instance per GPU can own the media engines"
    return None


@check("OP150", "mig-parted-config-invalid")
def mig_parted_invalid(sharing: SharingConfigs, cluster: Cluster | None = None, inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """A mig-parted configuration asks for MIG instances the GPU cannot have.

    What it does: validates every config in mig-parted files and ConfigMaps (version: v1, mig-configs, entries
    with devices / mig-enabled / mig-devices) against knowledge/mig_profiles.toml: profile names that exist for
    the GPU model of the nodes whose nvidia.com/mig.config label selects it, at most max_instances of each,
    compute slices within 7 (4 on A30) and memory slices within 8, no 5g/6g, one +me per GPU.
    Why it matters: the MIG manager applies the label's config; an impossible geometry leaves the node with
    nvidia.com/mig.config.state=failed and no MIG devices, so pods asking for nvidia.com/mig-* stay Pending.
    How to fix: fix the config to a geometry the model supports (the finding lists its profiles) and relabel
    the node, or select one of the operator's predefined configs (all-1g.10gb, all-balanced, ...).
    References: https://docs.nvidia.com/datacenter/tesla/mig-user-guide/; knowledge/mig_profiles.toml; NVIDIA/mig-parted config format (version v1, mig-configs)
    """
    for cfg in sharing.of_kind("mig-parted"):
        body = cfg.body
        problems: list[tuple[str, Evidence]] = []
        if str(body.get("version")) != "v1":
            problems.append((f"version must be v1, not {body.get('version')!r}", cfg.evidence(("version",))))
        configs = body.get("mig-configs")
        if not isinstance(configs, dict):
            problems.append(("mig-configs must map config names to lists of entries", cfg.evidence(("mig-configs",))))
            configs = {}
        users_all = []
        for name, entries in configs.items():
            users = _label_users(cluster, name)
            users_all += users
            models = _models_for([u for u, _ in users], cluster, inventory) if users else []
            if not isinstance(entries, list):
                problems.append((f"config '{name}' must be a list of entries", cfg.evidence(("mig-configs", name))))
                continue
            for i, entry in enumerate(entries):
                for text, ev in _entry_problems(cfg, ("mig-configs", name, i), entry, models, specific=bool(users)):
                    problems.append((f"{name}[{i}]: {text}", ev))
        if not problems:
            continue
        in_use = [u for u, _ in users_all]
        yield Hit(
            title=f"mig-parted config has {len(problems)} problem(s): {problems[0][0]}",
            explanation=f"In {cfg.name}: " + "; ".join(t for t, _ in problems[:6])
                        + ("." if not in_use else f". Selected by nvidia.com/mig.config on {', '.join(in_use)}: the MIG manager cannot apply it "
                                                  "there (nvidia.com/mig.config.state=failed) and no MIG devices appear."),
            severity=Severity.ERROR if in_use else Severity.WARNING, role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys([*(e for _, e in problems[:6]), *(e for _, e in users_all if e)])),
            node=in_use[0] if len(in_use) == 1 else None, component="nvidia-mig-manager", confidence=0.85,
            fixes=(Fix(FixKind.IMMEDIATE, "Correct the geometry to profiles the GPU supports, then re-apply the label so the MIG manager retries; "
                                          "check the state label until it says success.",
                       tuple(f"kubectl get node {u} -L nvidia.com/mig.config,nvidia.com/mig.config.state" for u in in_use[:3])
                       or ("kubectl get nodes -L nvidia.com/mig.config,nvidia.com/mig.config.state",)),),
            facts={"problems": [t for t, _ in problems], "nodes": in_use},
        )


_PLUGIN_TOP = {"version", "flags", "resources", "sharing", "imex"}
_SHARING = {"timeSlicing", "mps"}
_REPLICATED = {"renameByDefault", "failRequestsGreaterThanOne", "resources"}
_RESOURCE = {"name", "rename", "devices", "replicas"}
_RESOURCE_NAME = re.compile(r"^nvidia\.com/(gpu|mig-\d+g\.\d+gb(\+me)?)$")


def _plugin_problems(cfg: SharingConfig) -> list[tuple[str, str, Evidence]]:
    """(severity, text, evidence): error = the plugin refuses the file; warning = it silently ignores a part."""
    b, ev, out = cfg.body, cfg.evidence, []
    if str(b.get("version", "v1")) != "v1":
        out.append(("error", f"unknown version {b.get('version')!r}: the plugin only reads v1", ev(("version",))))
    for key in b:
        if key in _SHARING or key in _REPLICATED:
            out.append(("warning", f"'{key}' at the top level is ignored: it belongs under sharing" + ("" if key in _SHARING else ".timeSlicing (or sharing.mps)"), ev((key,))))
        elif key not in _PLUGIN_TOP:
            out.append(("warning", f"unknown top-level key '{key}' is ignored", ev((key,))))
    sharing = b.get("sharing") or {}
    if not isinstance(sharing, dict):
        return out + [("error", "sharing must be a mapping", ev(("sharing",)))]
    for key in sharing:
        if key in _REPLICATED:
            out.append(("warning", f"sharing.{key} is ignored: it belongs under sharing.timeSlicing (or sharing.mps)", ev(("sharing", key))))
        elif key not in _SHARING:
            out.append(("warning", f"sharing.{key} is not a sharing mode (timeSlicing, mps); ignored", ev(("sharing", key))))
    for mode in _SHARING & set(sharing):
        block = sharing[mode] or {}
        path = ("sharing", mode)
        if not isinstance(block, dict):
            out.append(("error", f"sharing.{mode} must be a mapping", ev(path)))
            continue
        for key in block:
            if key not in _REPLICATED:
                out.append(("warning", f"sharing.{mode}.{key} is not a known key; ignored", ev(path + (key,))))
        for flag in ("renameByDefault", "failRequestsGreaterThanOne"):
            if flag in block and not isinstance(block[flag], bool):
                out.append(("error", f"sharing.{mode}.{flag} must be true or false, not {block[flag]!r}", ev(path + (flag,))))
        resources = block.get("resources")
        if not resources or not isinstance(resources, list):
            out.append(("error", f"sharing.{mode}: no resources specified", ev(path)))
            continue
        for i, r in enumerate(resources):
            rp = path + ("resources", i)
            if not isinstance(r, dict):
                out.append(("error", f"sharing.{mode}.resources[{i}] must be a mapping", ev(rp)))
                continue
            for key in r:
                if key not in _RESOURCE:
                    out.append(("warning", f"sharing.{mode}.resources[{i}].{key} is not a known key; ignored", ev(rp + (key,))))
            name = r.get("name")
            if not name:
                out.append(("error", f"sharing.{mode}.resources[{i}]: no resource name specified", ev(rp)))
            elif not _RESOURCE_NAME.match(str(name)):
                out.append(("error", f"sharing.{mode}.resources[{i}].name {name!r} is not a resource the plugin advertises (nvidia.com/gpu, nvidia.com/mig-<profile>)", ev(rp + ("name",))))
            replicas = r.get("replicas")
            if replicas is None:
                out.append(("error", f"sharing.{mode}.resources[{i}]: no replicas specified", ev(rp)))
            elif not isinstance(replicas, int) or isinstance(replicas, bool):
                out.append(("error", f"sharing.{mode}.resources[{i}].replicas must be a number, not {replicas!r}", ev(rp + ("replicas",))))
            elif replicas < 2:
                out.append(("error", f"sharing.{mode}.resources[{i}].replicas is {replicas}: number of replicas must be >= 2", ev(rp + ("replicas",))))
            devices = r.get("devices", "all")
            if isinstance(devices, str) and devices != "all":
                out.append(("error", f"sharing.{mode}.resources[{i}].devices is {devices!r} but the only valid string is 'all'", ev(rp + ("devices",))))
            elif devices != "all":
                out.append(("warning", f"sharing.{mode}.resources[{i}].devices is ignored: the plugin shares every GPU of the node "
                            f"(it resets 'devices' in sharing.{mode}.resources on load, 'not yet supported in the config')", ev(rp + ("devices",))))
            rename = r.get("rename")
            if rename and not (block.get("renameByDefault") is True and str(rename) == f"{name}.shared"):
                # api/config/v1 disableResoureRenaming: a per-resource rename is dropped; only renameByDefault renames
                shown = f"{name}.shared" if name else "<name>.shared"
                kept = (name + ".shared") if block.get("renameByDefault") is True else (name or "the name")
                out.append(("warning", f"sharing.{mode}.resources[{i}].rename is ignored (the plugin drops a per-resource rename and advertises "
                            f"{kept}): to advertise {shown}, set renameByDefault: true under sharing.{mode}", ev(rp + ("rename",))))
    ts, mps = sharing.get("timeSlicing"), sharing.get("mps")
    if isinstance(ts, dict) and ts.get("resources") and isinstance(mps, dict) and mps.get("resources"):
        out.append(("warning", "both timeSlicing and mps are configured: MPS takes precedence and time-slicing is ignored", ev(("sharing", "mps"))))
    return out


def _renamed_block(cfg: SharingConfig) -> str | None:
    """The sharing block rewritten with renameByDefault, for a config that asks for `<name>.shared` with a per-resource
    `rename` the plugin drops; None when no resource renames."""
    import yaml
    sharing = cfg.body.get("sharing") if isinstance(cfg.body.get("sharing"), dict) else {}
    for mode in ("timeSlicing", "mps"):
        block = sharing.get(mode) if isinstance(sharing.get(mode), dict) else {}
        resources = [r for r in block.get("resources") or () if isinstance(r, dict)]
        if any(r.get("rename") for r in resources):
            kept = [{k: v for k, v in r.items() if k != "rename"} for r in resources]
            return yaml.safe_dump({"version": "v1", "sharing": {mode: {"renameByDefault": True, "resources": kept}}}, sort_keys=False)
    return None


@check("DP150", "device-plugin-sharing-config-invalid")
def plugin_sharing_invalid(sharing: SharingConfigs) -> Iterable[Hit]:
    """The device plugin's time-slicing / MPS configuration is invalid or has keys where the plugin ignores them.

    What it does: validates device-plugin configs (files, and YAML strings in ConfigMaps): version v1,
    sharing.timeSlicing / sharing.mps with resources[{name, replicas >= 2, devices}], renameByDefault and
    failRequestsGreaterThanOne as booleans under the mode they configure; keys at the wrong level.
    Why it matters: values the plugin cannot read make it fail to start (nvidia.com/gpu disappears from the node);
    keys in the wrong place are silently ignored (the YAML reader is not strict), so the GPU is not shared and pods
    asking for replicas stay Pending.
    How to fix: move the keys under sharing.timeSlicing (or sharing.mps), fix the values, update the ConfigMap and
    restart the device plugin pods (or let the config manager pick it up).
    References: NVIDIA/k8s-device-plugin api/config/v1/replicas.go ('number of replicas must be >= 2', 'no resources specified'); api/config/v1/config.go (sigs.k8s.io/yaml, unknown keys ignored)
    """
    for cfg in sharing.of_kind("device-plugin"):
        problems = _plugin_problems(cfg)
        if not problems:
            continue
        refuses = any(s == "error" for s, _, _ in problems)
        yield Hit(
            title=f"Device plugin sharing config {'is invalid' if refuses else 'has ignored keys'}: {problems[0][1]}",
            explanation=f"In {cfg.name}: " + "; ".join(t for _, t, _ in problems[:6]) + ". "
                        + ("The plugin refuses a config it cannot read and does not start with it." if refuses else
                           "The plugin reads the file without complaint and shares nothing the misplaced keys describe."),
            severity=Severity.ERROR if refuses else Severity.WARNING, role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for _, _, e in problems[:6])), component="nvidia-device-plugin", confidence=0.85,
            fixes=(Fix(FixKind.IMMEDIATE, "Fix the config (a valid time-slicing block below), update the ConfigMap and restart the device plugin.",
                       snippet=_renamed_block(cfg) or "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: false\n    failRequestsGreaterThanOne: false\n"
                               "    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n", snippet_language="yaml"),),
            facts={"problems": [t for _, t, _ in problems]},
        )


@check("DP151", "gpu-sharing-isolation")
def sharing_isolation(sharing: SharingConfigs, inventory: GpuInventory | None = None, wiring: PluginWiring | None = None) -> Iterable[Hit]:
    """GPUs are shared by time-slicing or MPS: what isolation that gives, and what would give more.

    What it does: for each valid time-slicing or MPS configuration (unless the device plugin is seen running
    without any sharing), states the isolation it provides (the
    table in knowledge/mig_profiles.toml) and, when the cluster's GPUs can do MIG, that MIG gives hardware
    isolation instead.
    Why it matters: time-slicing has no memory and no fault isolation (one pod taking 70 GB of an 80 GB card makes
    the others OOM); MPS has soft caps and weak fault isolation. Fine for dev and CI, not for untrusted tenants.
    How to fix: nothing, if the tenants trust each other; otherwise partition with MIG (mig.strategy and a
    nvidia.com/mig.config label) or give whole GPUs.
    References: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html; https://docs.nvidia.com/deploy/mps/; https://docs.nvidia.com/datacenter/tesla/mig-user-guide/; knowledge/mig_profiles.toml [[isolation]]
    """
    if wiring is not None and wiring.running and not any(rc.replicas() for rc in wiring.running):
        return  # the plugin runs without any sharing: DP152 says so; there is no isolation to describe
    models = _models_for([], None, inventory)
    products = sorted({ng.product for ng in (inventory.nodes if inventory else []) if ng.product})
    no_mig = bool(products) and all(mig_table.not_mig_capable(p) for p in products)
    for cfg in sharing.of_kind("device-plugin"):
        s = cfg.body.get("sharing") if isinstance(cfg.body.get("sharing"), dict) else {}
        mode = "mps" if isinstance(s.get("mps"), dict) and s["mps"].get("resources") else "time-slicing" if isinstance(s.get("timeSlicing"), dict) and s["timeSlicing"].get("resources") else None
        if mode is None or any(sev == "error" for sev, _, _ in _plugin_problems(cfg)):
            continue
        key = "mps" if mode == "mps" else "timeSlicing"
        replicas = Counter({str(r.get("name")): r.get("replicas") for r in s[key]["resources"] if isinstance(r, dict)})
        row = mig_table.isolation()[mode]
        if models:
            better = f" These GPUs ({', '.join(m.model for m in models)}) can do MIG: {mig_table.isolation_text('mig')}."
        elif no_mig:
            better = (f" These GPUs ({', '.join(products)}) cannot do MIG; the step up is " + mig_table.isolation_text("mps" if mode != "mps" else "mig")
                      + (" (on other GPUs)." if mode == "mps" else ", or whole GPUs per tenant."))
        else:
            better = f" {mig_table.isolation_text('mig')} (on MIG-capable GPUs)."
        yield Hit(
            title=f"GPUs shared by {mode} ({', '.join(f'{n} x{c}' for n, c in replicas.items())}): memory isolation {row['memory_isolation']}, fault isolation {row['fault_isolation']}",
            explanation=f"{mig_table.isolation_text(mode)}. {row['caveats']}{better}",
            severity=Severity.INFO, role=Role.INFO, evidence=(cfg.evidence(("sharing", key)),), component="nvidia-device-plugin",
            confidence=0.9, facts={"mode": mode, "replicas": dict(replicas)},
        )


def _shared(cfg: SharingConfig) -> dict[str, int]:
    """resource -> replicas a valid device-plugin sharing config asks for (empty when it shares nothing)."""
    if any(sev == "error" for sev, _, _ in _plugin_problems(cfg)):
        return {}
    s = cfg.body.get("sharing") if isinstance(cfg.body.get("sharing"), dict) else {}
    out: dict[str, int] = {}
    for mode in ("timeSlicing", "mps"):
        for r in (s.get(mode) or {}).get("resources") or () if isinstance(s.get(mode), dict) else ():
            if isinstance(r, dict) and isinstance(r.get("replicas"), int):
                out[str(r.get("name"))] = r["replicas"]
    return out


def _plugin_values(rel) -> dict:
    values = rel.user_values if rel.user_values is not None else rel.values
    config = values.get("config") if isinstance(values, dict) else None
    return config if isinstance(config, dict) else {}


def _wiring_fault(cfg: SharingConfig, wiring: PluginWiring | None) -> tuple[str, list[Evidence], list[Fix]]:
    """Why the plugin is not pointed at `cfg`, as far as the artifacts show, with the command that points it."""
    cm, key = cfg.configmap, cfg.key
    ns = f" -n {cfg.namespace}" if cfg.namespace else ""
    for rel in (wiring.releases if wiring else ()):
        values = _plugin_values(rel)
        name, default, cmap = values.get("name"), values.get("default"), values.get("map")
        where = f"release {rel.name}" if rel.name else "the device plugin's Helm values"
        rns = f" -n {rel.namespace}" if rel.namespace else ns
        version = f" --version {rel.chart_version}" if rel.chart_version else ""
        cmd = (f"helm upgrade {rel.name or '<release>'} nvdp/nvidia-device-plugin{rns}{version} --reuse-values "
               f"--set config.name={cm} --set config.default={key}") if cm and key else None
        fixes = [Fix(FixKind.IMMEDIATE, f"Point the chart at ConfigMap {cm} and its key {key}, then check that the node advertises the replicas."
                     + ("" if rel.name else " (The release name is not in the artifacts: `helm list -A`.)")
                     + ("" if version else " Add --version with the chart version `helm list` shows, so the upgrade does not also move the chart."),
                     (cmd, "kubectl get nodes -o custom-columns='NAME:.metadata.name,GPU:.status.capacity.nvidia\\.com/gpu'"))] if cmd else []
        if not name and not cmap:
            if default and default == cm:
                why = (f"{where} sets config.default={default}, the name of the ConfigMap; config.default is the key inside it "
                       f"({key}) and the ConfigMap's name belongs in config.name. With no config.name (and no config.map) the chart "
                       "mounts no config, so the plugin starts with its built-in one")
            else:
                why = (f"{where} sets neither config.name nor config.map, so the chart mounts no config and the plugin starts with its "
                       "built-in one")
            return why, [rel.cite("config.default" if default else "config")], fixes
        if name and cm and name != cm:
            return (f"{where} points the plugin at ConfigMap {name} (config.name), but the sharing config is in ConfigMap {cm}",
                    [rel.cite("config.name")], fixes)
        if default and key and default != key:
            return (f"{where} selects key {default} (config.default), but the sharing config is under key {key}",
                    [rel.cite("config.default")], fixes)
    conf = wiring.configuration if wiring else None
    if conf is not None:
        name, default = conf.setting("devicePlugin.config.name"), conf.setting("devicePlugin.config.default")
        patch = '{"spec":{"devicePlugin":{"config":{"name":"%s","default":"%s"}}}}' % (cm, key)
        fixes = [Fix(FixKind.IMMEDIATE, f"Point the GPU Operator's device plugin at ConfigMap {cm} (in the operator's namespace) and its key {key}.",
                     (f"kubectl patch clusterpolicies.nvidia.com/{conf.policy_name} --type merge -p '{patch}'",))] if cm and key else []
        if name is None or not name.value:
            return ("the GPU Operator gives the plugin no config: ClusterPolicy/Helm devicePlugin.config.name is not set",
                    [e for e in (name.evidence if name else None,) if e], fixes)
        if cm and name.value != cm:
            return (f"the GPU Operator points the plugin at ConfigMap {name.value} (devicePlugin.config.name), not {cm}", [name.evidence], fixes)
        if (default is None or not default.value) and key:
            return ("devicePlugin.config.default is not set, so only nodes labelled nvidia.com/device-plugin.config="
                    f"{key} get the config", [e for e in (default.evidence if default else name.evidence,) if e], fixes)
    return ("the artifacts do not show how the plugin is pointed at it (device plugin Helm values config.name / config.default, "
            "ClusterPolicy devicePlugin.config, or the node label nvidia.com/device-plugin.config)", [], [])


@check("DP152", "sharing-config-not-in-effect")
def sharing_config_not_in_effect(sharing: SharingConfigs, wiring: PluginWiring | None = None, cluster: Cluster | None = None,
                                 inventory: GpuInventory | None = None) -> Iterable[Hit]:
    """A time-slicing / MPS config is defined, but the device plugin runs without it: the GPUs are not shared.

    What it does: For each valid device-plugin sharing config (a ConfigMap key or file asking for replicas),
    looks at what the plugin runs with: the config it prints at start (`Running with config:` with an empty
    sharing block), or a node whose nvidia.com/gpu capacity equals its physical GPU count (GFD gpu.count,
    nvidia-smi). Then says why the plugin never got the config: the standalone chart's config.name unset
    (typically the ConfigMap's name put in config.default, which names the key), config.name or
    config.default pointing elsewhere, or the GPU Operator's devicePlugin.config not set.
    Why it matters: the ConfigMap looks right and nothing logs an error, but every node still advertises one
    nvidia.com/gpu per GPU, so pods that count on replicas stay Pending.
    How to fix: point the plugin at the ConfigMap and key (`--set config.name=<ConfigMap> --set
    config.default=<key>` for the nvidia-device-plugin chart, ClusterPolicy devicePlugin.config.{name,default}
    for the operator); the plugin restarts and advertises the replicas.
    References: https://github.com/NVIDIA/k8s-device-plugin/issues/990; https://github.com/NVIDIA/gpu-operator/issues/412; https://github.com/NVIDIA/k8s-device-plugin/blob/main/deployments/helm/nvidia-device-plugin/values.yaml (config.name, config.default)
    """
    running = wiring.running if wiring else []
    for cfg in sharing.of_kind("device-plugin"):
        wanted = _shared(cfg)
        if not wanted:
            continue
        unshared = [rc for rc in running if not rc.replicas()]
        physical = _unmultiplied_nodes(cluster, inventory, wanted)
        if not unshared and not physical:
            continue
        why, wiring_ev, fixes = _wiring_fault(cfg, wiring)
        resource, replicas = next(iter(wanted.items()))
        where = f"ConfigMap {cfg.configmap}, key {cfg.key}" if cfg.configmap else cfg.name
        seen, evidence = [], [cfg.evidence(("sharing",))]
        plugin_nodes: set[str] = set()
        for rc in unshared[:2]:
            node = rc.node or (p.node if cluster is not None and rc.pod and (p := cluster.pod(rc.pod)) else None)
            seen.append(f"the device plugin{f' {rc.pod}' if rc.pod else ''}{f' on {node}' if node else ''} started with a config "
                        "whose sharing block is empty")
            evidence.append(rc.evidence)
            n = cluster.nodes.get(node) if cluster is not None and node else None
            if n is not None and n.capacity.get(resource) is not None and node not in {p[0] for p in physical}:
                seen.append(f"{node} advertises {resource}: {n.capacity[resource]}")
                evidence.append(n.evidence.get(f"capacity:{resource}"))
            if node:
                plugin_nodes.add(node)
        for node, count, ev_cap, ev_count in physical[:2]:
            seen.append(f"node {node} advertises {resource}: {count}, one per physical GPU")
        evidence += [*wiring_ev, *(e for _, _, c, n in physical[:2] for e in (c, n))]
        nodes = sorted({n for n, _, _, _ in physical} | plugin_nodes)
        yield Hit(
            title=f"Sharing config {where} ({resource} x{replicas}) is not in effect: the device plugin runs without it",
            explanation=(f"{where} asks for {replicas} replicas of {resource}, but " + " and ".join(seen) + f". Why: {why}."),
            severity=Severity.ERROR,
            role=Role.ROOT_CAUSE,
            evidence=tuple(dict.fromkeys(e for e in evidence if e)),
            fixes=tuple(fixes),
            node=nodes[0] if len(nodes) == 1 else None,
            component="nvidia-device-plugin",
            confidence=0.85 if unshared else 0.7,
            facts={"config": where, "replicas": wanted, "running_unshared": [rc.pod for rc in unshared], "nodes": nodes},
        )


def _unmultiplied_nodes(cluster: Cluster | None, inventory: GpuInventory | None, wanted: dict[str, int]) -> list[tuple]:
    """(node, advertised, capacity evidence, count evidence) for nodes advertising exactly their physical GPU count."""
    if cluster is None or "nvidia.com/gpu" not in wanted:
        return []
    out = []
    for name, node in sorted(cluster.nodes.items()):
        cap = node.capacity.get("nvidia.com/gpu")
        physical, ev = None, None
        if "nvidia.com/gpu.count" in node.labels:
            physical, ev = node.labels["nvidia.com/gpu.count"], node.evidence.get("label:nvidia.com/gpu.count")
        ng = inventory.for_node(name) if inventory else None
        if physical is None and ng is not None and ng.visible and ng.visible.value:
            physical, ev = ng.visible.value, ng.visible.evidence
        if cap is not None and physical is not None and str(cap).strip() == str(physical).strip():
            out.append((name, cap, node.evidence.get("capacity:nvidia.com/gpu"), ev))
    return out
