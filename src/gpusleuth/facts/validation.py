"""Configuration checked against the real schema of the component that reads it (knowledge/schemas/).

`validate(body, schema, lines)` walks a parsed config beside its schema and returns a Problem for every key
the component does not know (with the closest key it does know and, when the key exists elsewhere in the
schema, the path where it belongs), every value of the wrong type or outside the allowed set, every field
the version in use no longer has or does not have yet, and every deprecated field. It is what
`kubectl --validate=strict` does for the API server, for files no server validates: the readers of these
configs (sigs.k8s.io/yaml, go-toml, Helm) drop what they do not know without a word.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import cache

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.knowledge.config_schemas import ConfigSchema, vkey
from gpusleuth.model.k8s import K8sObject, Pod

# kinds, most serious first
KINDS = ("wrong-type", "bad-value", "misplaced-key", "wrong-case", "unknown-key", "removed", "not-yet", "deprecated")
IGNORED = frozenset({"misplaced-key", "wrong-case", "unknown-key", "removed", "not-yet"})  # silently dropped


@dataclass(frozen=True)
class Problem:
    kind: str
    path: tuple  # where the key or value is, list items as ints
    message: str
    closest: str | None = None  # the nearest key at the same place
    belongs: tuple | None = None  # the schema path where this key is read ("*" for any map key / list item)
    value: object = field(default=None, compare=False, hash=False)

    @property
    def key(self) -> str:
        return str(self.path[-1]) if self.path else ""

    @property
    def dotted(self) -> str:
        return dotted(self.path)

    @property
    def ignored(self) -> bool:
        return self.kind in IGNORED


def dotted(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else "[]" if p == "[]" else (f".{p}" if out else str(p))
    return out


def _types(s: dict) -> tuple[str, ...]:
    t = s.get("type")
    return tuple(t) if isinstance(t, list) else ((t,) if t else ())


def _type_ok(value, s: dict) -> bool:
    if s.get("x-kubernetes-int-or-string") or "anyOf" in s or "oneOf" in s:
        return True
    types = _types(s)
    if not types or value is None:
        return True
    for t in types:
        if t == "string" and isinstance(value, str):
            return True
        if t == "boolean" and isinstance(value, bool):
            return True
        if t == "integer" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if t == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if t == "object" and isinstance(value, dict):
            return True
        if t == "array" and isinstance(value, list):
            return True
    return False


_YAML_NAME = {str: "a string", bool: "a boolean", int: "a number", float: "a number", dict: "a mapping", list: "a list"}
_TYPE_NAME = {"string": "a string", "boolean": "true or false", "integer": "a whole number", "number": "a number",
              "object": "a mapping", "array": "a list"}


def _props(s: dict) -> dict:
    p = s.get("properties")
    return p if isinstance(p, dict) else {}


def _child(s: dict, key) -> dict | None:
    """The schema of key inside s; None when s does not accept it."""
    if isinstance(key, int):
        items = s.get("items")
        return items if isinstance(items, dict) else {}
    props = _props(s)
    if key in props:
        return props[key]
    extra = s.get("additionalProperties")
    if isinstance(extra, dict):
        return extra
    return None if extra is False else {}


@cache
def _index(name: str, schema_id: int = 0) -> dict[str, list[tuple]]:
    """key -> every schema path that names it (in declaration order)."""
    from gpusleuth.knowledge.config_schemas import load

    out: dict[str, list[tuple]] = {}

    def walk(s, path, depth):
        if not isinstance(s, dict) or depth > 14:
            return
        for k, v in _props(s).items():
            out.setdefault(k, []).append(path + (k,))
            walk(v, path + (k,), depth + 1)
        for k in s.get("x-known") or ():
            out.setdefault(k, []).append(path + (k,))
        if isinstance(s.get("additionalProperties"), dict):
            walk(s["additionalProperties"], path + ("*",), depth + 1)
        if isinstance(s.get("items"), dict):
            walk(s["items"], path + ("[]",), depth + 1)

    walk(load(name).schema, (), 0)
    return out


def _split_key(key: str, parent: tuple, cs: ConfigSchema) -> tuple | None:
    """`toolkit-version`, `toolkit_version`, `toolkit.version` -> ("toolkit", "version") when the schema has that
    path below the key's parent (or at the top): one key written where the schema nests two."""
    import re

    parts = tuple(p for p in re.split(r"[-_.]", key) if p)
    if len(parts) < 2:
        return None
    for base in (parent, ()):
        node = cs.schema
        for part in base:
            node = (_props(node).get(part) or (node.get("items") if part == "[]" else None)
                    or (node.get("additionalProperties") if isinstance(node.get("additionalProperties"), dict) else None) or {})
        ok = True
        for part in parts:
            if part not in _props(node):
                ok = False
                break
            node = _props(node)[part]
        if ok:
            return tuple(base) + parts
    return None


@cache
def _joined(name: str) -> dict[str, tuple]:
    """`migStrategy` -> ("mig", "strategy"): a setting written as one camel-cased key instead of two levels."""
    out: dict[str, tuple] = {}
    for key, paths in _index(name, 0).items():
        for p in paths:
            if len(p) >= 2 and p[-2] not in ("*", "[]") and key[:1].isalpha():
                out.setdefault(p[-2] + key[0].upper() + key[1:], p)
    return out


def _shape(path: tuple) -> tuple:
    return tuple("[]" if isinstance(p, int) else p for p in path)


def _belongs(cs: ConfigSchema, key: str, parent: tuple, root: tuple) -> tuple | None:
    """The schema path holding key nearest to where it was written (longest shared prefix), outside parent."""
    where = [p for p in _index(cs.name).get(key, ()) if p[: len(root)] == root and p[:-1] != parent]
    if not where:
        return None
    shape = _shape(parent)

    def shared(p):
        n = 0
        for a, b in zip(p, shape):
            if a != b and a not in ("*", "[]"):
                break
            n += 1
        return n

    return max(where, key=lambda p: (shared(p), -len(p), -where.index(p)))


def validate(body, cs: ConfigSchema, *, version: str | None = None, root: tuple = (), at: tuple = (),
             skip=lambda path: False, spec_version: str | None = None) -> list[Problem]:
    """Every Problem of body against the schema node at `root` (a path into cs.schema's properties).
    ``at``: the path body sits at in the document (prefixed to every Problem's path). ``version``: the
    component version in use, for x-since / x-removed; None judges against the newest schema."""
    node = cs.schema
    for part in root:
        node = _child(node, part) or {}
    out: list[Problem] = []
    in_use = vkey(version)
    _walk(body, node, at, root, cs, in_use, version, out, skip, (at, root))
    if spec_version and vkey(spec_version):
        out += _spec_versioned(body, node, at, spec_version)
    order = {k: i for i, k in enumerate(KINDS)}
    return sorted(out, key=lambda p: order.get(p.kind, 99))


def _walk(value, s: dict, path: tuple, spath: tuple, cs, in_use, version, out: list, skip, at: tuple = ((), ())) -> None:
    if skip(path):
        return
    if not _type_ok(value, s):
        want = " or ".join(_TYPE_NAME.get(t, t) for t in _types(s))
        shown = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
        out.append(Problem("wrong-type", path, f"{dotted(path) or 'the document'} must be {want}, not {_YAML_NAME.get(type(value), type(value).__name__)} ({shown[:60]})",
                           value=value))
        return
    enum = s.get("enum")
    if enum and value is not None:
        vals = value if isinstance(value, list) and "array" in _types(s) else [value]
        for v in vals:
            if not isinstance(v, (dict, list)) and v not in enum and str(v) not in [str(e) for e in enum]:
                close = difflib.get_close_matches(str(v), [str(e) for e in enum], n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                out.append(Problem("bad-value", path, f"{dotted(path)} is {v!r}; the allowed values are {_allowed(enum)}{hint}",
                                   closest=close[0] if close else None, value=v))
    if isinstance(value, dict):
        props = _props(s)
        for key, sub in value.items():
            p = path + (key,)
            child = _child(s, key)
            if child is None:
                out.append(_unknown(key, p, spath, s, cs, sub, at))
                continue
            if key in props:
                _versioned(child, p, cs, in_use, version, out)
            _walk(sub, child, p, spath + ((key if key in props else "*"),), cs, in_use, version, out, skip, at)
    elif isinstance(value, list) and isinstance(s.get("items"), dict):
        for i, item in enumerate(value):
            _walk(item, s["items"], path + (i,), spath + ("[]",), cs, in_use, version, out, skip, at)


def _spec_versioned(value, s: dict, path: tuple, declared: str) -> list[Problem]:
    """Fields a versioned document uses that need a newer version than it declares (CDI: cdiVersion)."""
    out = []
    if isinstance(value, dict):
        for key, sub in value.items():
            child = _props(s).get(key) or (s.get("additionalProperties") if isinstance(s.get("additionalProperties"), dict) else None)
            if not isinstance(child, dict):
                continue
            need = child.get("x-spec-since")
            if need and vkey(need) > vkey(declared):
                out.append(Problem("not-yet", path + (key,), f"{dotted(path + (key,))} needs version {need.lstrip('v')} of the format; "
                                   f"the document declares {declared}", value=sub))
            out += _spec_versioned(sub, child, path + (key,), declared)
    elif isinstance(value, list) and isinstance(s.get("items"), dict):
        for i, item in enumerate(value):
            out += _spec_versioned(item, s["items"], path + (i,), declared)
    return out


def _allowed(enum: list) -> str:
    return ", ".join(str(e) if e != "" else '"" (empty)' for e in enum)


def _versioned(s: dict, path: tuple, cs, in_use, version, out) -> None:
    # at major.minor: the stored refs are the newest patch of each minor release
    since, removed = vkey(s.get("x-since")), vkey(s.get("x-removed"))
    since, removed, in_use = (since or ())[:2] or None, (removed or ())[:2] or None, (in_use or ())[:2] or None
    if in_use and since and in_use < since:
        out.append(Problem("not-yet", path, f"{dotted(path)} exists only since {s['x-since']}; {version} does not read it"))
    elif removed and in_use and in_use >= removed:
        out.append(Problem("removed", path, f"{dotted(path)} was removed in {s['x-removed']}"
                           + (f"; {version} does not read it" if in_use else " (newest schema: " + cs.version + ")")))
    elif s.get("x-deprecated"):
        out.append(Problem("deprecated", path, f"{dotted(path)} is deprecated: {s['x-deprecated']}"))


def _unknown(key, path: tuple, spath: tuple, s: dict, cs: ConfigSchema, value, frame: tuple = ((), ())) -> Problem:
    at, root = frame

    def doc(schema_path: tuple) -> tuple:
        """A schema path as a path in the document: under the validated root it sits below `at`."""
        return at + tuple(schema_path[len(root):]) if tuple(schema_path[: len(root)]) == tuple(root) else tuple(schema_path)

    siblings = list(_props(s)) + list(s.get("x-known") or ())
    where = dotted(path[:-1]) or "the top level"
    case = next((k for k in siblings if k.lower() == str(key).lower()), None)
    if case:
        return Problem("wrong-case", path, f"{dotted(path)} is not read: the key is `{case}` (keys are case-sensitive)",
                       closest=case, value=value)
    belongs = _belongs(cs, str(key), spath, ())
    close = difflib.get_close_matches(str(key), siblings, n=1, cutoff=0.75)
    if not close and len(str(key)) >= 3:  # `args` for `runtimeArgs`: the key is the end (or start) of exactly one sibling
        affix = [k for k in siblings if k.lower().endswith(str(key).lower()) or k.lower().startswith(str(key).lower())]
        close = affix if len(affix) == 1 else []
    if close and difflib.SequenceMatcher(None, str(key).lower(), close[0].lower()).ratio() >= 0.85:
        belongs = None  # `enabled` beside `enable`: a slip of the key, not the same key read somewhere else
    if belongs:
        return Problem("misplaced-key", path, f"`{key}` under {where} is not read there: it belongs under {dotted(doc(belongs)[:-1]) or 'the top level'}",
                       closest=close[0] if close else None, belongs=doc(belongs), value=value)
    split = _split_key(str(key), spath, cs)
    if split:
        return Problem("misplaced-key", path, f"`{key}` under {where} is not read: the setting is {dotted(doc(split))} (one key per level)",
                       closest=split[-1], belongs=doc(split), value=value)
    joined = _joined(cs.name).get(str(key))
    if joined and not close:
        return Problem("misplaced-key", path, f"`{key}` under {where} is not read: the setting is {dotted(doc(joined))}",
                       closest=joined[-1], belongs=doc(joined), value=value)
    lowered = {k.lower(): k for k in _index(cs.name)}
    other = _index(cs.name).get(lowered.get(str(key).lower(), ""), ())
    if other and not close:
        b = other[0]
        return Problem("misplaced-key", path, f"`{key}` under {where} is not read there: `{b[-1]}` belongs under {dotted(doc(b)[:-1]) or 'the top level'}",
                       closest=b[-1], belongs=doc(b), value=value)
    # `devicePlugin` beside rdmaSharedDevicePlugin and sriovDevicePlugin: the end of several keys names none of them
    ends = [k for k in siblings if len(k) > len(str(key)) and k.lower().endswith(str(key).lower())]
    if close and len(ends) >= 2 and close[0] in ends:
        return Problem("unknown-key", path, f"{where} has no `{key}`; did you mean one of {', '.join(f'`{k}`' for k in ends)}?", value=value)
    hint = f"; did you mean `{close[0]}`?" if close else ""
    return Problem("unknown-key", path, f"{where} has no `{key}`{hint}", closest=close[0] if close else None, value=value)


def snippet(problem: Problem, value=None) -> str | None:
    """The corrected YAML for a misplaced, misspelt or wrong-case key: the key written where it is read."""
    import yaml

    value = problem.value if value is None else value
    if problem.belongs:
        parts = [("<name>" if p == "*" else p) for p in problem.belongs[:-1]] + [problem.belongs[-1]]
    elif problem.kind == "bad-value" and problem.closest is not None:
        parts = [("[]" if isinstance(p, int) else p) for p in problem.path]
        value = problem.closest
    elif problem.kind in ("wrong-case", "unknown-key") and problem.closest:
        parts = [("[]" if isinstance(p, int) else p) for p in problem.path[:-1]] + [problem.closest]
    else:
        return None
    tree: object = value
    for p in reversed(parts):
        tree = [tree] if p == "[]" else {p: tree}
    return yaml.safe_dump(tree, sort_keys=False, default_flow_style=False)


def image_version(images, *names: str) -> str | None:
    """The tag of the first image whose repository ends with one of names (`nvcr.io/nvidia/k8s-device-plugin:v0.17.1`
    -> v0.17.1); None when no such image or no version-like tag."""
    for image in images:
        repo, _, tag = str(image).rpartition(":")
        if "/" in tag or not repo:
            continue
        if any(repo.rsplit("/", 1)[-1] == n for n in names) and vkey(tag):
            return tag.split("-")[0] if tag.startswith("v") else tag
    return None


def summary(problems: list[Problem], limit: int = 6) -> str:
    """The problems' messages as one sentence, ending in its stop."""
    text = "; ".join(p.message for p in problems[:limit]) + (f"; and {len(problems) - limit} more" if len(problems) > limit else "")
    return text if text.endswith(("?", ".")) else text + "."


def fix_snippet(problems: list[Problem]) -> str | None:
    """The corrected YAML of the first problem that has one."""
    for p in problems:
        s = snippet(p)
        if s:
            return s
    return None


def check_path(parts: tuple[str, ...], cs: ConfigSchema, *, root: tuple = ()) -> Problem | None:
    """A key path whose values are not at hand (a flattened TOML section): the Problem of its first part
    the schema does not have, or None. A map key may itself hold dots (`registry.mirrors."docker.io"`): at an
    open map, the key is as many parts as make the rest fit the map's value schema."""
    node = cs.schema
    for part in root:
        node = _child(node, part) or {}
    done: tuple = ()
    i = 0
    while i < len(parts):
        props = _props(node)
        part = parts[i]
        if part in props:
            node, done, i = props[part], done + (part,), i + 1
            continue
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            j = i + 1
            while j < len(parts) and _props(extra) and parts[j] not in _props(extra):
                j += 1
            if j == len(parts) and _props(extra):  # nothing after the key fits: the key is one part
                j = i + 1
            node, done, i = extra, done + (".".join(parts[i:j]),), j
            continue
        if extra is False or props:
            return _unknown(part, done + (part,), _shape(root + done), node, cs, None)
        return None
    return None


# ------------------------------------------------------------------------------------------------ pod specs

_TEMPLATES = {"Deployment": ("spec", "template", "spec"), "DaemonSet": ("spec", "template", "spec"),
              "StatefulSet": ("spec", "template", "spec"), "ReplicaSet": ("spec", "template", "spec"),
              "Job": ("spec", "template", "spec"), "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
              "Pod": ("spec",)}


@dataclass(frozen=True)
class PodSpecAt:
    """One pod spec as written: a Pod's, or a workload's pod template's, with where it sits in its object."""

    obj: object  # K8sObject
    at: tuple  # ("spec", "template", "spec")

    @property
    def spec(self) -> dict:
        cur = self.obj.body
        for p in self.at:
            cur = cur.get(p) if isinstance(cur, dict) else None
        return cur if isinstance(cur, dict) else {}

    @property
    def name(self) -> str:
        ns = f"{self.obj.namespace}/" if self.obj.namespace else ""
        return f"{self.obj.kind} {ns}{self.obj.name}"

    def evidence(self, path: tuple, text: str | None = None):
        return self.obj.evidence(".".join(str(p) for p in path), text)


@dataclass
class PodSpecs:
    specs: list[PodSpecAt]


@combiner(PodSpecs)
def build_pod_specs(facts: Facts) -> PodSpecs:
    specs = []
    for obj in [*(p.manifest for p in facts.all(Pod) if p.manifest is not None), *facts.all(K8sObject)]:
        at = _TEMPLATES.get(obj.kind)
        if at:
            ps = PodSpecAt(obj, at)
            if ps.spec:
                specs.append(ps)
    if not specs:
        raise NotApplicable("no Pod or workload manifest with a pod spec in the artifacts")
    return PodSpecs(specs)



@dataclass
class RuntimeClasses:
    """The RuntimeClass objects in the artifacts (name -> handler), for checks that compare the handler name
    with the container runtime's table and the toolkit's setting."""

    objects: list  # K8sObject


@combiner(RuntimeClasses)
def build_runtime_classes(facts: Facts) -> RuntimeClasses:
    found = [o for o in facts.all(K8sObject) if o.kind == "RuntimeClass" and isinstance(o.body.get("handler"), str)]
    if not found:
        raise NotApplicable("no RuntimeClass object in the artifacts")
    return RuntimeClasses(found)


@dataclass
class NfdWorkerConfigs:
    """The NFD worker configs in the artifacts: the operators' Helm values' `node-feature-discovery.worker.config`,
    OpenShift NFD operator's NodeFeatureDiscovery `spec.workerConfig.configData`, and every ConfigMap key `nfd-worker.conf` (what NFD's chart, and the GPU and Network Operators' charts that
    vendor it, render from `worker.config`)."""

    configs: list  # parsers.nfd_config.NfdWorkerConfig


@combiner(NfdWorkerConfigs)
def build_nfd_worker_configs(facts: Facts) -> NfdWorkerConfigs:
    from gpusleuth.model.runtime import HelmRelease
    from gpusleuth.parsers.nfd_config import CONFIGMAP_KEY, from_text, from_values

    found, seen = [], set()
    # the operators' charts vendor NFD: their values set the worker config under node-feature-discovery.worker.config
    key = "node-feature-discovery.worker.config"
    for rel in sorted(facts.all(HelmRelease), key=lambda r: r.computed):
        value = rel.get(key)
        if value in (None, "", {}) or repr(value) in seen:
            continue
        seen.add(repr(value))
        what = "computed Helm values" if rel.computed else "Helm values"
        origin = f"{what}{' of ' + rel.name if rel.name else ''} ({rel.artifact}), {key}"
        cfg = from_values(value, rel.artifact, line=rel.key_lines.get(key), key_lines=rel.key_lines, prefix=key, origin=origin)
        if cfg is not None:
            found.append(cfg)
    for obj in facts.all(K8sObject):
        spec = obj.body.get("spec") if obj.kind == "NodeFeatureDiscovery" else None  # OpenShift's NFD operator
        text = ((spec or {}).get("workerConfig") or {}).get("configData") if isinstance(spec, dict) else None
        if isinstance(text, str):
            origin = f"NodeFeatureDiscovery {obj.namespace + '/' if obj.namespace else ''}{obj.name}, spec.workerConfig.configData"
            cfg = from_text(text, obj.artifact, line=obj.key_lines.get("spec.workerConfig.configData", obj.line), origin=origin)
            if cfg is not None:
                found.append(cfg)
            continue
        data = obj.body.get("data") if obj.kind == "ConfigMap" else None
        if not isinstance(data, dict) or not isinstance(data.get(CONFIGMAP_KEY), str):
            continue
        origin = f"ConfigMap {obj.namespace + '/' if obj.namespace else ''}{obj.name}, key {CONFIGMAP_KEY}"
        cfg = from_text(data[CONFIGMAP_KEY], obj.artifact, line=obj.key_lines.get(f"data.{CONFIGMAP_KEY}", obj.line), origin=origin)
        if cfg is not None:
            found.append(cfg)
    if not found:
        raise NotApplicable("no NFD worker config (nfd-worker.conf ConfigMap, NodeFeatureDiscovery CR, worker.config Helm value) in the artifacts")
    return NfdWorkerConfigs(found)
