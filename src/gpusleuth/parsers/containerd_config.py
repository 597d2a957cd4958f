"""containerd `config.toml` (versions 1, 2, 3), drop-ins, k3s/RKE2 templates and `containerd config dump`.

Which runtimes containerd offers depends on the schema version: version 1 (no version line, k3s
1.24-1.25) keeps them under `[plugins.cri]`, version 2 under `plugins."io.containerd.grpc.v1.cri"`,
version 3 (containerd 2.x) under `plugins.'io.containerd.cri.v1.runtime'`. Runtimes written under a key
the file's version does not read are reported as ignored, not silently taken. Invalid TOML (a
truncated paste, a Go template) is read line by line as far as it goes, and the reason is kept as a
problem with its line number.

Sample (the seed-003 shape, `cat /etc/containerd/config.toml`):

    version = 2
    [plugins."io.containerd.grpc.v1.cri".containerd]
      default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
      runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
      BinaryName = "/usr/bin/nvidia-container-runtime"
"""

from __future__ import annotations

import difflib
import re
from itertools import islice
import tomllib
from functools import cache
from typing import Iterable

from gpusleuth.errors import UnusableData
from gpusleuth.knowledge import table
from gpusleuth.model.document import Document
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.runtime import ConfigProblem, ContainerdConfig, RuntimeHandler
from gpusleuth.parsers import tomlscan
from gpusleuth.parsers.base import LIKELY, NO, SURE, WEAK, parser

_PLUGIN_HEADER = re.compile(r"""^\s*\[+\s*plugins\s*\.\s*(?:"io\.containerd\.|'io\.containerd\.|cri\b|"cri")""")
_VERSION_LINE = re.compile(r"^\s*version\s*=\s*\d+\s*(?:#.*)?$")
_CONTAINERD_KEYS = re.compile(r"^\s*(?:imports\s*=|\[grpc\]|\[plugins\]|\[proxy_plugins|oom_score\s*=|\[debug\]|\[metrics\])")
_DUMP = re.compile(r"^containerd\b.*\bconfig\s+(?P<what>dump|default)\b")
_FLAG_CONFIG = re.compile(r"(?:--config[= ]|-c\s+)(?P<path>\S+)")
_COMMENT_PATH = re.compile(r"^\s*#+\s*(?P<path>/[\w./-]+\.\w+)\s*$")
_NAME_PATH = re.compile(r"(?P<path>/(?:etc|var|run|opt|snap|host)/[\w./-]+\.\w+)$")
_TOML_ERROR_AT = re.compile(r"\(at line (?P<line>\d+), column (?P<col>\d+)\)")
_CRIO_HEADER = re.compile(r"^\s*\[crio[.\]]")
_BASE_TEMPLATE = re.compile(r'\{\{-?\s*template\s+"base"')
_FRAGMENT_CMD = re.compile(r"(?:^|\|)\s*(?:grep|egrep|head|tail|sed|awk)\b")


def normalise_path(path: str | None) -> str | None:
    """Host path as the node sees it: the toolkit/debug pods' `/host` mount prefix and `/var/run` undone."""
    if not path:
        return path
    path = path.strip().strip("'\"")
    if path.startswith("unix://"):
        path = path[len("unix://") :]
    if path.startswith("/host/") and path[5:].startswith(("/etc/", "/var/", "/run/", "/opt/", "/snap/", "/usr/")):
        path = path[5:]
    if path.startswith("/var/run/"):
        path = path[4:]
    return re.sub(r"/{2,}", "/", path)


def host_path_of(doc: Document, suffixes: tuple[str, ...] = (".toml", ".tmpl")) -> tuple[str | None, str]:
    """Where the content came from on the host, and how we know: a `cat` command, a leading `# /path`
    comment, or (weakly) the artifact's own name."""
    if doc.path_hint:
        return normalise_path(doc.path_hint), "cat command"
    for line in doc.head(3):
        m = _COMMENT_PATH.match(line)
        if m and m.group("path").endswith(suffixes):
            return normalise_path(m.group("path")), "leading comment"
    m = _NAME_PATH.search("/" + doc.artifact.lstrip("/"))
    if m and m.group("path").endswith(suffixes):
        return normalise_path(m.group("path")), "file name (weak)"
    return None, "unknown"


def sniff(doc: Document) -> int:
    cmd = doc.command or ""
    if _DUMP.match(cmd):
        return SURE
    head = doc.lines[:400]
    if any(_CRIO_HEADER.match(ln) for ln in head):
        return NO
    if any(_PLUGIN_HEADER.match(ln) for ln in head):
        return SURE
    versioned = any(_VERSION_LINE.match(ln) for ln in head)
    if versioned and any(_CONTAINERD_KEYS.match(ln) for ln in head):
        return LIKELY
    hint = (doc.path_hint or doc.artifact).lower()
    if "containerd" in hint and hint.endswith((".toml", ".tmpl")) and (versioned or any(_CONTAINERD_KEYS.match(ln) for ln in head)):
        return LIKELY
    if "containerd" in hint and hint.endswith((".toml", ".tmpl")):
        return WEAK
    return NO


@cache
def _knowledge() -> tuple[dict[int, str], frozenset[str], dict[str, str]]:
    """(version -> CRI plugin key, runc option keys lower-cased, lower -> canonical spelling)."""
    t = table("runtimes")
    keys = {row["version"]: row["cri_plugin"] for row in t["config_version"]}
    options = t["runc"]["option_keys"]
    return keys, frozenset(k.lower() for k in options), {k.lower(): k for k in options}


def _ev(doc: Document, index: int | None, text: str | None = None) -> Evidence:
    return doc.evidence(index if index is not None and 0 <= index < len(doc.lines) else 0, text)


def _in_file(doc: Document, *indexes: int) -> str:
    """The same lines as the file on the node numbers them, when a prompt line above shifts the paste."""
    if doc.first_line == 1 or not doc.path_hint:
        return ""
    return f"; {' and '.join(str(i + 1) for i in indexes)} of {doc.path_hint}"


def _get(d, *path):
    for part in path:
        if not isinstance(d, dict):
            return None
        d = d.get(part)
    return d


def _flatten(d: dict, prefix: tuple[str, ...] = ()) -> Iterable[tuple[tuple[str, ...], object]]:
    for k, v in d.items():
        if isinstance(v, dict) and v:
            yield from _flatten(v, prefix + (k,))
        else:
            yield prefix + (k,), v


def _handlers(
    doc: Document, sc: tomlscan.Scan, runtimes: dict, base: tuple[str, ...], problems: list[ConfigProblem]
) -> dict[str, RuntimeHandler]:
    _, runc_keys, canonical = _knowledge()
    out: dict[str, RuntimeHandler] = {}
    for name, body in runtimes.items():
        if not isinstance(body, dict):
            continue
        header = sc.line(*base, name)
        opts = body.get("options") if isinstance(body.get("options"), dict) else {}
        spellings = [(k, v) for k, v in opts.items() if k.lower() == "binaryname"]
        # runtime v1 shim (io.containerd.runtime.v1.linux) names its binary `Runtime`
        spellings += [(k, v) for k, v in opts.items() if k == "Runtime" and isinstance(v, str)]
        spellings.sort(key=lambda kv: sc.line(*base, name, "options", kv[0]) or 0)
        binary, key, binary_ev = None, None, None
        if spellings:
            key, binary = spellings[-1]
            binary_ev = _ev(doc, sc.line(*base, name, "options", key))
            values = {str(v) for _, v in spellings}
            if len(spellings) > 1:
                lines = ", ".join(str(doc.lineno(sc.line(*base, name, "options", k) or 0)) for k, _ in spellings)
                detail = "different values: which one containerd uses is undefined" if len(values) > 1 else "same value, harmless"
                problems.append(ConfigProblem(
                    "ambiguous-key",
                    f"runtime {name!r} sets {' and '.join(k for k, _ in spellings)} (lines {lines}); containerd matches option "
                    f"keys case-insensitively, {detail}",
                    binary_ev,
                ))
        runc_like = str(body.get("runtime_type", "io.containerd.runc.v2")).startswith("io.containerd.runc")
        if runc_like:
            for k in opts:
                if k.lower() in runc_keys or k == "Runtime":
                    continue
                close = difflib.get_close_matches(k.lower(), list(runc_keys), n=1, cutoff=0.75)
                if close:
                    problems.append(ConfigProblem(
                        "misspelt-key",
                        f"runtime {name!r} option {k!r} is not a runc option (did you mean {canonical[close[0]]}?): "
                        f"containerd drops it without a word",
                        _ev(doc, sc.line(*base, name, "options", k)),
                    ))
        out[name] = RuntimeHandler(
            name=name,
            runtime_type=body.get("runtime_type") if isinstance(body.get("runtime_type"), str) else None,
            binary=str(binary) if binary is not None else None,
            binary_key=key,
            options=dict(opts),
            evidence=_ev(doc, header),
            binary_evidence=binary_ev,
        )
    return out


def _case_collisions(doc: Document, sc: tomlscan.Scan, problems: list[ConfigProblem]) -> None:
    """Keys of one table that differ only by case (`SystemdCgroup` / `systemdCgroup`): TOML allows
    both, containerd's decoder folds them into one field."""
    seen: dict[tuple, tuple[str, int]] = {}
    for path, idx in sorted(sc.lines.items(), key=lambda kv: kv[1]):
        folded = path[:-1] + (path[-1].lower(),)
        if folded in seen and seen[folded][0] != path[-1]:
            first, first_idx = seen[folded]
            if first.lower() == "binaryname":
                continue  # reported with the runtime, which knows which one wins
            problems.append(ConfigProblem(
                "ambiguous-key",
                f"{tomlscan.dotted(path[:-1])}: {first} (line {doc.lineno(first_idx)}) and {path[-1]} (line {doc.lineno(idx)}) "
                f"differ only by case; containerd reads them as one key",
                _ev(doc, idx),
                (_ev(doc, first_idx),),
            ))
        else:
            seen.setdefault(folded, (path[-1], idx))


def parse_config(doc: Document) -> ContainerdConfig:
    lines = list(doc.lines)
    problems: list[ConfigProblem] = []
    template = any("{{" in ln for ln in lines)
    if template:
        base = any(_BASE_TEMPLATE.search(ln) for ln in lines)
        lines, blanked, stubbed = tomlscan.untemplate(lines)
        problems.append(ConfigProblem(
            "template",
            f"Go template (k3s/RKE2 config.toml.tmpl), not TOML: {len(blanked)} template line(s) skipped and "
            f"{len(stubbed)} templated value(s) not known; the rendered config.toml is what containerd reads"
            + ("; it starts from k3s's base template, so the rendered file also holds k3s's defaults" if base else ""),
            _ev(doc, min(blanked + stubbed)),
        ))
    try:
        data = tomllib.loads("\n".join(lines))
        syntax = None
        sc = tomlscan.scan(lines, read_values=False)
    except tomllib.TOMLDecodeError as exc:
        sc = tomlscan.scan(lines)
        data = sc.data
        m = _TOML_ERROR_AT.search(str(exc))
        syntax = (int(m.group("line")) - 1 if m else None, _TOML_ERROR_AT.sub("", str(exc)).strip())
    dup_lines = set()
    dup_tables = {path for path, first, _ in sc.duplicates if sc.tables.get(path) == first}
    for path, first, again in sc.duplicates:
        dup_lines.update((first, again))
        if path[:-1] in dup_tables and path not in dup_tables:
            continue  # the keys of a table defined twice: the table is the problem
        problems.append(ConfigProblem(
            "duplicate",
            f"{tomlscan.dotted(path)} is defined twice (lines {doc.lineno(first)} and {doc.lineno(again)}{_in_file(doc, first, again)}): "
            "containerd refuses to start with a duplicate key or table",
            _ev(doc, again),
            (_ev(doc, first),),
        ))
    if syntax and syntax[0] not in dup_lines:
        where = f" at line {doc.lineno(syntax[0])}{_in_file(doc, syntax[0])}" if syntax[0] is not None else ""
        problems.append(ConfigProblem("syntax", f"not valid TOML{where}: {syntax[1]}", _ev(doc, syntax[0])))
    _case_collisions(doc, sc, problems)

    keys, _, _ = _knowledge()
    declared = isinstance(data.get("version"), int)
    plugins = data.get("plugins") if isinstance(data.get("plugins"), dict) else {}
    fragment = bool(doc.command and _FRAGMENT_CMD.search(doc.command))
    if declared:
        version = data["version"]
    elif fragment or template:  # a grep, or a template whose base holds the version line: judge by the keys
        version = max((v for v, key in keys.items() if key in plugins), default=1)
    else:
        version = 1
    effective_key = keys.get(version)
    runtimes: dict[str, RuntimeHandler] = {}
    ignored: dict[str, RuntimeHandler] = {}
    for v, key in sorted(keys.items()):
        section = plugins.get(key)
        rts = _get(section, "containerd", "runtimes")
        if not isinstance(rts, dict) and not isinstance(_get(section, "containerd", "default_runtime"), dict):
            continue
        base = ("plugins", key, "containerd", "runtimes")
        found = _handlers(doc, sc, rts or {}, base, problems)
        legacy = _get(section, "containerd", "default_runtime")
        if isinstance(legacy, dict):
            found.update(_handlers(doc, sc, {"default_runtime": legacy}, ("plugins", key, "containerd"), problems))
        if key == effective_key:
            runtimes.update(found)
        elif found:
            ignored.update(found)
            first = next(iter(found.values()))
            why = (
                "this file has no `version` line, so containerd 1.x reads it as version 1, where plugins are named by short id (`cri`)"
                if not declared
                else f"a version {version} file keeps its runtimes under {effective_key!r}"
            )
            problems.append(ConfigProblem(
                "version-mismatch",
                f"runtime(s) {', '.join(found)} are under plugins.{key!r} (the version {v} layout) but {why}: containerd ignores them",
                first.evidence,
            ))
    section = plugins.get(effective_key) if effective_key else None
    section = section if isinstance(section, dict) else {}
    base = ("plugins", effective_key or "")
    default = _get(section, "containerd", "default_runtime_name")
    if default is None and "default_runtime" in runtimes:
        default = "default_runtime"
    cdi = section.get("enable_cdi")
    imports = data.get("imports") if isinstance(data.get("imports"), list) else []
    address = _get(data, "grpc", "address")
    settings = {".".join(path): _ev(doc, sc.line(*base, *path)) for path, _ in islice(_flatten(section), 300)}
    host, source = host_path_of(doc)
    dump = bool(doc.command and _DUMP.match(doc.command))
    if dump:
        flag = _FLAG_CONFIG.search(doc.command)
        host, source = (normalise_path(flag.group("path")), "config dump --config") if flag else (None, "config dump")
        if _DUMP.match(doc.command).group("what") == "default":
            host, source = None, "containerd config default (built-in defaults, not this node's file)"
    if not (runtimes or ignored or imports or address or declared or section) and (syntax or not data):
        raise UnusableData(
            problems[-1].message if syntax else "no containerd settings found (no plugins, imports, grpc or version)"
        )
    return ContainerdConfig(
        engine="containerd",
        artifact=doc.artifact,
        path=host,
        path_source=source,
        runtimes=runtimes,
        default_runtime=default if isinstance(default, str) else None,
        default_runtime_evidence=_ev(doc, sc.line(*base, "containerd", "default_runtime_name")) if isinstance(default, str) else None,
        problems=tuple(problems),
        evidence=_ev(doc, 0),
        version=version,
        version_declared=declared,
        version_evidence=_ev(doc, sc.line("version")) if declared else None,
        cri_plugin=effective_key,
        ignored_runtimes=ignored,
        imports=tuple(str(i) for i in imports),
        imports_evidence=_ev(doc, sc.line("imports")) if imports else None,
        enable_cdi=cdi if isinstance(cdi, bool) else None,
        enable_cdi_evidence=_ev(doc, sc.line(*base, "enable_cdi")) if isinstance(cdi, bool) else None,
        cdi_spec_dirs=tuple(str(d) for d in section.get("cdi_spec_dirs")) if isinstance(section.get("cdi_spec_dirs"), list) else (),
        grpc_address=normalise_path(address) if isinstance(address, str) else None,
        grpc_address_evidence=_ev(doc, sc.line("grpc", "address")) if isinstance(address, str) else None,
        cri_settings=settings,
        template=template,
        dump=dump,
    )


@parser("containerd.config", "containerd config.toml (v1/v2/v3), drop-ins, k3s/RKE2 templates, config dump", sniff=sniff)
def parse(doc: Document) -> Iterable[ContainerdConfig]:
    yield parse_config(doc)
