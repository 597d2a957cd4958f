"""What a node's host prints about itself: `lsmod` / /proc/modules, `modinfo nvidia`, `uname`, /etc/os-release,
/proc/uptime, /proc/cmdline, `mokutil --sb-state`, /proc/driver/nvidia/version, /sys/module/*/version,
`ofed_info -s`, and a container's cgroup v1 devices.list. Node probes collect them (knowledge/live.toml [probe]), nvidia-bug-report.log carries some,
users paste them.

Samples (as the tools print them):

    Module                  Size  Used by                       lsmod (kmod); busybox adds "    Tainted: P"
    nvidia_peermem         16384  0
    nvidia              56717312  550 nvidia_uvm,nvidia_peermem,nvidia_modeset
    nvidia_uvm 1232896 0 - Live 0x0000000000000000 (POE)         /proc/modules
    nvidia 14299136 - - Live 0xffffffffc0400000 (O)              /proc/modules, a kernel without module unloading
    filename:       /lib/modules/6.8.0-90-generic/updates/dkms/nvidia.ko
    vermagic:       6.8.0-90-generic SMP preempt mod_unload modversions
    modinfo: ERROR: Module nvidia not found.
    NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U22-I3-B17-02-5)  Tue Sep 23 09:55:41 UTC 2025
    GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04.2)
    SecureBoot enabled
    MLNX_OFED_LINUX-24.10-1.1.4.0:
    c 195:* m                                                     devices.list: the NVIDIA devices may be created, not opened

Each output is recognised by its content first; the command (`doc.command`, with `sudo`, `chroot DIR` and
`kubectl exec|debug ... --` taken off) and the host path (`doc.path_hint`) confirm it. The node comes from the
bundle's record (`doc.meta["node"]`), else it stays None.
"""

from __future__ import annotations

from dataclasses import dataclass

import re
import shlex
from datetime import datetime
from functools import lru_cache
from typing import Iterable

from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.host import (
    DeviceCgroupRules,
    DeviceRule,
    DriverVersion,
    KernelCmdline,
    KernelRelease,
    LoadedModule,
    ModuleInfo,
    ModuleList,
    MofedVersion,
    OsRelease,
    ReadyMarker,
    SecureBoot,
    Uptime,
)
from gpusleuth.model.runtime import HostPath
from gpusleuth.parsers import shellwords
from gpusleuth.parsers.base import LIKELY, NO, SURE, WEAK, parser

# ---------------------------------------------------------------------------------------------- provenance

_WRAPPERS = {"sudo", "doas", "command", "exec"}
_PIPE = re.compile(r"\s\|\s?|\s?\|\s")


def _node(doc: Document) -> str | None:
    return doc.meta.get("node") or None


def _split(cmd: str) -> list[str]:
    return list(_words(cmd))


def _words(cmd: str) -> tuple[str, ...]:
    """shlex's words of a command (shellwords.split: once per command, at C speed when no quote needs shlex)."""
    try:
        return shellwords.split(cmd)
    except ValueError:
        return tuple(cmd.split())


def command(doc: Document) -> tuple[str, list[str], str | None, list[list[str]]]:
    """(program, its arguments, chroot directory, the pipeline stages after it) of the command that printed
    the document; ("", [], None, []) when none is known."""
    if not doc.command:
        return ("", [], None, [])
    prog, args, root, stages = _command_of(doc.command)
    return prog, list(args), root, [list(s) for s in stages]


@lru_cache(maxsize=256)
def _command_of(line: str) -> tuple[str, tuple[str, ...], str | None, tuple[tuple[str, ...], ...]]:
    """_command, worked out once per command line: every host sniffer asks for it on every document."""
    prog, args, root, stages = _command(line)
    return prog, tuple(args), root, tuple(tuple(s) for s in stages)


def _command(line: str) -> tuple[str, list[str], str | None, list[list[str]]]:
    stages = [_split(s) for s in _PIPE.split(line)]
    argv = stages[0]
    if "--" in argv and argv[0] in ("kubectl", "k", "oc", "nsenter"):
        argv = argv[argv.index("--") + 1:]
    root = None
    while argv:
        prog = argv[0].rsplit("/", 1)[-1]
        if prog in _WRAPPERS:
            argv = argv[1:]
            while argv and argv[0].startswith("-"):
                argv = argv[1:]
        elif prog == "chroot" and len(argv) >= 2:
            root = None if argv[1] == "/host" else argv[1]
            argv = argv[2:]
        elif prog in ("sh", "bash") and len(argv) >= 3 and argv[1] == "-c":
            inner, args, _, inner_stages = _command(argv[2])
            return inner, args, root, inner_stages + stages[1:]
        else:
            break
    if not argv:
        return "", [], root, stages[1:]
    return argv[0].rsplit("/", 1)[-1], argv[1:], root, stages[1:]


def host_path(doc: Document) -> str | None:
    """The host file the document shows (`cat /proc/modules`, a probe's path), /host prefix undone."""
    path = doc.path_hint
    if not path:
        prog, args, _, _ = command(doc)
        files = [a for a in args if a.startswith("/")]
        path = files[0] if prog in ("cat", "head", "tail", "less", "more") and files else None
    if path and path.startswith("/host/"):
        path = path[5:]
    return path


def _lines(doc: Document) -> list[tuple[int, str]]:
    return [(i, ln) for i, ln in enumerate(doc.lines) if ln.strip()]


def _head(doc: Document, n: int) -> list[str]:
    """The first n non-blank lines, stripped: all a sniffer reads (a million-line log costs nothing). The host
    sniffers all read the same document one after the other, so the first _HEAD lines are stripped once."""
    global _last_head
    if n > _HEAD:
        return [ln.strip() for ln in doc.head(n)]
    last = _last_head
    if last[0] is not doc:
        last = _last_head = (doc, [ln.strip() for ln in doc.head(_HEAD)])
    return last[1][:n]


_HEAD = 100
_last_head: tuple[Document | None, list[str]] = (None, [])


def _about(doc: Document, text: str) -> Evidence:
    """Evidence for the output as a whole: the command's line when the document had a prompt."""
    line = doc.first_line - 1 if doc.command and doc.first_line > 1 else doc.first_line
    return Evidence(doc.artifact, line, text)


# ---------------------------------------------------------------------------------------------- lsmod

_LSMOD_HEADER = re.compile(r"^Module\s+Size\s+Used by(?:\s+(?:Tainted: .*|Not tainted))?\s*$")
# The use count is "-" on kernels built without module unloading (CONFIG_MODULE_UNLOAD=n).
_PROC_ROW = re.compile(r"^(?P<name>[\w-]+) (?P<size>\d+) (?P<count>-?\d+|-) (?P<by>\S+) (?P<state>Live|Loading|Unloading) "
                       r"(?P<addr>0x[0-9a-fA-F]+)(?: \((?P<taint>[A-Z+-]+)\))?\s*$")
_LSMOD_ROW = re.compile(r"^(?P<name>[\w-]+)\s+(?P<size>\d+)\s+(?P<count>-?\d+|-)(?:\s+(?P<by>\S.*?))?\s*$")
_TAINT_LINE = re.compile(r"^\s*(?:Tainted: [A-Z ]*|Not tainted)\s*$")
_GREP = {"grep", "egrep", "fgrep"}


def _module_row(line: str) -> tuple[re.Match, bool] | None:
    m = _PROC_ROW.match(line)
    if m:
        return m, True
    m = _LSMOD_ROW.match(line)
    return (m, False) if m else None


def _module_rows(doc: Document) -> list[tuple[int, re.Match, bool]]:
    return [(i, *row) for i, ln in _lines(doc) if (row := _module_row(ln))]


def sniff_modules(doc: Document) -> int:
    prog, _, _, _ = command(doc)
    lines = _head(doc, 100)
    if not lines:
        return NO
    header = any(map(_LSMOD_HEADER.match, lines[:3]))
    if prog == "lsmod" or host_path(doc) == "/proc/modules" or header:
        return SURE if header or any(map(_module_row, lines)) else NO
    rows = []
    for ln in lines:  # LIKELY only when every line is a module row (or a taint line): the first other line says no
        r = _module_row(ln)
        if r:
            rows.append(r)
        elif not _TAINT_LINE.match(ln):
            return NO
    if rows and (len(rows) >= 2 or any(proc for _, proc in rows)):
        return LIKELY
    return NO


def _grep_pattern(stages: list[list[str]]) -> tuple[re.Pattern | None, bool]:
    """The filter a `| grep ...` pipeline applied to module names: (pattern, filtered). Chained greps must all
    let a name through. A stage that cannot be read back (awk, head, grep -v) leaves filtered=True and no
    pattern: absence then proves nothing."""
    stage_patterns: list[str] = []
    for argv in stages:
        prog = argv[0].rsplit("/", 1)[-1] if argv else ""
        if prog not in _GREP or any(a.endswith(";") or a in ("&&", "||") for a in argv):
            return None, True  # another filter, or a second command whose output is mixed in
        ignore_case, fixed, words, expr = False, False, [], []
        extended = prog == "egrep"
        it = iter(argv[1:])
        for a in it:
            if a in ("-e", "--regexp"):
                expr.append(next(it, ""))
            elif a.startswith("--regexp="):
                expr.append(a.split("=", 1)[1])
            elif a.startswith("-") and len(a) > 1:
                if any(f in a for f in "vclo"):
                    return None, True
                ignore_case |= "i" in a
                extended |= "E" in a
                fixed |= "F" in a
            else:
                words.append(a)
        pats = expr or words[:1]
        if not pats:
            return None, True
        alts = [re.escape(p) if fixed else p if extended else p.replace(r"\|", "|").replace(r"\(", "(").replace(r"\)", ")") for p in pats]
        stage_patterns.append(f"(?=.*{'(?i:' if ignore_case else '(?:'}{'|'.join(alts)}))")
    if not stage_patterns:
        return None, False
    try:
        return re.compile("^" + "".join(stage_patterns)), True
    except re.error:
        return None, True


@parser("host.modules", "`lsmod` (kmod, busybox) and /proc/modules: the kernel modules loaded on the node", sniff=sniff_modules)
def parse_modules(doc: Document) -> Iterable[ModuleList]:
    prog, args, _, stages = command(doc)
    path = host_path(doc)
    rows = _module_rows(doc)
    if not rows:
        raise UnusableData("no module rows (name, size, use count) in this output")
    modules = []
    for i, m, proc in rows:
        by = m.group("by") or ""
        used = tuple(x for x in re.split(r"[,\s]+", by) if x and x != "-" and not x.startswith("["))
        count = m.group("count")
        modules.append(LoadedModule(m.group("name"), int(m.group("size")), used, doc.evidence(i), None if count == "-" else int(count),
                                    m.group("state") if proc else None))
    header = any(map(_LSMOD_HEADER.match, _head(doc, 3)))
    source = "/proc/modules" if path == "/proc/modules" or (prog == "cat" and "/proc/modules" in args) or (rows[0][2] and not header) else "lsmod"
    if prog in _GREP:  # `grep nvidia /proc/modules`
        pattern, filtered = _grep_pattern([[prog, *[a for a in args if a != "/proc/modules"]]])
    else:
        pattern, filtered = _grep_pattern(stages)
    if not doc.command and not path and not header:
        filtered = True  # a headerless paste of rows: most likely what a grep let through
    what = doc.command or (f"cat {path}" if path else "lsmod")
    yield ModuleList(tuple(modules), _about(doc, f"{what}: {len(modules)} module(s) listed"), _node(doc), source,
                     pattern if filtered else None, filtered and pattern is None)


# ---------------------------------------------------------------------------------------------- SELinux / AppArmor


@dataclass(frozen=True, slots=True)
class SecurityModule:
    """A Linux security module's state on the node: SELinux (`getenforce`, `sestatus`) or AppArmor (`aa-status`).
    An enforcing module can deny the driver container's module load or the toolkit's hook what it needs."""

    name: str  # selinux | apparmor
    mode: str  # enforcing | permissive | disabled | enabled (AppArmor loaded; `profiles` in enforce mode)
    evidence: Evidence
    node: str | None = None
    profiles: int | None = None  # AppArmor: profiles in enforce mode


_GETENFORCE = re.compile(r"^(?P<mode>Enforcing|Permissive|Disabled)\s*$")
_SESTATUS = re.compile(r"^(?:SELinux status|Current mode):\s+(?P<value>enabled|disabled|enforcing|permissive)\s*$")
_AA_LOADED = re.compile(r"^apparmor module is (?P<state>loaded|not loaded)\.?\s*$")
_AA_ENFORCE = re.compile(r"^(?P<n>\d+) profiles are in enforce mode\.?\s*$")


_SECURITY_PROGRAMS = ("getenforce", "sestatus", "aa-status", "apparmor_status")
# The prompt line when the source did not split at it (these programs are not among the ones it splits at).
_SECURITY_PROMPT = re.compile(r"^\s*(?:[\w.@:~/\[\] -]{0,80}[#$]\s+)?(?:sudo\s+)?(?:getenforce|sestatus|aa-status|apparmor_status)\b")


def sniff_security(doc: Document) -> int:
    prog = _command_of(doc.command)[0] if doc.command else ""  # command(doc)'s program, without copying its arguments
    head = [ln.strip() for ln in doc.head(6)]  # _head(doc, 6): on a stamped log no other host sniffer strips the head
    if (prog in _SECURITY_PROGRAMS or (head and _SECURITY_PROMPT.match(head[0]))) and head[1 if not prog else 0:]:
        return SURE
    if head and ((_GETENFORCE.match(head[0]) and len(head) == 1) or any(map(_SESTATUS.match, head))
                 or any(map(_AA_LOADED.match, head))):
        return LIKELY
    return NO


@parser("host.security", "`getenforce`, `sestatus`, `aa-status`: whether SELinux or AppArmor enforces on the node", sniff=sniff_security)
def parse_security(doc: Document) -> Iterable[SecurityModule]:
    selinux: tuple[str, int] | None = None
    for i, ln in _lines(doc):
        s = ln.strip()
        if m := _GETENFORCE.match(s):
            selinux = (m.group("mode").lower(), i)
        elif m := _SESTATUS.match(s):
            value = m.group("value")
            if value == "disabled" or value in ("enforcing", "permissive") or selinux is None:
                selinux = (value, i)
        elif m := _AA_LOADED.match(s):
            if m.group("state") == "not loaded":
                yield SecurityModule("apparmor", "disabled", doc.evidence(i), _node(doc))
                return
            n = next((int(a.group("n")) for _, x in _lines(doc) if (a := _AA_ENFORCE.match(x.strip()))), None)
            yield SecurityModule("apparmor", "enforcing" if n else "enabled", doc.evidence(i), _node(doc), n)
    if selinux is not None:
        yield SecurityModule("selinux", selinux[0], doc.evidence(selinux[1]), _node(doc))
    elif not any(_AA_LOADED.match(ln.strip()) for ln in doc.lines):
        raise UnusableData("no SELinux or AppArmor state in this output")


# ---------------------------------------------------------------------------------------------- lspci -k

# `lspci -nnk`: a device line, then indented Subsystem / Kernel driver in use / Kernel modules lines.
_PCI_DEVICE = re.compile(r"^(?P<addr>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(?P<what>.*)$")
_PCI_DRIVER = re.compile(r"^\s+Kernel driver in use:\s*(?P<driver>[\w-]+)\s*$")
_NVIDIA_DEVICE = re.compile(r"\[10de:[0-9a-fA-F]{4}\]|NVIDIA Corporation", re.I)


def sniff_lspci(doc: Document) -> int:
    prog, args, _, _ = command(doc)
    head = doc.head(40)
    devices = sum(1 for ln in head if _PCI_DEVICE.match(ln))
    drivers = any(map(_PCI_DRIVER.match, head))
    if prog == "lspci" and devices:
        return SURE
    return LIKELY if devices and drivers else NO


@parser("host.lspci", "`lspci -k` / `lspci -nnk`: the kernel driver bound to each NVIDIA device (nouveau, nvidia, vfio-pci)", sniff=sniff_lspci)
def parse_lspci(doc: Document) -> Iterable[ModuleList]:
    """The drivers bound to NVIDIA devices, as a module listing that proves only presence: a driver in use is a
    loaded module; one not shown may still be loaded (lspci lists drivers, not modules)."""
    modules: dict[str, LoadedModule] = {}
    nvidia = False
    for i, ln in enumerate(doc.lines):
        dev = _PCI_DEVICE.match(ln)
        if dev:
            nvidia = bool(_NVIDIA_DEVICE.search(dev.group("what")))
            continue
        drv = _PCI_DRIVER.match(ln)
        if drv and nvidia:
            name = drv.group("driver").replace("-", "_") if drv.group("driver") != "vfio-pci" else "vfio_pci"
            modules.setdefault(name, LoadedModule(name, None, (), doc.evidence(i)))
    if not modules:
        raise UnusableData("no NVIDIA device with a bound driver in this lspci output")
    what = doc.command or "lspci -k"
    yield ModuleList(tuple(modules.values()), _about(doc, f"{what}: drivers in use by NVIDIA devices: {', '.join(modules)}"),
                     _node(doc), "lspci -k", None, True)


# ---------------------------------------------------------------------------------------------- modinfo

_MODINFO_FIELD = re.compile(r"^(?P<key>[a-z_][a-z0-9_]*):(?P<sp>\s*)(?P<value>.*?)\s*$")
_MODINFO_KEYS = frozenset({
    "filename", "version", "license", "description", "author", "srcversion", "alias", "depends", "retpoline", "intree",
    "name", "vermagic", "sig_id", "signat", "signer", "sig_key", "sig_hashalgo", "signature", "parm", "firmware",
    "softdep", "import_ns", "supported", "staging", "rhelversion", "scmversion", "file", "sig_keyid",
})
_MODINFO_ERROR = re.compile(r"^modinfo: ERROR: Module (?P<name>\S+) not found\.?\s*$")
_SIGNED_KEYS = ("sig_id", "signat", "sig_hashalgo", "signature")


def _modinfo_key(line: str) -> re.Match | None:
    m = _MODINFO_FIELD.match(line)
    if m and (m.group("key") in _MODINFO_KEYS or len(m.group("key")) + 1 + len(m.group("sp")) == 16):
        return m
    return None


def sniff_modinfo(doc: Document) -> int:
    prog, _, _, _ = command(doc)
    lines = _head(doc, 60)
    if not lines:
        return NO
    errors = any(map(_MODINFO_ERROR.match, lines))
    keys = {m.group("key") for m in filter(None, map(_MODINFO_FIELD.match, lines))  # the lines _modinfo_key keeps
            if m.group("key") in _MODINFO_KEYS or len(m.group("key")) + 1 + len(m.group("sp")) == 16}
    if prog == "modinfo" and (keys or errors):
        return SURE
    if errors or {"filename", "vermagic"} <= keys or ({"vermagic"} == keys and len(lines) == 1):
        return SURE
    return NO


def _module_name(block: dict, fallback: str | None) -> str | None:
    if block.get("name"):
        return block["name"][0]
    if block.get("filename"):
        base = block["filename"][0].rsplit("/", 1)[-1]
        return re.sub(r"\.ko(?:\.\w+)?$", "", base).replace("-", "_")
    return fallback


@parser("host.modinfo", "`modinfo <module>`: the module file the running kernel would load (version, vermagic, signer)", sniff=sniff_modinfo)
def parse_modinfo(doc: Document) -> Iterable[ModuleInfo]:
    prog, args, root, _ = command(doc)
    wanted = [a.replace("-", "_") for a in args if not a.startswith("-")] if prog == "modinfo" else []
    blocks: list[tuple[dict, dict]] = []
    values: dict[str, list[str]] = {}
    where: dict[str, Evidence] = {}
    last = None
    for i, ln in enumerate(doc.lines):
        if not ln.strip():
            continue
        err = _MODINFO_ERROR.match(ln.strip())
        if err:
            yield ModuleInfo(err.group("name").replace("-", "_"), found=False, evidence={"error": doc.evidence(i)}, node=_node(doc), root=root)
            continue
        m = _modinfo_key(ln)
        if m is None:
            if last is not None and values.get(last):
                values[last][-1] += " " + ln.strip()  # a multi-line parm description or signature
            continue
        key, value = m.group("key"), m.group("value")
        if values and (key == "filename" or (key == "name" and "name" in values)):
            blocks.append((values, where))
            values, where = {}, {}
        values.setdefault(key, []).append(value)
        where.setdefault(key, doc.evidence(i))
        last = key
    if values:
        blocks.append((values, where))
    for n, (values, where) in enumerate(blocks):
        name = _module_name(values, wanted[n] if n < len(wanted) else (wanted[0] if len(wanted) == 1 else None))
        if name is None:
            raise UnusableData("modinfo output that names no module (no filename or name field, no `modinfo NAME` command)")
        first = lambda k: (values.get(k) or [None])[0] or None  # noqa: E731 - an empty `signer:` is no signer
        evidence = dict(where)
        if any(k in values for k in _SIGNED_KEYS):
            evidence.setdefault("signature", where[next(k for k in _SIGNED_KEYS if k in values)])
        yield ModuleInfo(
            name=name, filename=first("filename"), version=first("version"), vermagic=first("vermagic"), signer=first("signer"),
            sig_key=first("sig_key") or first("sig_keyid"), srcversion=first("srcversion"),
            depends=tuple(d for d in (first("depends") or "").split(",") if d), evidence=evidence, node=_node(doc), root=root,
        )


# ---------------------------------------------------------------------------------------------- os-release

_KV = re.compile(r"^(?P<key>[A-Z][A-Z0-9_]*)=(?P<value>.*)$")
_OS_KEYS = frozenset({"NAME", "ID", "VERSION_ID", "PRETTY_NAME", "ID_LIKE", "VERSION", "VERSION_CODENAME", "HOME_URL"})
_LSB_KEYS = frozenset({"DISTRIB_ID", "DISTRIB_RELEASE", "DISTRIB_CODENAME", "DISTRIB_DESCRIPTION"})
_OS_PATHS = ("/etc/os-release", "/usr/lib/os-release", "/etc/lsb-release")


def _unquote(value: str) -> str:
    value = value.strip()
    try:
        return " ".join(shlex.split(value, comments=False, posix=True))
    except ValueError:
        return value.strip("\"'")


def sniff_os_release(doc: Document) -> int:
    keys = {m.group("key") for ln in _head(doc, 60) if (m := _KV.match(ln))}
    if host_path(doc) in _OS_PATHS and keys & (_OS_KEYS | _LSB_KEYS):
        return SURE
    if {"ID", "VERSION_ID"} <= keys and keys & {"NAME", "PRETTY_NAME"}:
        return SURE
    if {"DISTRIB_ID", "DISTRIB_RELEASE"} <= keys:
        return SURE
    return NO


@parser("host.os-release", "/etc/os-release (and /etc/lsb-release): the node's distribution and version", sniff=sniff_os_release)
def parse_os_release(doc: Document) -> Iterable[OsRelease]:
    fields: dict[str, tuple[str, Evidence]] = {}
    for i, ln in _lines(doc):
        m = _KV.match(ln.strip())
        if m and m.group("key") not in fields:
            fields[m.group("key")] = (_unquote(m.group("value")), doc.evidence(i))
    ident = fields.get("ID") or fields.get("DISTRIB_ID")
    version = fields.get("VERSION_ID") or fields.get("DISTRIB_RELEASE")
    pretty = fields.get("PRETTY_NAME") or fields.get("DISTRIB_DESCRIPTION")
    if ident is None:
        raise UnusableData("no ID= (or DISTRIB_ID=) line: not an os-release file")
    like = tuple((fields.get("ID_LIKE") or ("", None))[0].lower().split())
    yield OsRelease(ident[0].lower(), version[0] if version else None, pretty[0] if pretty else None, ident[1], _node(doc), like, fields)


# ---------------------------------------------------------------------------------------------- /proc files

_UPTIME = re.compile(r"^(?P<up>\d+(?:\.\d+)?)\s+(?P<idle>\d+(?:\.\d+)?)\s*$")


def sniff_uptime(doc: Document) -> int:
    lines = _head(doc, 2)
    if len(lines) != 1 or not _UPTIME.match(lines[0]):
        return NO
    return SURE if host_path(doc) == "/proc/uptime" else LIKELY


def _read_at(doc: Document) -> datetime | None:
    try:
        t = datetime.fromisoformat(str(doc.meta.get("server_time")).replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo is not None else None


@parser("host.uptime", "/proc/uptime: seconds since the node booted", sniff=sniff_uptime)
def parse_uptime(doc: Document) -> Iterable[Uptime]:
    for i, ln in _lines(doc):
        m = _UPTIME.match(ln.strip())
        if m:
            yield Uptime(float(m.group("up")), doc.evidence(i), _node(doc), float(m.group("idle")), _read_at(doc))
            return
    raise UnusableData("no `<seconds> <idle seconds>` line")


_CMDLINE_HINT = re.compile(r"(?:^|\s)(?:BOOT_IMAGE=|root=|ro(?:\s|$)|quiet(?:\s|$)|console=|crashkernel=|initrd=)")


def sniff_cmdline(doc: Document) -> int:
    lines = _head(doc, 2)
    if len(lines) != 1:
        return NO
    if host_path(doc) == "/proc/cmdline":
        return SURE
    text = lines[0]
    hits = len(_CMDLINE_HINT.findall(text))
    return LIKELY if text.startswith("BOOT_IMAGE=") or hits >= 2 else NO


@parser("host.cmdline", "/proc/cmdline: the kernel's boot parameters (module blacklists, IOMMU, ...)", sniff=sniff_cmdline)
def parse_cmdline(doc: Document) -> Iterable[KernelCmdline]:
    for i, ln in _lines(doc):
        yield KernelCmdline(tuple(_split(ln.strip())), doc.evidence(i), _node(doc))
        return


# ---------------------------------------------------------------------------------------------- devices.list

_DEVICE_RULE = re.compile(r"^(?P<kind>[abc]) (?P<major>\d+|\*):(?P<minor>\d+|\*) (?P<access>[rwm]{1,3})$")
_ELIDED = re.compile(r"^(?:\.{3}|…|\[\.\.\.\])$")


def sniff_device_cgroup(doc: Document) -> int:
    """cgroup v1 devices.list (`cat /sys/fs/cgroup/devices/devices.list`): nothing else prints `c 195:* rwm`."""
    path = host_path(doc) or ""
    lines = [ln for ln in _head(doc, 20) if ln and not _ELIDED.match(ln)]
    rules = sum(1 for ln in lines if _DEVICE_RULE.match(ln))
    if not rules:
        return NO
    if path.endswith(("devices.list", "devices.allow")):
        return SURE
    return LIKELY if rules == len(lines) and rules >= 2 else NO


@parser("host.device-cgroup", "cgroup v1 devices.list: the device nodes a container may read, write or create", sniff=sniff_device_cgroup)
def parse_device_cgroup(doc: Document) -> Iterable[DeviceCgroupRules]:
    rules, partial = [], False
    for i, ln in _lines(doc):
        text = ln.strip()
        if m := _DEVICE_RULE.match(text):
            rules.append(DeviceRule(m.group("kind"), m.group("major"), m.group("minor"), m.group("access"), doc.evidence(i)))
        elif _ELIDED.match(text):
            partial = True
    if not rules:
        raise UnusableData("no device rules (`c 195:* rwm`) in this output")
    yield DeviceCgroupRules(tuple(rules), _about(doc, f"{len(rules)} device rule(s)"), _node(doc), partial)


_SB = re.compile(r"^SecureBoot (?P<state>enabled|disabled)\s*$")
_SB_SHIM_OFF = re.compile(r"^SecureBoot validation is disabled in shim\s*$")
_SB_UNSUPPORTED = re.compile(r"^(?:This system doesn't support Secure Boot|EFI variables are not supported on this system|"
                             r"Failed to read \"?SecureBoot\"?.*|SecureBoot not supported.*)\s*$", re.I)


def sniff_secure_boot(doc: Document) -> int:
    prog, args, _, _ = command(doc)
    lines = _head(doc, 10)
    known = any(_SB.match(ln) or _SB_UNSUPPORTED.match(ln) or _SB_SHIM_OFF.match(ln) for ln in lines)
    if prog == "mokutil" and (known or "--sb-state" in args):
        return SURE
    return SURE if known and len(lines) <= 4 else NO


@parser("host.secure-boot", "`mokutil --sb-state`: whether UEFI Secure Boot is on (the kernel then refuses unsigned modules)", sniff=sniff_secure_boot)
def parse_secure_boot(doc: Document) -> Iterable[SecureBoot]:
    state, shim_off, unsupported = None, None, None
    for i, ln in _lines(doc):
        text = ln.strip()
        if _SB.match(text):
            state = (i, _SB.match(text).group("state") == "enabled")
        elif _SB_SHIM_OFF.match(text):
            shim_off = i
        elif _SB_UNSUPPORTED.match(text):
            unsupported = i
    if state is not None:
        i, on = state
        if on and shim_off is not None:  # shim does not verify: the kernel is not booted in Secure Boot mode
            yield SecureBoot(False, doc.evidence(shim_off), _node(doc), doc.lines[shim_off].strip())
        else:
            yield SecureBoot(on, doc.evidence(i), _node(doc))
    elif unsupported is not None:
        yield SecureBoot(False, doc.evidence(unsupported), _node(doc), doc.lines[unsupported].strip())
    else:
        raise UnusableData("no `SecureBoot enabled|disabled` line")


# ---------------------------------------------------------------------------------------------- driver version

_NVRM = re.compile(r"^NVRM version: NVIDIA UNIX (?P<open>Open )?(?:(?P<arch1>\S+) )?Kernel Module(?: for (?P<arch2>\S+))?\s+"
                   r"(?P<version>\d+\.\d+(?:\.\d+)?)\b")
_GCC = re.compile(r"^GCC version:\s+(?P<gcc>.*?)\s*$")
_VERSION_LINE = re.compile(r"^(?P<version>\d{3}\.\d+(?:\.\d+)?)\s*$")
_SYS_VERSION = re.compile(r"^/sys/module/(?P<module>[\w-]+)/version$")


def sniff_driver_version(doc: Document) -> int:
    lines = _head(doc, 3)
    if any(map(_NVRM.match, lines)):
        return SURE
    m = _SYS_VERSION.match(host_path(doc) or "")
    if m and m.group("module") == "nvidia" and len(lines) == 1 and _VERSION_LINE.match(lines[0]):
        return SURE
    return NO


@parser("host.nvidia-version", "/proc/driver/nvidia/version and /sys/module/nvidia/version: the NVIDIA kernel module the kernel runs",
        sniff=sniff_driver_version)
def parse_driver_version(doc: Document) -> Iterable[DriverVersion]:
    gcc = next(((i, m.group("gcc")) for i, ln in _lines(doc) if (m := _GCC.match(ln.strip()))), None)
    for i, ln in _lines(doc):
        text = ln.strip()
        m = _NVRM.match(text)
        if m:
            yield DriverVersion(m.group("version"), doc.evidence(i), _node(doc), gcc[1] if gcc else None,
                                doc.evidence(gcc[0]) if gcc else None, bool(m.group("open")), m.group("arch1") or m.group("arch2"))
            return
        v = _VERSION_LINE.match(text)
        if v:
            yield DriverVersion(v.group("version"), doc.evidence(i), _node(doc), source=host_path(doc) or "/sys/module/nvidia/version")
            return
    raise UnusableData("no `NVRM version:` line")


# ---------------------------------------------------------------------------------------------- uname

_RELEASE = re.compile(r"^(?P<release>[2-9]\.\d+\.\d+[\w.+~-]*)\s*$")
_UNAME_A = re.compile(r"^Linux (?P<host>\S+) (?P<release>\d+\.\d+\.\d+\S*) #.*? (?P<arch>x86_64|aarch64|arm64|ppc64le|s390x)\b")
_PROC_VERSION = re.compile(r"^Linux version (?P<release>\d+\.\d+\.\d+\S*) \(")


def sniff_kernel_release(doc: Document) -> int:
    lines = _head(doc, 3)
    if not lines or len(lines) > 2:
        return NO
    prog, _, _, _ = command(doc)
    text = lines[0]
    if _UNAME_A.match(text) or _PROC_VERSION.match(text):
        return SURE
    if _RELEASE.match(text) and len(lines) == 1:
        return SURE if prog == "uname" else LIKELY if re.match(r"^\d+\.\d+\.\d+-\d", text) else WEAK
    return NO


@parser("host.uname", "`uname -r`, `uname -a` and /proc/version: the kernel the node runs", sniff=sniff_kernel_release)
def parse_kernel_release(doc: Document) -> Iterable[KernelRelease]:
    for i, ln in _lines(doc):
        text = ln.strip()
        if m := _UNAME_A.match(text):
            yield KernelRelease(m.group("release"), doc.evidence(i), _node(doc), "uname -a", m.group("host"), m.group("arch"))
        elif m := _PROC_VERSION.match(text):
            yield KernelRelease(m.group("release"), doc.evidence(i), _node(doc), "/proc/version")
        elif m := _RELEASE.match(text):
            yield KernelRelease(m.group("release"), doc.evidence(i), _node(doc), "uname -r")
        else:
            continue
        return
    raise UnusableData("no kernel release in this output")


# ---------------------------------------------------------------------------------------------- MOFED

_OFED = re.compile(r"^(?P<dist>MLNX_OFED_LINUX|OFED-internal|OFED)-(?P<version>\d[\w.-]*?)(?:\s+\(.*\))?:?\s*$")
_MOFED_MODULES = frozenset({"mlx5_core", "mlx_compat", "ib_core"})
_MOFED_VERSION_LINE = re.compile(r"^(?P<version>\d+\.\d+-\d[\w.-]*)\s*$")


def sniff_mofed(doc: Document) -> int:
    prog, _, _, _ = command(doc)
    lines = _head(doc, 2)
    if not lines:
        return NO
    first = lines[0]
    if _OFED.match(first):
        return SURE
    m = _SYS_VERSION.match(host_path(doc) or "")
    if m and m.group("module") in _MOFED_MODULES and len(lines) == 1 and _MOFED_VERSION_LINE.match(first):
        return SURE
    return WEAK if prog == "ofed_info" else NO


@parser("host.mofed-version", "`ofed_info -s` and /sys/module/mlx5_core/version: the MOFED (DOCA-OFED) the node runs", sniff=sniff_mofed)
def parse_mofed(doc: Document) -> Iterable[MofedVersion]:
    for i, ln in _lines(doc):
        text = ln.strip()
        if m := _OFED.match(text):
            yield MofedVersion(m.group("version"), doc.evidence(i), _node(doc), m.group("dist"), "ofed_info")
            return
        if m := _MOFED_VERSION_LINE.match(text):
            yield MofedVersion(m.group("version"), doc.evidence(i), _node(doc), None, host_path(doc) or "sysfs")
            return
    raise UnusableData("no MLNX_OFED_LINUX-<version> line (ofed_info not installed?)")


# ---------------------------------------------------------------------------------------------- readiness markers

_MARKER_DIRS = ("/run/nvidia/validations/", "/run/mellanox/drivers/")
_MARKER_LINE = re.compile(r"^(?P<key>[A-Z][A-Z0-9_]*)(?:=|:\s*)(?P<value>.*?)\s*$")
_MARKER_KEYS = frozenset({"IS_HOST_DRIVER", "NVIDIA_DRIVER_ROOT", "DRIVER_ROOT_CTR_PATH", "GPU_DIRECT_RDMA_ENABLED", "GDS_ENABLED",
                          "GDRCOPY_ENABLED"})


def sniff_marker(doc: Document) -> int:
    lines = _head(doc, 31)
    pairs = [m for ln in lines if (m := _MARKER_LINE.match(ln))]
    if not pairs or len(pairs) != len(lines) or len(lines) > 30:
        return NO
    if (host_path(doc) or "").startswith(_MARKER_DIRS):
        return SURE
    return LIKELY if {m.group("key") for m in pairs} & _MARKER_KEYS else NO


@parser("host.ready-marker", "GPU Operator readiness markers with content (/run/nvidia/validations/driver-ready, .driver-ctr-ready)",
        sniff=sniff_marker)
def parse_marker(doc: Document) -> Iterable[ReadyMarker | HostPath]:
    fields = {}
    first = None
    for i, ln in _lines(doc):
        m = _MARKER_LINE.match(ln.strip())
        if m:
            fields.setdefault(m.group("key"), (m.group("value"), doc.evidence(i)))
            first = first if first is not None else i
    path = host_path(doc)
    if first is None or not path:
        raise UnusableData("a marker's KEY=VALUE lines, but no path says which marker file they are")
    yield ReadyMarker(path, fields, doc.evidence(first), _node(doc))
    yield HostPath(path, True, doc.evidence(first), node=_node(doc))
