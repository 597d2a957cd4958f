#!/usr/bin/env python3
"""Turn a component's real configuration source into a schema gpusleuth stores (knowledge/schemas/*.json).

    python tools/schemas/generate.py all --mirror /work/.mirror      # every schema in SOURCES
    python tools/schemas/generate.py device-plugin-config --repo PATH --refs v0.17.0 v0.20.0

A source is a git repository (a bare clone or a mirror is enough: files are read with `git show REF:PATH`)
and one or more refs. Three readers:

- go:     Go struct definitions (`type X struct {...}`) and their `json:`/`toml:` tags, from a root type;
          `*T`, `[]T`, `map[K]V`, embedded structs with a tag, and a `Deprecated` comment are understood;
          named types that are not structs take the type given in the source's `aliases`.
- crd:    a CustomResourceDefinition's openAPIV3Schema (served version), descriptions dropped.
- values: a Helm chart's values.yaml: the keys and the type of each default; an empty map or list, and
          the keys in `open`, accept any keys (labels, env, resources ...).

With several refs the schemas are merged: a field carries `x-since` (the first ref that has it) and
`x-removed` (the first ref after that which no longer has it), so the validator can tell "not yet" and
"no longer" apart from "never". Output: {"provenance": {...}, "schema": {...}}, a JSON Schema subset
(type, properties, additionalProperties, items, enum, x-since, x-removed, x-deprecated, and x-spec-since: the
version of a versioned document format, such as CDI's cdiVersion, that a field needs).

Only stdlib and PyYAML. What is not generated (enums read from Go constants, Docker, Pod spec) is in the
SOURCES table as `enums`/`aliases` or in hand-curated files whose provenance says "curated".
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

OUT = Path(__file__).resolve().parents[2] / "src" / "gpusleuth" / "knowledge" / "schemas"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "schemas.md"
ANY: dict = {}
_OPEN_VALUES = {"labels", "annotations", "podAnnotations", "podLabels", "nodeSelector", "affinity", "resources",
                "securityContext", "podSecurityContext", "tolerations", "env", "args", "extraEnv",
                "imagePullSecrets", "volumes", "volumeMounts", "nodeAffinity", "priorityClassName", "sharing",
                "node-feature-discovery", "nfd", "kata-manager", "extraVolumes", "extraVolumeMounts"}

# name -> how to build it. Refs are ordered oldest first, the newest patch of each minor release (the
# validator compares versions at major.minor); the last one is the "current" schema.
SOURCES: dict[str, dict] = {
    "device-plugin-config": {
        "repo": "NVIDIA+k8s-device-plugin", "github": "NVIDIA/k8s-device-plugin", "reader": "go", "tag": "json",
        "files": ["api/config/v1/config.go", "api/config/v1/flags.go", "api/config/v1/sharing.go",
                  "api/config/v1/replicas.go", "api/config/v1/resources.go", "api/config/v1/imex.go"],
        "root": "Config",
        "refs": ["v0.14.5", "v0.15.1", "v0.16.2", "v0.17.4", "v0.18.2", "v0.19.3", "v0.20.0"],
        "aliases": {"ResourceName": {"type": "string"}, "ResourcePattern": {"type": "string"},
                    "Duration": {"type": "string"}, "deviceListStrategyFlag": {"type": ["string", "array"]},
                    "ReplicatedDevices": {"type": ["string", "array"]}, "Flags": "CommandLineFlags"},
        # consts.go: MigStrategy*, DeviceListStrategy*, DeviceIDStrategy*, AllocationPolicy*
        "enums": {"flags.migStrategy": ["none", "single", "mixed"],
                  "flags.deviceDiscoveryStrategy": ["auto", "nvml", "tegra"],
                  "flags.plugin.deviceIDStrategy": ["uuid", "index"],
                  "flags.plugin.deviceListStrategy": ["envvar", "volume-mounts", "cdi-annotations", "cdi-cri"],
                  "flags.plugin.sharedDevicesAllocationPolicy": ["distributed", "packed"],
                  "version": ["v1"]},
    },
    "mig-parted-config": {
        "repo": "NVIDIA+mig-parted", "github": "NVIDIA/mig-parted", "reader": "go", "tag": "json",
        "files": ["api/spec/v1/spec.go"], "root": "Spec", "refs": ["v0.15.0"],
        "aliases": {"MigConfigSpecSlice": {"type": "array", "items": "MigConfigSpec"},
                    "types.MigConfig": {"type": "object", "additionalProperties": {"type": "integer"}}},
        "enums": {"version": ["v1"]},
    },
    "cdi-spec": {
        "repo": "cncf-tags+container-device-interface", "github": "cncf-tags/container-device-interface",
        "reader": "go", "tag": "json", "files": ["specs-go/config.go"], "root": "Spec",
        "refs": ["v0.6.2", "v0.7.0", "v0.8.0", "specs-go/v1.0.0", "specs-go/v1.1.0"],
        "aliases": {"os.FileMode": {"type": "integer"}},
    },
    "containerd-cri-v2": {  # config version 2 (and 1, under plugins.cri): one CRI plugin section
        "repo": "containerd+containerd", "github": "containerd/containerd", "reader": "go", "tag": "toml",
        "files": ["pkg/cri/config/config.go", "pkg/cri/config/config_unix.go"], "root": "PluginConfig",
        "refs": ["v1.6.0", "v1.7.0", "v1.7.27"],
        "aliases": {"Duration": {"type": "string"}},
        "open_maps": True,
    },
    "containerd-cri-v3": {  # config version 3: plugins.'io.containerd.cri.v1.runtime'
        "repo": "containerd+containerd", "github": "containerd/containerd", "reader": "go", "tag": "toml",
        "files": ["internal/cri/config/config.go"], "root": "RuntimeConfig",
        "refs": ["v2.0.0", "v2.1.0", "v2.3.4"],
        "aliases": {"Duration": {"type": "string"}},
    },
    "pod-spec": {  # the Pod spec fields a GPU workload sets wrong most: resources, tolerations, nodeSelector, runtimeClassName
        "repo": "kubernetes+api", "github": "kubernetes/api", "reader": "go", "tag": "json",
        "files": ["core/v1/types.go"], "root": "PodSpec",
        "refs": ["v0.30.0", "v0.32.0", "v0.34.0", "v0.36.0"],
        "aliases": {"resource.Quantity": {"x-kubernetes-int-or-string": True},
                    "ResourceList": {"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": True}},
                    "intstr.IntOrString": {"x-kubernetes-int-or-string": True}},
        # core/v1/types.go TolerationOperator and TaintEffect constants ("" is allowed: Equal / every effect)
        "enums": {"tolerations.operator": ["", "Exists", "Equal", "Lt", "Gt"],
                  "tolerations.effect": ["", "NoSchedule", "PreferNoSchedule", "NoExecute"]},
    },
    "docker-daemon-runtimes": {  # daemon.json's runtimes table; the other top-level keys are not described here
        "repo": "moby+moby", "github": "moby/moby", "reader": "go", "tag": "json",
        "files": ["api/types/system/runtime.go"], "root": "Runtime", "refs": ["v28.5.2"],
        "wrap": {"type": "object", "properties": {"runtimes": {"type": "object", "additionalProperties": "$root"},
                                                  "default-runtime": {"type": "string"}}},
    },
    "crio-runtime": {  # crio.conf's [crio.runtime] table and its [crio.runtime.runtimes.<name>] handlers
        "repo": "cri-o+cri-o", "github": "cri-o/cri-o", "reader": "go", "tag": "toml",
        "files": ["pkg/config/config.go"], "root": "RuntimeConfig",
        "refs": ["v1.28.11", "v1.29.13", "v1.30.14", "v1.31.13", "v1.32.13", "v1.33.13", "v1.34.11", "v1.35.6", "v1.36.3"],
        "aliases": {"Runtimes": {"type": "object", "additionalProperties": "RuntimeHandler"},
                    "capabilities.Capabilities": {"type": "array"}, "ExecCPUAffinityType": {"type": "string"}},
        # pkg/config/config.go RuntimeTypeVM/RuntimeTypePod, config_linux.go DefaultRuntimeType ("" means oci);
        # RuntimeHandler.Validate refuses any other value
        "enums": {"crio.runtime.runtimes.*.runtime_type": ["", "oci", "vm", "pod"]},
        # the other tables of crio.conf ([crio], [crio.image], [crio.network] ...) are not described: open
        "wrap": {"type": "object", "properties": {"crio": {"type": "object", "properties": {"runtime": "$root"}}}},
    },
    "nfd-worker-config": {  # nfd-worker.conf: core settings and each configurable feature source's settings
        "repo": "kubernetes-sigs+node-feature-discovery", "github": "kubernetes-sigs/node-feature-discovery",
        "reader": "go", "tag": "json", "untagged": True,
        "files": ["pkg/nfd-worker/nfd-worker.go"], "root": "NFDConfig",
        "refs": ["v0.14.6", "v0.15.7", "v0.16.9", "v0.17.4", "v0.18.3", "v0.19.0"],
        # sourcesConfig is map[string]source.Config filled per source; keys of sources no source has are dropped
        "aliases": {"sourcesConfig": {"type": "object", "properties": {}, "additionalProperties": False},
                    "klogutils.KlogConfigOpts": {"type": "object"}, "utils.RegexpVal": {"type": "string"},
                    "utils.DurationVal": {"type": "string"}},
        "parts": {
            "sources.cpu": {"files": ["source/cpu/cpu.go"], "root": "Config"},
            "sources.kernel": {"files": ["source/kernel/kernel.go"], "root": "Config"},
            "sources.local": {"files": ["source/local/local.go"], "root": "Config"},
            "sources.pci": {"files": ["source/pci/pci.go"], "root": "Config"},
            "sources.usb": {"files": ["source/usb/usb.go"], "root": "Config"},
            "sources.fake": {"files": ["source/fake/fake.go"], "root": "Config"},
            "sources.custom": {"files": ["source/custom/custom.go", "source/custom/api/types.go"], "root": "config",
                               "aliases": {"config": {"type": "array", "items": "Rule"}, "api.Rule": "Rule",
                                           # custom UnmarshalJSON (api/expression.go) takes several shapes: not judged
                                           "MatchExpressionSet": {"type": "object"}, "MatchExpression": {},
                                           "FeatureMatcher": {"type": "array", "items": "FeatureMatcherTerm"}}},
        },
    },
    "clusterpolicy-crd": {
        "repo": "NVIDIA+gpu-operator", "github": "NVIDIA/gpu-operator", "reader": "crd",
        "files": ["deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml"],
        "refs": ["v24.9.2", "v25.3.4", "v25.10.1", "v26.3.3", "v26.7.0"],
    },
    "nicclusterpolicy-crd": {  # the Network Operator's NicClusterPolicy (ofedDriver, rdmaSharedDevicePlugin, ...)
        "repo": "Mellanox+network-operator", "github": "Mellanox/network-operator", "reader": "crd",
        "files": ["deployment/network-operator/crds/mellanox.com_nicclusterpolicies.yaml"],
        "refs": ["v24.7.1", "v24.10.1", "v25.1.0", "v25.4.0", "v25.7.0", "v25.10.0", "v26.1.2", "v26.4.1"],
    },
    "gpu-operator-values": {
        "repo": "NVIDIA+gpu-operator", "github": "NVIDIA/gpu-operator", "reader": "values",
        "files": ["deployments/gpu-operator/values.yaml"],
        "refs": ["v24.9.2", "v25.3.4", "v25.10.1", "v26.3.3", "v26.7.0"],
        # subcharts vendored under charts/: their values are read under the dependency's name
        "subcharts": {"node-feature-discovery": "deployments/gpu-operator/charts/node-feature-discovery"},
    },
    "device-plugin-values": {
        "repo": "NVIDIA+k8s-device-plugin", "github": "NVIDIA/k8s-device-plugin", "reader": "values",
        "files": ["deployments/helm/nvidia-device-plugin/values.yaml"],
        "refs": ["v0.14.5", "v0.15.1", "v0.16.2", "v0.17.4", "v0.18.2", "v0.19.3", "v0.20.0"],
    },
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def show(repo: Path, ref: str, path: str) -> str | None:
    try:
        return git(repo, "show", f"{ref}:{path}")
    except subprocess.CalledProcessError:
        return None


# ------------------------------------------------------------------------------------------------ Go structs

_TYPE = re.compile(r"^type\s+(\w+)\s+struct\s*\{\s*$")
_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?([\w.*\[\]{}]+)\s+`([^`]*)`")


_UNTAGGED = re.compile(r"^\s*([A-Z]\w*)\s+([\w.*\[\]{}]+)\s*(?://.*)?$")


def go_structs(text: str, tag: str, untagged: bool = False) -> dict[str, list[dict]]:
    """struct name -> [{name, type, deprecated}] for every tagged field; ``untagged``: an exported field with
    no tag is read too, under its name with the first letter lowered (encoding/json matches names without
    regard to case; the lowered form is the one the component's docs write)."""
    out: dict[str, list[dict]] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _TYPE.match(lines[i])
        if not m:
            i += 1
            continue
        fields, depth, comment = [], 1, []
        i += 1
        while i < len(lines) and depth:
            ln = lines[i]
            depth += ln.count("{") - ln.count("}")
            s = ln.strip()
            if s.startswith("//"):
                comment.append(s[2:].strip())
            elif depth == 1 and (f := _FIELD.match(ln)):
                tm = re.search(tag + r':"([^"]*)"', f.group(3))
                name = tm.group(1).split(",")[0] if tm else None
                if tm and not name and f.group(1) is None and "inline" in tm.group(1):
                    fields.append({"name": "", "type": f.group(2), "deprecated": None, "inline": True})
                elif name and name != "-":
                    dep = next((c for c in comment if c.lower().startswith("deprecated")), None)
                    added = re.search(r"Added in (v\d+(?:\.\d+)*)", ln + " " + " ".join(comment))
                    fields.append({"name": name, "type": f.group(2), "deprecated": dep, "added": added.group(1) if added else None})
                comment = []
            elif depth == 1 and untagged and (u := _UNTAGGED.match(ln)):
                name = u.group(1)[0].lower() + u.group(1)[1:]
                dep = next((c for c in comment if c.lower().startswith("deprecated")), None)
                fields.append({"name": name, "type": u.group(2), "deprecated": dep, "added": None})
                comment = []
            elif not s:
                comment = []
            i += 1
        out[m.group(1)] = fields
    return out


def go_type(t: str, structs: dict, aliases: dict, seen: tuple = ()) -> dict:
    t = t.lstrip("*")
    if t.startswith("[]"):
        return {"type": "array", "items": go_type(t[2:], structs, aliases, seen)}
    if t.startswith("map["):
        return {"type": "object", "additionalProperties": go_type(t[t.index("]") + 1:], structs, aliases, seen)}
    if t in ("string",):
        return {"type": "string"}
    if t == "bool":
        return {"type": "boolean"}
    if re.fullmatch(r"u?int\d*|float\d*", t):
        return {"type": "integer" if "int" in t else "number"}
    if t in ("interface{}", "any"):
        return dict(ANY)
    if t in aliases:
        a = aliases[t]
        if isinstance(a, str):
            return go_type(a, structs, aliases, seen)
        a = dict(a)
        for key in ("items", "additionalProperties"):  # a named element type: `map[string]*RuntimeHandler`
            if isinstance(a.get(key), str):
                a[key] = go_type(a[key], structs, aliases, seen)
        return a
    if t in structs and t not in seen:
        props: dict = {}
        for f in structs[t]:
            if f.get("inline"):  # `json:",inline"`: the embedded struct's fields are this one's
                props.update(go_type(f["type"], structs, aliases, seen + (t,)).get("properties", {}))
            else:
                props[f["name"]] = _field(f, structs, aliases, seen + (t,))
        return {"type": "object", "properties": props, "additionalProperties": False}
    return dict(ANY)


def _field(f: dict, structs, aliases, seen) -> dict:
    s = go_type(f["type"], structs, aliases, seen)
    if f["deprecated"]:
        s["x-deprecated"] = f["deprecated"]
    if f.get("added"):  # the CDI spec's own version in which the field appeared ("// Added in v0.7.0")
        s["x-spec-since"] = f["added"]
    return s


def read_go(repo: Path, ref: str, src: dict) -> dict | None:
    structs: dict = {}
    for path in src["files"]:
        text = show(repo, ref, path)
        if text is not None:
            structs.update(go_structs(text, src["tag"], src.get("untagged", False)))
    if src["root"] not in structs and not (structs and src["root"] in src.get("aliases", {})):
        return None
    schema = go_type(src["root"], structs, src.get("aliases", {}))
    # parts: a map whose entries are other packages' structs of the same name (NFD's sources.<name> -> each
    # source's Config), each read on its own and set at its dotted path; a part the ref lacks is left out
    for where, part in (src.get("parts") or {}).items():
        sub = read_go(repo, ref, {"tag": src["tag"], "untagged": src.get("untagged", False), **part})
        if sub is None:
            continue
        node = schema
        for key in where.split(".")[:-1]:
            node = node.setdefault("properties", {}).setdefault(key, {"type": "object", "properties": {}, "additionalProperties": False})
        node.setdefault("properties", {})[where.split(".")[-1]] = sub
    return schema


# ------------------------------------------------------------------------------------------------ CRD, values

def strip(schema, names: bool = False):
    """An OpenAPI schema without descriptions, defaults and examples (they make the file ten times larger);
    ``names``: schema is a `properties` map, whose keys are field names (a field may be called "default")."""
    if isinstance(schema, dict):
        return {k: strip(v, k == "properties" and not names) for k, v in schema.items()
                if names or k not in ("description", "default", "example")}
    if isinstance(schema, list):
        return [strip(v) for v in schema]
    return schema


def read_crd(repo: Path, ref: str, src: dict) -> dict | None:
    text = show(repo, ref, src["files"][0])
    if text is None:
        return None
    crd = yaml.safe_load(text)
    versions = crd["spec"]["versions"]
    served = next((v for v in versions if v.get("storage")), versions[0])
    schema = strip(served["schema"]["openAPIV3Schema"])
    return _close(schema)


def _close(s):
    """A structural CRD schema prunes unknown fields: an object with properties and no
    additionalProperties / x-kubernetes-preserve-unknown-fields accepts nothing else."""
    if isinstance(s, dict):
        if s.get("type") == "object" and "properties" in s and "additionalProperties" not in s \
                and not s.get("x-kubernetes-preserve-unknown-fields"):
            s["additionalProperties"] = False
        for v in list(s.values()):
            _close(v)
    elif isinstance(s, list):
        for v in s:
            _close(v)
    return s


def values_schema(value, key: str | None = None) -> dict:
    if key in _OPEN_VALUES:
        return dict(ANY)
    if isinstance(value, dict):
        if not value:
            return {"type": "object"}
        return {"type": "object", "properties": {k: values_schema(v, k) for k, v in value.items()},
                "additionalProperties": False}
    if isinstance(value, list):
        return {"type": "array"}
    return dict(ANY)  # a scalar default does not fix the type a template accepts


_VALUES_REF = re.compile(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def read_values(repo: Path, ref: str, src: dict) -> dict | None:
    """values.yaml's keys, plus every `.Values.a.b` the chart's templates read (keys a template reads but
    values.yaml leaves out or comments out are still the chart's); a vendored subchart's the same way, under
    its dependency name, with the keys the parent's values.yaml sets for it and Helm's `global`."""
    schema = _chart_values(repo, ref, src["files"][0])
    if schema is None:
        return None
    for key, chart in (src.get("subcharts") or {}).items():
        sub = _chart_values(repo, ref, f"{chart}/values.yaml")
        if sub is None:
            continue
        parent = yaml.safe_load(show(repo, ref, src["files"][0]) or "") or {}
        given = parent.get(key) if isinstance(parent.get(key), dict) else {}
        _union(sub, values_schema({k: v for k, v in given.items()}))
        sub.setdefault("properties", {}).setdefault("global", dict(ANY))
        schema["properties"][key] = sub
    return schema


def _union(into: dict, extra: dict) -> None:
    """Add to a values schema the keys another has (the parent chart's settings for a subchart)."""
    if not (isinstance(into.get("properties"), dict) and isinstance(extra.get("properties"), dict)):
        return
    for k, v in extra["properties"].items():
        if k not in into["properties"]:
            into["properties"][k] = v
        else:
            _union(into["properties"][k], v)


def _chart_values(repo: Path, ref: str, values_path: str) -> dict | None:
    text = show(repo, ref, values_path)
    if text is None:
        return None
    schema = values_schema(yaml.safe_load(text) or {})
    chart = values_path.rsplit("/", 1)[0]
    try:
        names = git(repo, "ls-tree", "-r", "--name-only", ref, f"{chart}/templates").split()
    except subprocess.CalledProcessError:
        names = []
    for name in names:
        for m in _VALUES_REF.finditer(show(repo, ref, name) or ""):
            node = schema
            for part in m.group(1).strip(".").split("."):
                if node.get("type") not in (None, "object") or "properties" not in node:
                    break  # an open map or a scalar: anything below is accepted
                node = node["properties"].setdefault(part, {})
    return schema


def read_jsonschema(repo: Path, ref: str, src: dict) -> dict | None:
    text = show(repo, ref, src["files"][0])
    return None if text is None else strip(json.loads(text))


READERS = {"go": read_go, "crd": read_crd, "values": read_values, "jsonschema": read_jsonschema}


# ------------------------------------------------------------------------------------------------ merging versions

def merge(old: dict, new: dict, ref: str, prev: str) -> dict:
    """`new` (schema at ref) with the properties `old` had and `new` lacks kept as x-removed: ref."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    out = dict(new)
    op, np = old.get("properties"), new.get("properties")
    if isinstance(op, dict) and isinstance(np, dict):
        props = {}
        for k, v in np.items():
            if k in op:
                merged = merge(op[k], v, ref, prev)
                for x in ("x-since",):
                    if x in op[k]:
                        merged[x] = op[k][x]
                props[k] = merged
            else:
                props[k] = dict(v, **{"x-since": ref})
        for k, v in op.items():
            if k not in np:
                props[k] = v if "x-removed" in v else dict(v, **{"x-removed": ref})
        out["properties"] = props
    for key in ("items", "additionalProperties"):
        if isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
            out[key] = merge(old[key], new[key], ref, prev)
    return out


def set_enum(schema: dict, path: str, values: list) -> None:
    """Set the allowed values at a dotted path (a list's items are stepped into)."""
    node = schema
    for part in path.split("."):
        while "items" in node and part not in node.get("properties", {}):
            node = node["items"]
        if part == "*":  # any key of a map: its value schema
            node = node.get("additionalProperties") if isinstance(node.get("additionalProperties"), dict) else None
            if node is None:
                return
            continue
        node = node.get("properties", {}).get(part)
        if node is None:
            return
    node["enum"] = values


def build(name: str, mirror: Path, refs: list[str] | None = None) -> dict:
    src = SOURCES[name]
    repo = mirror / src["repo"] / "repo"
    refs = refs or src["refs"]
    merged, used, prev = None, [], None
    for ref in refs:
        schema = READERS[src["reader"]](repo, ref, src)
        if schema is None:
            print(f"{name}: {ref} has none of {src['files']}; skipped", file=sys.stderr)
            continue
        if src.get("wrap"):
            schema = json.loads(json.dumps(src["wrap"]).replace('"$root"', json.dumps(schema)))
        for path, values in src.get("enums", {}).items():
            set_enum(schema, path, values)
        merged = schema if merged is None else merge(merged, schema, ref, prev)
        used.append(ref)
        prev = ref
    if merged is None:
        raise SystemExit(f"{name}: no ref had the source")
    commit = git(repo, "rev-parse", f"{used[-1]}^{{commit}}").strip()
    provenance = {
        "source": f"https://github.com/{src['github']}",
        "files": src["files"] + [f"{chart}/values.yaml" for chart in (src.get("subcharts") or {}).values()],
        "refs": used,
        "version": used[-1],
        "commit": commit,
        "generated_by": f"tools/schemas/generate.py {name}",
        "reader": src["reader"],
    }
    return {"provenance": provenance, "schema": merged}


READERS_DOC = {"go": "Go config structs (json/toml tags)", "crd": "CRD openAPIV3Schema", "values": "values.yaml + templates' .Values",
               "jsonschema": "values.schema.json"}
WHAT = {
    "device-plugin-config": "device plugin / GFD config file (flags, resources, sharing.timeSlicing, sharing.mps, imex)",
    "mig-parted-config": "mig-parted config (version, mig-configs entries)",
    "cdi-spec": "CDI spec (cdiVersion, kind, devices, containerEdits)",
    "containerd-cri-v2": "containerd CRI plugin section, config version 1 (`plugins.cri`) and 2 (`plugins.\"io.containerd.grpc.v1.cri\"`)",
    "containerd-cri-v3": "containerd CRI runtime plugin section, config version 3 (`plugins.'io.containerd.cri.v1.runtime'`)",
    "pod-spec": "Pod spec (resources, runtimeClassName, tolerations, nodeSelector, containers)",
    "clusterpolicy-crd": "GPU Operator ClusterPolicy CRD",
    "gpu-operator-values": "GPU Operator Helm chart values",
    "nicclusterpolicy-crd": "Network Operator NicClusterPolicy CRD",
    "nfd-worker-config": "NFD worker config (nfd-worker.conf: core, sources.pci / usb / cpu / kernel / local / custom)",
    "device-plugin-values": "nvidia-device-plugin Helm chart values",
    "crio-runtime": "CRI-O crio.conf `[crio.runtime]` (hooks_dir, default_runtime ...) and `[crio.runtime.runtimes.<name>]` (runtime_path, runtime_type, runtime_root ...); other tables not described",
    "docker-daemon-runtimes": "Docker daemon.json `runtimes` entries and `default-runtime` (other keys not described)",
}


# Real configs from public threads that the checks' tests hold (tests/checks/test_<CODE>.py, each with its link):
# (thread, check, what was written, where it is read or what was meant)
REAL_CASES = (
    ("NVIDIA/k8s-device-plugin#1433", "DP160", "`flags.renameByDefault`", "`sharing.timeSlicing.renameByDefault`"),
    ("NVIDIA/k8s-device-plugin#1433", "DP160", "`flags.failRequestsGreaterThanOne`", "`sharing.timeSlicing.failRequestsGreaterThanOne`"),
    ("NVIDIA/k8s-device-plugin#353", "DP150", "`sharing.timeSlicing.resources[].rename` (dropped on load)", "`sharing.timeSlicing.renameByDefault`"),
    ("canonical/microk8s#4408", "SC160", "`runtimeClassName` inside a container", "`spec.runtimeClassName`"),
    ("kubernetes/kubernetes#96506", "SC160", "`alpha.kubernetes.io/nvidia-gpu` (removed in Kubernetes 1.11)", "`resources.limits.nvidia.com/gpu`"),
    ("NVIDIA/gpu-operator#861", "OP105", "`toolkit-version`", "`toolkit.version`"),
    ("NVIDIA/cloud-native-docs#165", "OP105", "`useOpenKernelModules` at the top level", "`driver.kernelModuleType`"),
    ("NVIDIA/gpu-operator#164", "OP105", "`operator.validator.version` (a 1.x chart's place)", "`validator.version`"),
    ("NVIDIA/gpu-operator#1982", "OP105", "`node-feature-discovery.prometheus.enabled`", "`node-feature-discovery.prometheus.enable` (the NFD subchart's key)"),
    ("containerd/containerd v1.7.27 docs/cri/config.md", "RT160", "keys after the `x509_key_pair_streaming` table header", "the CRI plugin's top level"),
    ("NVIDIA/gpu-operator#1374", "RT004", "`binaryName` beside `BinaryName` (Kubespray's spelling, kubernetes-sigs/kubespray#12167)", "`BinaryName`"),
    ("NVIDIA/nvidia-container-toolkit#56", "RT162", "`args` in a daemon.json runtime", "`runtimeArgs`"),
    ("Mellanox/network-operator#2", "OP162", "`spec.devicePlugin` (the first NicClusterPolicy's key)", "`spec.rdmaSharedDevicePlugin` (named with `spec.sriovDevicePlugin` as the keys it may mean)"),
)
# real configs the tests hold as silent (valid) or as a wrong value rather than a wrong key
REAL_OTHER = ("valid and silent: NVIDIA/k8s-device-plugin#615 (DP160), #990 (DP161), NVIDIA/gpu-operator#346 (SC160), "
              "#1795 (OP105), NVIDIA/nvidia-docker#1788 (RT160), NVIDIA/nvidia-container-runtime#85 (RT161); "
              "NVIDIA/k8s-device-plugin#729, NVIDIA/gpu-operator#1469, Mellanox/network-operator#111 (FD160), NVIDIA/gpu-operator#172 (RT164), Mellanox/network-operator v26.4.1 example CRs (OP162); "
              "a wrong value: NVIDIA/mig-parted#44 (`devices: 7` for `devices: [7]`, OP150)")


def write_table(out: Path, doc: Path) -> None:
    """docs/schemas.md: which source version each stored schema came from."""
    rows = []
    for path in sorted(out.glob("*.json")):
        p = json.loads(path.read_text())["provenance"]
        rows.append(f"| `{path.stem}` | {WHAT.get(path.stem, '')} | {p['source']} | {', '.join(p.get('files') or ())} | "
                    f"{p['version']} | `{(p.get('commit') or '')[:12]}` | {', '.join(p['refs'])} | {READERS_DOC.get(p.get('reader'), p.get('reader'))} |")
    doc.write_text(
        "# Configuration schemas and where they came from\n\n"
        "gpusleuth checks the configs it reads against the schemas of the components that read them "
        "(`src/gpusleuth/knowledge/schemas/`, checks DP160, DP161, FD160, OP105, OP150, OP160, OP162, RT160, SC160, RT161, RT162, RT164; the same fact stated in two configs: DP162, OP161, RT163). Each schema is "
        "generated from the component's own source by `python tools/schemas/generate.py NAME` (`all` for every one, "
        "`table` for this page) and merged over the refs listed, so a field carries the first version that has it "
        "(`x-since`) and the first that no longer has it (`x-removed`); versions are compared at major.minor. "
        "A version newer than the newest ref is not judged for the operator's schemas.\n\n"
        "| schema | what | source | files | version | commit | refs merged | read from |\n"
        "|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
        "Not generated: the allowed values of a few string fields are Go constants, listed as `enums` in the "
        "generator's SOURCES table beside the file they come from (device plugin consts.go, k8s core/v1 "
        "TolerationOperator/TaintEffect, CRI-O's runtime_type constants). NFD's worker config fields without a json tag "
        "are read under their Go name with the first letter lowered (nfd-worker matches names without regard to case), "
        "and each feature source's Config is read from its own package (`parts`). Not covered yet: daemon.json beyond "
        "its runtimes; CRI-O tables other than `[crio.runtime]` (RT164 checks the runtime handlers; the other keys of `[crio.runtime]` need gpusleuth's CRI-O "
        "reader to keep them, and hooks_dir's type is lost in reading).\n\n"
        f"## Real configs from public threads\n\nThe checks' tests hold {len(REAL_CASES)} real misplaced, misnamed or "
        "other-version keys from public threads, each reported with where the setting is read or the key meant "
        "(the thread's link is in the test):\n\n"
        "| thread | check | written | read as |\n|---|---|---|---|\n"
        + "\n".join(f"| {t} | {c} | {w} | {r} |" for t, c, w, r in REAL_CASES) + f"\n\nAlso real: {REAL_OTHER}.\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("name", choices=[*SOURCES, "all", "table"])
    ap.add_argument("--mirror", type=Path, default=Path("/work/.mirror"), help="folder of <owner>+<name>/repo clones")
    ap.add_argument("--refs", nargs="*", help="tags or commits, oldest first (default: the table's)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if args.name == "table":
        write_table(args.out, DOCS)
        print(DOCS)
        return 0
    for name in SOURCES if args.name == "all" else [args.name]:
        data = build(name, args.mirror, args.refs)
        path = args.out / f"{name}.json"
        path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
        print(f"{path}: {data['provenance']['version']} ({data['provenance']['commit'][:12]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
