"""Which sniffers need not run on a document: a `kubectl logs` document whose every line starts with a digit.

Every sniffer runs on every document (analysis/engine.py `sniff`), and in a bundle or must-gather almost every
document is one container's log, read with `kubectl logs --timestamps`: each line starts with its RFC 3339 stamp.
On such a document the log sniffer (first in PARSERS, so it keeps a tie) answers SURE - 10 from the command
alone, and another parser wins only with a higher score. The sniffers listed in BEATEN_BY_STAMPED_LOGS cannot
score above SURE - 10 on a document that passes `stamped_log`; each entry says why (a score above SURE - 10
needs a line that starts with something other than a digit, or a command or host path the document does not
have). The sniffers not listed (nvidia-smi's banner, the security tools' prompt, a CDI spec, a Helm
release, the node probe) can find what they claim in the middle of a stamped line, and those that read only the
command (a yq fragment, one label per line) are cheap and can be told by a piped command: they still run.

Of those that still run, the ones listed in NAMED_IN_STAMPED_LOGS outbid the log sniffer only when the document's
first lines hold a word of theirs (a program's name at a prompt, a tool's banner, a schema's key); a stamped log
without any of those words (nearly every one) is sniffed by the log sniffer and the command-only sniffers alone
(`stamped_kind`). The words are looked for in a region that holds every line those sniffers read.

tests/parsers/test_sniff_dispatch.py compares the dispatched answer with every sniffer's on the examples, the
incidents, a generated fleet and fuzzed stamped documents made of other formats' lines.
"""

from __future__ import annotations

import re

from gpusleuth.model.document import Document
from gpusleuth.parsers import host_facts, kubectl_table, logs, shellwords
from gpusleuth.parsers.node_probe import SCHEMA

# Scores: SURE = 90, LIKELY = 60, WEAK = 20. The log sniffer's answer on a stamped log is SURE - 10 = 80.
BEATEN_BY_STAMPED_LOGS = frozenset({
    "nvidia-smi.list",  # SURE only when the first non-error head line starts with "GPU <n>: "
    "nvidia-smi.csv",  # SURE: a --query-gpu command (never a kubectl logs one) or a first line of field names (letters)
    "gpu-sharing.config",  # reads keys of lines whose first character is a letter
    "containerd.config",  # SURE: a `containerd config dump` command or a `[plugins...` header at a line's start; else <= LIKELY
    "crio.config",  # SURE: a `[crio...]` header at a line's start; else WEAK
    "docker.daemon-json",  # NO unless the first head line starts with "{"
    "host.processes",  # SURE: ps/pgrep/systemctl command, a UID/USER header, or lines that start with "--"; else <= LIKELY
    "host.crictl-info",  # SURE: a crictl info command or a first line starting with "{"
    "host.containerd-version",  # the first line must start with "containerd"
    "host.file-probe",  # <= LIKELY, and LIKELY only for ls/stat/test/file commands
    "host.modules",  # SURE: lsmod, /proc/modules or a "Module  Size  Used by" header; else <= LIKELY
    "host.lspci",  # SURE only for an lspci command; else <= LIKELY
    "host.modinfo",  # SURE: a modinfo command, "modinfo: ERROR" or `key:` lines that start with a letter
    "host.os-release",  # KEY=value lines whose key starts with a capital letter, or an os-release host path
    "host.uptime",  # SURE only for the /proc/uptime host path; else <= LIKELY
    "host.cmdline",  # SURE only for the /proc/cmdline host path; else <= LIKELY
    "host.secure-boot",  # lines starting with "SecureBoot", "This system", "EFI", or a mokutil command
    "host.device-cgroup",  # rule lines start with a, b or c; SURE only for a devices.list host path (none here)
    "host.nvidia-version",  # a line starting with "NVRM version" or a /sys/module/nvidia/version host path
    "host.uname",  # SURE: a line starting with "Linux" or a uname command; else <= LIKELY
    "host.mofed-version",  # a line starting with MLNX_OFED/OFED or a /sys/module host path; else <= WEAK
    "host.ready-marker",  # KEY=value lines whose key starts with a capital letter
    "helm.values",  # SURE: a `helm get values` command or a "USER-SUPPLIED VALUES:" first line; else <= LIKELY + 10
    "helm.set-flags",  # needs a helm command or a first non-blank line that is one (`helm install ...`)
    "helm.list",  # the first line must be `helm list`'s header
    "kubectl.describe",  # SURE needs a "Name:" line; its other answers are <= LIKELY + 15
    "k8s.json",  # NO unless the first head line starts with "{" or "["
    "k8s.yaml",  # needs apiVersion: and kind: lines at a line's start (or after "- " / two spaces)
    "kubectl.get-pods",  # SURE needs a table header, whose first column's name starts the line in upper case; a
    "kubectl.get-daemonsets",  # headerless `get pods | grep` paste (from the command) scores at most LIKELY + 20
    "kubectl.get-nodes",
    "kubectl.get-events",
    "kubectl.get-all",
    "kubectl.get-objects",  # at most LIKELY + 10
    "must-gather.node-labels",  # needs a second line starting with "- "
    "dcgm-exporter",  # lines that start with "# HELP DCGM_FI_", "# TYPE DCGM_FI_" or "DCGM_FI_"
})

_DIGITS = "0123456789"  # `c in _DIGITS` for the first character, or "" for an empty line
_NOT_DIGIT_AFTER = re.compile(r"\n[^0-9\n]")  # a later non-empty line not led by an ASCII digit (a literal-first scan)


# The sniffers that still run on a stamped log and can score above SURE - 10 there, and what they need for it. On a
# stamped log the command's program is kubectl or oc, there is no host path, and every non-empty line starts with a
# digit, so a test anchored at a line's start on a letter fails; what is left needs one of these words.
NAMED_IN_STAMPED_LOGS = {
    "host.security": ("getenforce", "sestatus", "aa-status", "apparmor_status"),  # at the first line's prompt; else <= LIKELY
    "nvidia-smi": ("NVIDIA-SMI", "device handle"),  # a banner or error in its first 60 lines (the handle error in any case); else <= LIKELY
    "nvidia-smi.query": ("NVSMI LOG",),  # in its first 5 lines
    "nvidia-smi.xml": ("nvidia_smi_log",),  # in its first 4 lines
    "cdi.spec": ("cdiVersion",),  # in its first 60 lines; else WEAK for a /cdi/ host path (none here) or NO
    "gpusleuth.node-probe": (SCHEMA,),  # in its first 2 lines
    "helm.release-secret": ("release.v1",),  # helm.sh/release.v1 or sh.helm.release.v1. in its first 400 lines
}
# the sniffers that still run on every stamped log: the log sniffer, and two that read the command
RUN_ON_STAMPED_LOGS = frozenset({"logs", "kubectl.yq-fragment", "kubectl.show-labels-lines"})
_HEAD_WORDS = ("getenforce", "sestatus", "aa-status", "apparmor_status", "NVSMI LOG", "nvidia_smi_log", SCHEMA)
_DEVICE_HANDLE = re.compile("device handle", re.I)  # as nvidia_smi._HANDLE_ERROR matches it (re.I folds a few non-ASCII letters)


def _stamped_text(doc: Document) -> str | None:
    """The document's lines joined, when it is a stamped log (stamped_log); else None."""
    cmd = doc.command
    if not cmd or doc.path_hint is not None or not cmd.startswith(("kubectl logs ", "oc logs ")):
        return None
    lines = doc.lines
    if lines and lines[0][:1] not in _DIGITS:
        return None
    text = "\n".join(lines)
    if _NOT_DIGIT_AFTER.search(text) is not None:
        return None
    # the log sniffer's SURE - 10 rests on the command's hints; `kubectl logs P -- lsmod` names another program
    # for the host sniffers (both answers are cached per command line, as those sniffers cache them)
    if logs._hints_of_command(cmd) and _runs_kubectl(cmd):
        return text
    return None


_DASH_WORD = re.compile(r"(?<!\S)--(?![^\s|])")  # a `--` word, or one that a pipe ends


def _runs_kubectl(cmd: str) -> bool:
    """host_facts._command_of(cmd)[0] in ("kubectl", "oc"), for a command that starts with `kubectl logs ` or
    `oc logs `: its first word is the program unless a `--` word hands over to another, which a command with no
    quote or escape (its words are str.split()'s, shellwords.py) and no `--` word cannot; only the others are split."""
    if shellwords._PLAIN.fullmatch(cmd) is not None and _DASH_WORD.search(cmd) is None:
        return True
    return host_facts._command_of(cmd)[0] in ("kubectl", "oc")


def stamped_log(doc: Document) -> bool:
    """A `kubectl logs` (or `oc logs`) document, with no host path, whose every non-empty line starts with a digit."""
    return _stamped_text(doc) is not None


def stamped_kind(doc: Document) -> int:
    """0: not a stamped log; 1: a stamped log; 2: a stamped log that holds none of NAMED_IN_STAMPED_LOGS' words
    where their sniffers look (only the sniffers in RUN_ON_STAMPED_LOGS can win it)."""
    text = _stamped_text(doc)
    if text is None:
        return 0
    lines = doc.lines
    end = len(text)
    if len(lines) > 400:  # the first 400 lines, when they hold the first 60 non-blank ones (no line is only spaces)
        first = lines[:400]
        if 400 - first.count("") >= 60:
            end = sum(map(len, first)) + 399
    find = text.find
    if find("NVIDIA-SMI", 0, end) >= 0 or find("cdiVersion", 0, end) >= 0 or find("release.v1", 0, end) >= 0:
        return 1
    head = "\n".join(doc.head(6))
    if any(map(head.__contains__, _HEAD_WORDS)):
        return 1
    if "device handle" in head.lower() if head.isascii() else _DEVICE_HANDLE.search(head) is not None:
        return 1
    return 2


def forget_skipped() -> None:
    """Drop the memos of the last document that skipped sniffers keep (the host sniffers' stripped head, the table
    sniffers' kinds): while stamped logs stream by they would keep an older document alive, and a streamed input
    keeps no document but the one being read (tests/sources/test_streaming.py)."""
    host_facts._last_head = (None, [])
    kubectl_table._last_kinds = (None, ((), False))
