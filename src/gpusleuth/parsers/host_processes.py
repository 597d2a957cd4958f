"""What runs on the node: containerd instances and the endpoint kubelet uses, from `ps -ef` / `ps aux` /
`pgrep -a`, `systemctl status` / `systemctl list-units`, kubelet argument files; plus `crictl info`,
`containerd --version` and `ls`/`stat` probes of single files.

Samples:

    root  242547  1  2 Sep27 ?  00:41:07 /snap/k8s/3421/bin/containerd --config /var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml --address /var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock
    root    1021  1  0 Sep27 ?  00:03:10 /usr/bin/containerd
    root  242711  1  4 Sep27 ?  01:10:52 /snap/k8s/3421/bin/kubelet --container-runtime-endpoint=/var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock ...
    ● snap.k8s.containerd.service - Service for snap application k8s.containerd
         CGroup: /system.slice/snap.k8s.containerd.service
                 └─242547 /snap/k8s/3421/bin/containerd --config ...
"""

from __future__ import annotations

import json
import re
import shlex
from functools import cache
from typing import Iterable

from gpusleuth.errors import UnusableData
from gpusleuth.knowledge import table
from gpusleuth.model.document import Document
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.logs import ContainerLog
from gpusleuth.model.runtime import (
    ContainerdConfig,
    ContainerdInstance,
    ContainerdVersion,
    DriverLibraries,
    HostPath,
    KubeletRuntime,
    RuntimeHandler,
)
from gpusleuth.parsers.base import LIKELY, NO, SURE, WEAK, parser
from gpusleuth.parsers.containerd_config import normalise_path
from gpusleuth.parsers.logs import parse_log

# The containerd daemon itself (not containerd-shim-*, not `snap.k8s.containerd.service`, not a flag value).
_CONTAINERD = re.compile(r"(?<![\w/.=@-])(?P<bin>(?:/[\w.@+-]+)*/containerd|containerd)(?=\s|$)")
_KUBELET = re.compile(r"(?<![\w/.=@-])(?P<bin>(?:/[\w.@+-]+)*/kubelet|kubelet)(?=\s|$)")
_ENDPOINT = re.compile(r"--container-runtime-endpoint(?:=|\s+)(?P<ep>[^\s\"']+)")
_PS_HEADER = re.compile(r"^\s*(?:UID|USER)\s+PID\s+")
_PS_ROW = re.compile(r"^\s*\S+\s+(?P<pid>\d+)\s+")
_PGREP_ROW = re.compile(r"^\s*(?P<pid>\d+)\s+/")
_TREE_ROW = re.compile(r"^\s*[│├└─|`\s-]*(?P<pid>\d+)\s+(?P<cmd>\S.*)$")
_UNIT_HEADER = re.compile(r"^\s*[●*○×↻]?\s*(?P<unit>[\w@.:-]+\.service)\s+-\s")
_UNIT_ROW = re.compile(r"^\s*[●*]?\s*(?P<unit>[\w@.:-]*containerd[\w@.:-]*\.service)\s+(?P<load>\S+)\s+(?P<active>\S+)\s+(?P<sub>\S+)")
# The daemon's name as an argument of another command (`grep containerd`, `$ pgrep -a containerd`).
_NOT_DAEMON = re.compile(r"(?:^\s*[$#%>]\s|(?:^|[\s/])(?:e?grep|pgrep|pkill|pidof|systemctl|journalctl|crictl|ctr|snap|which|man)\s)")
_VERSION = re.compile(r"^\s*containerd\s+\S+\s+v?(?P<v>\d+\.\d+\.\d+[\w.+~-]*)")
_CANNOT = re.compile(r"^(?:ls|stat|test|file): cannot (?:access|stat|statx) ['‘\"]?(?P<path>/[^'’\"]+)['’\"]?: No such file or directory")
_ENTRY = re.compile(r"^[-lcsbdp][rwxsStT-]{9}[.+@]?\s+\d+\s+\S+\s+\S+\s+[\d,.]+[KMGTP]?\s+\w{3}\s+\d+\s+[\d:]+\s+(?P<name>[^/\s].*)$")
_TOTAL = re.compile(r"^total \d+[KMG]?\s*$")
_LS_DIR = re.compile(r"^ls\s+(?:-\S+\s+)*(?P<dir>/\S*?)/?$")
_LISTED = re.compile(r"^[-lcsbdp][rwxsStT-]{9}[.+@]?\s+\d+\s+\S+\s+\S+\s+[\d,.]+[KMGTP]?\s+\w{3}\s+\d+\s+[\d:]+\s+(?P<path>/\S+)")
# a driver library's versioned file and its soname link: libnvidia-ml.so.525.105.17, libnvidia-ml.so.1 -> libnvidia-ml.so.525.105.17
_DRIVER_LIB = re.compile(r"(?:^|/)(?P<lib>libnvidia-ml|libcuda)\.so\.(?P<version>\d{3}\.\d{2,3}(?:\.\d{2,3})?)$")
_SONAME_LINK = re.compile(r"(?:^|/)(?P<lib>libnvidia-ml|libcuda)\.so\.1 -> (?:\S*/)?(?P=lib)\.so\.(?P<version>\d{3}\.\d{2,3}(?:\.\d{2,3})?)$")


@cache
def _defaults() -> tuple[str, str]:
    t = table("runtimes")["containerd"]
    return t["default_config"], t["default_socket"]


def _instance(cmd: str, doc: Document, index: int, pid: int | None, service: str | None) -> ContainerdInstance | None:
    m = _CONTAINERD.search(cmd)
    if not m or _NOT_DAEMON.search(cmd[: m.start()]):
        return None
    try:
        args = shlex.split(cmd[m.end():])
    except ValueError:
        args = cmd[m.end():].split()
    config = socket = None
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if not eq:
            value = args[i + 1] if i + 1 < len(args) else ""
        if name in ("--config", "-c"):
            config = value
        elif name in ("--address", "-a"):
            socket = value
    if args and args[0] in ("config", "--version", "-v", "-h", "--help"):
        return None  # `containerd config dump` run by someone, not the daemon
    default_config, default_socket = _defaults()
    return ContainerdInstance(
        config_path=normalise_path(config) or default_config,
        socket=normalise_path(socket) or default_socket,
        service=service,
        binary=m.group("bin"),
        pid=pid,
        config_flag=config is not None,
        socket_flag=socket is not None,
        evidence=doc.evidence(index),
    )


def sniff_processes(doc: Document) -> int:
    prog = (doc.command or "").split()[0].rsplit("/", 1)[-1] if doc.command else ""
    head = doc.lines[:300]
    blob = "\n".join(head)
    if "containerd" not in blob and "--container-runtime-endpoint" not in blob:
        return NO  # every answer below needs one of them: no per-line regex on a log's head
    daemons = any(_CONTAINERD.search(ln) and not _NOT_DAEMON.search(ln) for ln in head) or any(map(_ENDPOINT.search, head))
    if prog in ("ps", "pgrep", "systemctl") and (daemons or any(map(_UNIT_ROW.match, head))):
        return SURE
    if any(map(_PS_HEADER.match, head[:3])) and daemons:
        return SURE
    flags = [ln for ln in head if ln.strip()]
    if flags and sum(1 for ln in flags if ln.lstrip().startswith("--")) >= 0.6 * len(flags) and any(map(_ENDPOINT.search, flags)):
        return SURE  # kubelet args file (k8s-snap /var/snap/k8s/common/args/kubelet)
    if any(_UNIT_HEADER.match(ln) and "containerd" in ln for ln in head):
        return LIKELY
    if any(re.search(r"containerd\s+(?:--config|-c)\s+/\S+", ln) for ln in head):
        return LIKELY
    return NO


@parser("host.processes", "ps / pgrep / systemctl output and kubelet args: containerd instances, kubelet endpoint", sniff=sniff_processes)
def parse_processes(doc: Document) -> Iterable[ContainerdInstance | KubeletRuntime | ContainerLog]:
    unit = None
    found = 0
    for i, ln in enumerate(doc.lines):
        if not ln.strip():
            continue
        header = _UNIT_HEADER.match(ln)
        if header:
            unit = header.group("unit")
            continue
        row = _UNIT_ROW.match(ln)
        if row and row.group("active") == "active":
            found += 1
            yield ContainerdInstance(config_path=None, socket=None, service=row.group("unit"), evidence=doc.evidence(i))
            continue
        ep = _ENDPOINT.search(ln)
        if ep and (_KUBELET.search(ln) or ln.lstrip().startswith("--") or "KUBELET" in ln) and not _NOT_DAEMON.search(ln[: ep.start()]):
            found += 1
            yield KubeletRuntime(endpoint=ep.group("ep"), evidence=doc.evidence(i))
            continue
        pid, service = None, None
        tree = _TREE_ROW.match(ln) if unit and ("─" in ln or "`-" in ln or "|-" in ln) else None
        if tree:
            pid, service = int(tree.group("pid")), unit
        else:
            m = _PS_ROW.match(ln) or _PGREP_ROW.match(ln)
            pid = int(m.group("pid")) if m else None
        inst = _instance(ln, doc, i, pid, service)
        if inst:
            found += 1
            yield inst
    journal = _unit_log(doc) if unit else None
    if journal is not None:
        found += 1
        yield journal
    if not found:
        raise UnusableData("no containerd or kubelet process in this output")


# The unit's last log lines under `systemctl status` (journald's short format).
_UNIT_LOG_LINE = re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [\w@.-]+(?:\[\d+\])?: ")


def _unit_log(doc: Document) -> ContainerLog | None:
    """The log lines `systemctl status` prints under a unit (why it failed), read as that host's journal."""
    at = [i for i, ln in enumerate(doc.lines) if _UNIT_LOG_LINE.match(ln)]
    if not at:
        return None
    start, end = at[0], at[-1] + 1
    sub = Document(doc.artifact, tuple(doc.lines[start:end]), doc.first_line + start, meta=doc.meta)
    log = parse_log(sub)
    return log if log.lines else None


def sniff_crictl(doc: Document) -> int:
    cmd = doc.command or ""
    if _CRICTL_INFO.match(cmd):
        return SURE
    head = doc.lines[:400]
    if head and head[0].lstrip().startswith("{") and any('"containerdEndpoint"' in ln or '"lastCNILoadStatus"' in ln for ln in head):
        return SURE
    return NO


_CRICTL_INFO = re.compile(r"^(?:sudo\s+)?(?:\S*/)?crictl\b.*\binfo\b")
_GREPPED = re.compile(r"\|\s*(?:grep|egrep|jq|head|tail)\b")
_JSON_PAIR = re.compile(r'^\s*"(?P<key>defaultRuntimeName|enableCDI|containerdEndpoint)"\s*:\s*"?(?P<value>[^",]*)"?,?\s*$')


def _crictl_fragment(doc: Document) -> Iterable[ContainerdConfig | ContainerdInstance]:
    """`crictl info | grep defaultRuntimeName`: the keys shown, nothing about the runtimes left out."""
    found = {m.group("key"): (m.group("value"), i) for i, ln in enumerate(doc.lines) if (m := _JSON_PAIR.match(ln))}
    if not found:
        raise UnusableData("a filtered `crictl info` with none of defaultRuntimeName, enableCDI, containerdEndpoint")
    flag = re.search(r"(?:--runtime-endpoint|-r)[= ](\S+)", doc.command or "")
    socket = normalise_path(found["containerdEndpoint"][0] if "containerdEndpoint" in found else (flag.group(1) if flag else None))
    default = found.get("defaultRuntimeName")
    cdi = found.get("enableCDI")
    yield ContainerdConfig(
        engine="containerd", artifact=doc.artifact, path=None, path_source="crictl info (filtered)",
        default_runtime=default[0] if default else None, default_runtime_evidence=doc.evidence(default[1]) if default else None,
        evidence=doc.evidence(0), version=0,
        enable_cdi=cdi[0] == "true" if cdi and cdi[0] in ("true", "false") else None,
        enable_cdi_evidence=doc.evidence(cdi[1]) if cdi else None,
        live=True, fragment=True, socket=socket,
    )
    if socket:
        yield ContainerdInstance(config_path=None, socket=socket, evidence=doc.evidence(0))


def _json_line(doc: Document, key: str, start: int = 0) -> int:
    needle = re.compile(rf'"{re.escape(key)}"\s*:')
    return next((i for i in range(start, len(doc.lines)) if needle.search(doc.lines[i])), start)


@parser("host.crictl-info", "`crictl info`: the runtimes a running containerd's CRI plugin actually loaded", sniff=sniff_crictl)
def parse_crictl(doc: Document) -> Iterable[ContainerdConfig | ContainerdInstance]:
    if _GREPPED.search(doc.command or "") and not doc.text.lstrip().startswith("{"):
        yield from _crictl_fragment(doc)
        return
    try:
        data = json.loads(doc.text)
    except json.JSONDecodeError as exc:
        raise UnusableData(f"not valid JSON at line {doc.lineno(exc.lineno - 1)}: {exc.msg} (truncated paste?)") from None
    cfg = data.get("config") if isinstance(data, dict) else None
    if not isinstance(cfg, dict):
        raise UnusableData("no `config` object: not the output of `crictl info` against containerd")
    ctd = cfg.get("containerd") or {}
    flag = re.search(r"(?:--runtime-endpoint|-r)[= ](\S+)", doc.command or "")
    socket = normalise_path(cfg.get("containerdEndpoint") or (flag.group(1) if flag else None))
    at = _json_line(doc, "runtimes")
    handlers = {}
    for name, body in (ctd.get("runtimes") or {}).items():
        if not isinstance(body, dict):
            continue
        opts = body.get("options") or {}
        binary = next((v for k, v in opts.items() if k.lower() in ("binaryname", "binary_name")), None)
        line = _json_line(doc, name, at)
        handlers[name] = RuntimeHandler(
            name=name,
            runtime_type=body.get("runtimeType"),
            binary=binary or None,
            binary_key="BinaryName" if binary else None,
            options=dict(opts),
            evidence=doc.evidence(line),
            binary_evidence=doc.evidence(_json_line(doc, "BinaryName", line)) if binary else None,
        )
    default = ctd.get("defaultRuntimeName")
    cdi = cfg.get("enableCDI")
    yield ContainerdConfig(
        engine="containerd",
        artifact=doc.artifact,
        path=None,
        path_source="crictl info",
        runtimes=handlers,
        default_runtime=default if isinstance(default, str) else None,
        default_runtime_evidence=doc.evidence(_json_line(doc, "defaultRuntimeName")) if isinstance(default, str) else None,
        evidence=doc.evidence(0),
        version=0,
        enable_cdi=cdi if isinstance(cdi, bool) else None,
        enable_cdi_evidence=doc.evidence(_json_line(doc, "enableCDI")) if isinstance(cdi, bool) else None,
        cdi_spec_dirs=tuple(cfg.get("cdiSpecDirs") or ()),
        live=True,
        socket=socket,
    )
    if socket:
        yield ContainerdInstance(config_path=None, socket=socket, evidence=doc.evidence(_json_line(doc, "containerdEndpoint")))


def sniff_version(doc: Document) -> int:
    lines = doc.head(4)
    return SURE if 0 < len(lines) <= 3 and _VERSION.match(lines[0]) else NO


@parser("host.containerd-version", "`containerd --version`", sniff=sniff_version)
def parse_version(doc: Document) -> Iterable[ContainerdVersion]:
    for i, ln in enumerate(doc.lines):
        m = _VERSION.match(ln)
        if m:
            yield ContainerdVersion(m.group("v"), doc.evidence(i))


def _bare_names(doc: Document) -> list[tuple[int, str]] | None:
    """`ls DIR` without -l: the names it printed (one per line or in columns), or None when it is not that."""
    listing = _LS_DIR.match(doc.command or "")
    if not listing or any("l" in flag for flag in doc.command.split()[1:] if flag.startswith("-")):
        return None
    names = [(i, n) for i, ln in enumerate(doc.lines) for n in ln.split() if n not in (".", "..")]
    return names if names and not any(map(_CANNOT.match, doc.lines)) else None


def sniff_probe(doc: Document) -> int:
    prog = (doc.command or "").split()[0] if doc.command else ""
    lines = (ln for ln in doc.lines if ln.strip())
    if prog in ("ls", "stat", "test", "file"):
        return LIKELY if any(_probe_line(ln) for ln in lines) or _bare_names(doc) else NO
    seen = False
    for ln in lines:  # WEAK when every non-blank line is one: the first that is not decides
        if _TOTAL.match(ln):  # `ls -la`'s first line
            continue
        if not _probe_line(ln):
            return NO
        seen = True
    return WEAK if seen else NO


def _probe_line(ln: str) -> bool:
    return bool(_CANNOT.match(ln) or _LISTED.match(ln) or _ENTRY.match(ln))


def _driver_libraries(doc: Document, node: str | None) -> Iterable[DriverLibraries]:
    """The driver library copies an `ls -l` lists, per library: a second version beside the driver's is a finding."""
    found: dict[str, dict] = {}
    for i, ln in enumerate(doc.lines):
        m = _ENTRY.match(ln) or _LISTED.match(ln)
        if not m:
            continue
        name = (m.groupdict().get("name") or m.groupdict().get("path") or "").strip()
        if link := _SONAME_LINK.search(name):
            found.setdefault(link.group("lib"), {"versions": {}})["link"] = (link.group("version"), doc.evidence(i))
        elif lib := _DRIVER_LIB.search(name):
            found.setdefault(lib.group("lib"), {"versions": {}})["versions"].setdefault(lib.group("version"), doc.evidence(i))
    for lib, f in found.items():
        if f["versions"]:
            link = f.get("link") or (None, None)
            yield DriverLibraries(lib, tuple(f["versions"].items()), link[0], link[1], node)


@parser("host.file-probe", "`ls -l` / `stat` of files and `ls -l DIR` listings: whether paths exist on the node", sniff=sniff_probe)
def parse_probe(doc: Document) -> Iterable[HostPath | DriverLibraries]:
    node = doc.meta.get("node") or None
    yield from _driver_libraries(doc, node)
    listing = _LS_DIR.match(doc.command or "")
    if listing:
        names = [(i, m.group("name").split(" -> ")[0]) for i, ln in enumerate(doc.lines) if (m := _ENTRY.match(ln))]
        names = [(i, n) for i, n in names if n not in (".", "..")] or _bare_names(doc) or []
        if names or any(map(_ENTRY.match, doc.lines)):
            base = normalise_path(listing.group("dir"))
            yield HostPath(base, True, Evidence(doc.artifact, doc.first_line - 1, f"ls {base}: {', '.join(n for _, n in names) or 'empty'}"),
                           entries=tuple(n for _, n in names), node=node)
            for i, n in names:
                yield HostPath(f"{base.rstrip('/')}/{n}", True, doc.evidence(i), node=node)
    for i, ln in enumerate(doc.lines):
        m = _CANNOT.match(ln)
        if m:
            yield HostPath(normalise_path(m.group("path")), False, doc.evidence(i), node=node)
            continue
        m = _LISTED.match(ln)
        if m:
            yield HostPath(normalise_path(m.group("path").split(" -> ")[0]), True, doc.evidence(i), node=node)
