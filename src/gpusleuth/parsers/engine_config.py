"""CRI-O (`/etc/crio/crio.conf`, `crio.conf.d/99-nvidia.toml`) and Docker (`/etc/docker/daemon.json`)
runtime configs: which runtimes each engine offers, which is the default.

CRI-O sample (what the NVIDIA toolkit writes):

    [crio.runtime]
      default_runtime = "nvidia"
    [crio.runtime.runtimes.nvidia]
      runtime_path = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
      runtime_type = "oci"

Docker sample:

    {"default-runtime": "nvidia", "runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}}}
"""

from __future__ import annotations

import json
import re
from typing import Iterable

from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.model.runtime import ConfigProblem, CrioConfig, DockerConfig, RuntimeHandler
from gpusleuth.parsers import tomlscan
from gpusleuth.parsers.base import LIKELY, NO, SURE, WEAK, parser
from gpusleuth.parsers.containerd_config import host_path_of

_CRIO_HEADER = re.compile(r"^\s*\[crio(?:\.runtime(?:\.runtimes\.[\w\"'.-]+)?)?\]\s*(?:#.*)?$")
_DOCKER_KEYS = re.compile(r'^\s*"(?:default-runtime|runtimes|exec-opts|log-driver|storage-driver|data-root|insecure-registries|registry-mirrors|cgroup-parent|live-restore|default-ulimits)"\s*:')
_K8S_JSON = re.compile(r'^\s*"(?:apiVersion|kind|metadata)"\s*:')
_CRICTL_KEYS = re.compile(r'"(?:containerdEndpoint|lastCNILoadStatus|cniconfig|defaultRuntimeName)"\s*:')
_TOML_ERROR_AT = re.compile(r"\(at line (?P<line>\d+), column \d+\)")


def sniff_crio(doc: Document) -> int:
    head = doc.lines[:400]
    if any(map(_CRIO_HEADER.match, head)):
        return SURE
    hint = (doc.path_hint or doc.artifact).lower()
    return WEAK if "crio" in hint and hint.endswith((".conf", ".toml")) else NO


def _ev(doc: Document, index: int | None):
    return doc.evidence(index if index is not None and 0 <= index < len(doc.lines) else 0)


@parser("crio.config", "CRI-O crio.conf and crio.conf.d drop-ins: runtimes, default runtime, hooks_dir", sniff=sniff_crio)
def parse_crio(doc: Document) -> Iterable[CrioConfig]:
    import tomllib

    problems: list[ConfigProblem] = []
    try:
        data = tomllib.loads(doc.text)
        sc = tomlscan.scan(doc.lines, read_values=False)
    except tomllib.TOMLDecodeError as exc:
        sc = tomlscan.scan(doc.lines)
        data = sc.data
        m = _TOML_ERROR_AT.search(str(exc))
        idx = int(m.group("line")) - 1 if m else None
        where = f" at line {doc.lineno(idx)}" if idx is not None else ""
        problems.append(ConfigProblem("syntax", f"not valid TOML{where}: {_TOML_ERROR_AT.sub('', str(exc)).strip()}", _ev(doc, idx)))
    runtime = data.get("crio", {}).get("runtime", {}) if isinstance(data.get("crio"), dict) else {}
    if not isinstance(runtime, dict):
        runtime = {}
    handlers = {}
    for name, body in (runtime.get("runtimes") or {}).items():
        if not isinstance(body, dict):
            continue
        path = body.get("runtime_path")
        handlers[name] = RuntimeHandler(
            name=name,
            runtime_type=body.get("runtime_type"),
            binary=path if isinstance(path, str) else None,
            binary_key="runtime_path" if isinstance(path, str) else None,
            options={k: v for k, v in body.items() if not isinstance(v, dict)},
            evidence=_ev(doc, sc.line("crio", "runtime", "runtimes", name)),
            binary_evidence=_ev(doc, sc.line("crio", "runtime", "runtimes", name, "runtime_path")) if isinstance(path, str) else None,
        )
    hooks = runtime.get("hooks_dir") or ()
    default = runtime.get("default_runtime")
    if not handlers and not isinstance(default, str) and not hooks and problems:
        raise UnusableData(problems[0].message)
    path, source = host_path_of(doc, (".conf", ".toml"))
    yield CrioConfig(
        engine="crio",
        artifact=doc.artifact,
        path=path,
        path_source=source,
        runtimes=handlers,
        default_runtime=default if isinstance(default, str) else None,
        default_runtime_evidence=_ev(doc, sc.line("crio", "runtime", "default_runtime")) if isinstance(default, str) else None,
        problems=tuple(problems),
        evidence=_ev(doc, 0),
        hooks_dirs=tuple(str(h) for h in hooks) if isinstance(hooks, (list, tuple)) else (str(hooks),),
    )


def sniff_docker(doc: Document) -> int:
    head = doc.head(30)
    if not head or not head[0].lstrip().startswith("{") or any(map(_K8S_JSON.match, head)):
        return NO
    if (doc.command or "").startswith("crictl") or any(map(_CRICTL_KEYS.search, doc.lines[:400])):
        return NO  # `crictl info` also has "runtimes": the host parsers read it
    hits = sum(1 for ln in doc.lines[:200] if _DOCKER_KEYS.match(ln))
    if any('"default-runtime"' in ln or '"runtimes"' in ln for ln in doc.lines[:200]):
        return SURE if hits >= 1 else LIKELY
    if hits >= 2:
        return LIKELY
    return WEAK if (doc.path_hint or doc.artifact).endswith("daemon.json") else NO


def _key_line(doc: Document, key: str, start: int = 0) -> int | None:
    needle = re.compile(rf'"{re.escape(key)}"\s*:')
    return next((i for i in range(start, len(doc.lines)) if needle.search(doc.lines[i])), None)


@parser("docker.daemon-json", "Docker /etc/docker/daemon.json: runtimes and default-runtime", sniff=sniff_docker)
def parse_docker(doc: Document) -> Iterable[DockerConfig]:
    try:
        data = json.loads(doc.text)
    except json.JSONDecodeError as exc:
        raise UnusableData(f"not valid JSON at line {doc.lineno(exc.lineno - 1)}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise UnusableData("daemon.json is not a JSON object")
    handlers = {}
    runtimes_at = _key_line(doc, "runtimes")
    for name, body in (data.get("runtimes") or {}).items():
        if not isinstance(body, dict):
            continue
        at = _key_line(doc, name, runtimes_at or 0)
        path = body.get("path")
        handlers[name] = RuntimeHandler(
            name=name,
            binary=path if isinstance(path, str) else None,
            binary_key="path" if isinstance(path, str) else None,
            options={k: v for k, v in body.items() if k != "path"},
            evidence=_ev(doc, at),
            binary_evidence=_ev(doc, _key_line(doc, "path", at or 0)) if isinstance(path, str) else None,
        )
    default = data.get("default-runtime")
    path, source = host_path_of(doc, (".json",))
    yield DockerConfig(
        engine="docker",
        artifact=doc.artifact,
        path=path,
        path_source=source,
        runtimes=handlers,
        default_runtime=default if isinstance(default, str) else None,
        default_runtime_evidence=_ev(doc, _key_line(doc, "default-runtime")) if isinstance(default, str) else None,
        evidence=_ev(doc, 0),
    )
