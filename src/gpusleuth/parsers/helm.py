"""Helm: `helm get values` (user-supplied or `--all` computed), plain values files, `helm list`, and the
release Secrets / ConfigMaps Helm stores (decoded; no other Secret data is ever kept).

A values file is recognised by its content (GPU Operator top-level keys, the `USER-SUPPLIED VALUES:`
header, or the nvidia-device-plugin chart's own keys such as `config: {name, default}` and `migStrategy`),
never by its name; values of the device plugin chart are marked chart `nvidia-device-plugin`. Every dotted key keeps the line that set it, so evidence reads
`values.yaml:42 toolkit.env`. A `| grep -A20 toolkit:` paste is read from its first top-level key on and
marked partial.

Samples:

    USER-SUPPLIED VALUES:
    toolkit:
      env:
      - name: CONTAINERD_CONFIG
        value: /var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml

    NAME                     NAMESPACE     REVISION  UPDATED                                  STATUS    CHART                 APP VERSION
    gpu-operator-1758912452  gpu-operator  3         2025-09-26 18:47:47.362536 +0000 UTC     deployed  gpu-operator-v25.3.4  v25.3.4
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import shlex
import zlib
from typing import Iterable

from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.model.logs import ContainerLog
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.runtime import HelmRelease
from gpusleuth.parsers.base import LIKELY, NO, SURE, WEAK, parser
from gpusleuth.parsers.logs import parse_text
from gpusleuth.parsers.yamlsafe import compose_one, node_paths, safe_load_all
from gpusleuth.sources.text import ByteLines

# Top-level keys of the GPU Operator chart's values.yaml (deployments/gpu-operator/values.yaml).
OPERATOR_KEYS = frozenset({
    "driver", "toolkit", "devicePlugin", "operator", "nfd", "mig", "migManager", "dcgmExporter", "dcgm", "cdi",
    "gfd", "validator", "nodeStatusExporter", "psa", "daemonsets", "sandboxWorkloads", "vgpuManager",
    "vgpuDeviceManager", "node-feature-discovery", "ccManager", "gds", "gdrcopy", "kataManager", "vfioManager",
    "sandboxDevicePlugin", "hostPaths", "platform",
})
# Top-level keys only the nvidia-device-plugin chart has (deployments/helm/nvidia-device-plugin/values.yaml);
# `gfd`, `nfd`, `devicePlugin`, `cdi` are shared with the operator and `config` alone is too common to decide.
PLUGIN_KEYS = frozenset({
    "migStrategy", "failOnInitError", "deviceListStrategy", "deviceIDStrategy", "nvidiaDriverRoot", "compatWithCPUManager",
    "gdrcopyEnabled", "gdsEnabled", "mofedEnabled", "deviceDiscoveryStrategy", "allowDefaultNamespace", "mps",
    "runtimeClassName", "selectorLabelsOverride", "componentSelectorLabels",
})
# Its keys shared with other charts: values of nothing but these are the plugin's only when a comment says so.
_PLUGIN_SHARED_KEYS = frozenset({
    "config", "gfd", "nfd", "devicePlugin", "cdi", "tolerations", "affinity", "nodeSelector", "priorityClassName", "image",
    "imagePullSecrets", "updateStrategy", "resources", "podAnnotations", "podSecurityContext", "securityContext",
    "nameOverride", "fullnameOverride", "namespaceOverride",
})
_PLUGIN_CONFIG_KEY = re.compile(r"^\s+(?:name|map|default|fallbackStrategies):(?:\s|$)")
# `# helm upgrade -i nvidia-device-plugin nvdp/nvidia-device-plugin -n kube-system -f values.yaml` atop a values file
_INSTALL_COMMENT = re.compile(r"^#\s*helm\s+(?:upgrade|install)\s+(?P<args>.*)$")
_HEADER = re.compile(r"^(?P<kind>USER-SUPPLIED|COMPUTED) VALUES:\s*$")
_TOP_KEY = re.compile(r"^(?P<key>[A-Za-z][\w-]*):(?:\s|$)")
_HELM_GET = re.compile(r"^helm\b.*\bget\s+(?:values|all)\b")
# `apiVersion:` / `kind:` after no indentation, or after whitespace that does not start with a space (a tab)
_OBJECT_LINE = re.compile(r"(?:[^\S ]\s*)?(?:apiVersion|kind):")
_PIPE_FILTER = re.compile(r"\|\s*(?:grep|egrep|head|tail|sed|awk)\b")
_LIST_ROW = re.compile(
    r"^(?P<name>\S+)\s+(?P<ns>\S+)\s+(?P<rev>\d+)\s+(?P<updated>.+?)\s+"
    r"(?P<status>deployed|failed|pending-install|pending-upgrade|pending-rollback|superseded|uninstalling|uninstalled|unknown)\s+"
    r"(?P<chart>\S+)(?:\s+(?P<app>\S+))?\s*$"
)
_LIST_HEADER = re.compile(r"^NAME\s+NAMESPACE\s+REVISION\s+UPDATED\s+STATUS\s+CHART\s+APP VERSION\s*$")
_CHART_VERSION = re.compile(r"^(?P<name>.+?)-(?P<version>v?\d+\.\d+[\w.+-]*)$")
_RELEASE_TYPE = re.compile(r"""(?:^|\s|")type"?\s*:\s*"?helm\.sh/release\.v1""")
_RELEASE_NAME = re.compile(r"^(?P<base>sh\.helm\.release\.v1\.(?P<rel>.+)\.v(?P<rev>\d+))(?:\.(?P<chunk>\d+))?$")


def deep_merge(base: dict, over: dict) -> dict:
    """Helm's coalescing: maps merge key by key, anything else is replaced; a null removes the key."""
    out = dict(base)
    for k, v in over.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def _key_lines(node, offset: int) -> dict[str, int]:
    """Dotted key ('toolkit.env.0.value') -> line number in the document (1-based, absolute); each node is
    walked once, so an alias adds the line of its key and nothing more (yamlsafe)."""
    out: dict[str, int] = {}
    for path, line in node_paths(node, scalar_keys_only=True):
        out.setdefault(".".join(str(p) for p in path), offset + line)
    return out


def load_yaml_with_lines(lines: list[str], first_line: int) -> tuple[object, dict[str, int]]:
    """(data, key lines) of one YAML document; raises yaml.YAMLError, or AliasBomb (UnusableData)."""
    node, data = compose_one("\n".join(lines))
    if node is None:
        return None, {}
    return data, _key_lines(node, first_line)


def _top_keys(lines) -> set[str]:
    # map/filter keep the per-line loop in C: sniff_values runs this on every document, logs included
    return {m.group("key") for m in filter(None, map(_TOP_KEY.match, lines))}


_LETTER_AFTER_NEWLINE = re.compile(rb"\n[A-Za-z]")


def _no_top_key(lines) -> bool:
    """True when no line can be a top-level key (none starts with an ASCII letter), told from a big text's bytes at
    C speed (a pods JSON dump of 40,000 lines: ~0.7 ms instead of ~4.5 ms for _top_keys); False when unsure."""
    if not isinstance(lines, ByteLines):
        return False
    data = lines.data
    return not data[:1].isalpha() and _LETTER_AFTER_NEWLINE.search(data, 0, lines.size) is None


def _plugin_chart(lines, keys: set[str] | None = None) -> bool:
    """Whether values are the nvidia-device-plugin chart's: its own top-level keys, `config:` holding
    name/map/default/fallbackStrategies, or an install comment naming the chart; never with operator-only keys.
    keys: _top_keys(lines), when the caller has them."""
    keys = _top_keys(lines) if keys is None else keys
    if keys & (OPERATOR_KEYS - {"devicePlugin", "nfd", "gfd", "cdi"}):
        return False
    if keys & PLUGIN_KEYS:
        return True
    if "config" in keys:
        at = next(i for i, ln in enumerate(lines) if ln.startswith("config:"))
        if any(map(_PLUGIN_CONFIG_KEY.match, lines[at + 1 : at + 4])):
            return True
    install = _install_comment(lines)
    return bool(keys and keys <= _PLUGIN_SHARED_KEYS and install and install[2] == "nvidia-device-plugin")


def _install_comment(lines) -> tuple[str | None, str | None, str | None] | None:
    """(release, namespace, chart name) of a `# helm upgrade -i REL REPO/CHART -n NS` comment in the first lines."""
    for ln in lines[:5]:
        m = _INSTALL_COMMENT.match(ln.strip())
        if not m:
            continue
        try:
            tokens = shlex.split(m.group("args"))
        except ValueError:
            tokens = m.group("args").split()
        positional, namespace, i = [], None, 0
        while i < len(tokens):
            t = tokens[i]
            if t in ("-n", "--namespace") and i + 1 < len(tokens):
                namespace, i = tokens[i + 1], i + 2
                continue
            if t in ("-f", "--values", "--version", "--set", "--set-string", "--set-json", "--kube-context", "--kubeconfig"):
                i += 2
                continue
            if not t.startswith("-"):
                positional.append(t)
            i += 1
        if len(positional) >= 2:
            return positional[0], namespace, positional[1].rsplit("/", 1)[-1]
    return None


def _release_from_command(cmd: str) -> tuple[str | None, str | None, bool]:
    """(release, namespace, --all) of `helm get values REL -n NS -a -o yaml | ...`."""
    try:
        tokens = shlex.split(cmd.split("|", 1)[0])
    except ValueError:
        tokens = cmd.split("|", 1)[0].split()
    release = namespace = None
    every = False
    positional = []
    takes_value = {"-n", "--namespace", "-o", "--output", "--revision", "--kube-context", "--kubeconfig", "--template"}
    i = 1
    while i < len(tokens):
        t = tokens[i]
        if t in ("-n", "--namespace") and i + 1 < len(tokens):
            namespace = tokens[i + 1]
            i += 2
            continue
        if t.startswith("--namespace="):
            namespace = t.split("=", 1)[1]
        elif t in ("-a", "--all"):
            every = True
        elif t in takes_value:
            i += 2
            continue
        elif not t.startswith("-"):
            positional.append(t)
        i += 1
    if positional[:2] in (["get", "values"], ["get", "all"]) and len(positional) > 2:
        release = positional[2]
    return release, namespace, every


def _dedent(lines) -> list[str]:
    """A values fragment pasted at any indentation (inside a Markdown list, cut from a nested file): the
    indentation its non-blank lines share is removed, line count kept."""
    body = [ln for ln in lines if ln.strip()]
    if not body:
        return list(lines)
    cut = min(len(ln) - len(ln.lstrip(" ")) for ln in body)
    return [ln[cut:] if ln.strip() else ln for ln in lines] if cut else list(lines)


def sniff_values(doc: Document) -> int:
    if doc.lines and doc.lines[0][:1] == " " or any(ln[:1] == " " for ln in doc.head(1)):
        doc = Document(doc.artifact, tuple(_dedent(doc.lines)), doc.first_line, doc.command, doc.path_hint, doc.meta)
    cmd = doc.command or ""
    if cmd and _HELM_GET.match(cmd):
        return SURE
    head = doc.head(3)
    if head and _HEADER.match(head[0]):
        return SURE
    if any(map(_OBJECT_LINE.match, doc.lines[:200])):
        return NO  # a Kubernetes object: the generic object parser reads it
    if _no_top_key(doc.lines):
        return NO  # no top-level key: nothing below can score (_plugin_chart needs one)
    top = _top_keys(doc.lines)
    keys = top & OPERATOR_KEYS
    if len(keys) >= 2 or _plugin_chart(doc.lines, top):
        return LIKELY + 10
    return WEAK + 10 if keys & {"toolkit", "driver", "devicePlugin"} else NO


def _values_body(doc: Document) -> tuple[list[str], int, str | None]:
    """The YAML lines (header and grep separators blanked, a shared indentation removed, count kept), and the
    header kind."""
    lines = _dedent(doc.lines)
    kind = None
    for i, ln in enumerate(lines):
        if not ln.strip():
            continue
        m = _HEADER.match(ln)
        if m:
            kind = m.group("kind")
            lines[i] = ""
        break
    lines = ["" if ln.strip() == "--" else ln for ln in lines]
    return lines, doc.first_line, kind


@parser("helm.values", "helm get values (user-supplied / --all computed), GPU Operator and nvidia-device-plugin values files",
        sniff=sniff_values)
def parse_values(doc: Document) -> Iterable[HelmRelease]:
    import yaml
    lines, first, header = _values_body(doc)
    release, namespace, every = _release_from_command(doc.command or "") if doc.command else (None, None, False)
    partial = bool(doc.command and _PIPE_FILTER.search(doc.command))
    try:
        data, key_lines = load_yaml_with_lines(lines, first)
    except yaml.YAMLError:
        # a grep/head cut: read from the first top-level key on
        start = next((i for i, ln in enumerate(lines) if _TOP_KEY.match(ln)), None)
        if start is None or start == 0:
            raise UnusableData("Helm values are not valid YAML and no top-level key could be read") from None
        try:
            data, key_lines = load_yaml_with_lines(lines[start:], first + start)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {first + start + mark.line}" if mark else ""
            raise UnusableData(f"Helm values are not valid YAML{where}") from None
        partial = True
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UnusableData("Helm values are not a YAML mapping")
    computed = every or header == "COMPUTED"
    chart = "nvidia-device-plugin" if _plugin_chart(lines) else None
    install = _install_comment(lines)
    if install and install[2] == chart:
        release, namespace = release or install[0], namespace or install[1]
    source = "helm get values" + (" --all" if computed else "") if (doc.command or header) else "values file"
    yield HelmRelease(
        name=release,
        namespace=namespace,
        chart=chart,
        values=data if computed else None,
        user_values=None if computed else data,
        computed=computed,
        partial=partial,
        source=source,
        artifact=doc.artifact,
        key_lines=key_lines,
        evidence=doc.evidence(0),
    )


def sniff_list(doc: Document) -> int:
    head = doc.head(2)
    return SURE if head and _LIST_HEADER.match(head[0]) else NO


@parser("helm.list", "`helm list` table: release names, namespaces, chart versions, status", sniff=sniff_list)
def parse_list(doc: Document) -> Iterable[HelmRelease]:
    for i, ln in enumerate(doc.lines):
        m = _LIST_ROW.match(ln)
        if not m or _LIST_HEADER.match(ln):
            continue
        chart = _CHART_VERSION.match(m.group("chart"))
        yield HelmRelease(
            name=m.group("name"),
            namespace=m.group("ns"),
            chart=chart.group("name") if chart else m.group("chart"),
            chart_version=chart.group("version") if chart else None,
            app_version=m.group("app"),
            revision=int(m.group("rev")),
            status=m.group("status"),
            source="helm list",
            artifact=doc.artifact,
            evidence=doc.evidence(i),
        )


def sniff_release_secret(doc: Document) -> int:
    head = doc.lines[:400]
    blob = "\n".join(head)
    if "helm.sh/release.v1" not in blob and "sh.helm.release.v1." not in blob:
        return NO  # both answers below need one of them
    if any(map(_RELEASE_TYPE.search, head)):
        return SURE + 5  # ahead of the generic object parser: the release is decoded, nothing else is kept
    if any("sh.helm.release.v1." in ln for ln in head) and any("owner" in ln and "helm" in ln for ln in head):
        return SURE + 5
    return NO


def _b64(text: str) -> bytes:
    text = re.sub(r"\s+", "", text)
    return base64.b64decode(text + "=" * (-len(text) % 4))


def decode_release(helm_text: str) -> dict:
    """Helm's storage encoding (after the API's own base64 layer of a Secret is removed):
    base64 -> gzip (magic 1f 8b 08) -> JSON."""
    raw = _b64(helm_text)
    if raw[:3] == b"\x1f\x8b\x08":
        import gzip  # release secrets only

        raw = gzip.decompress(raw)
    return json.loads(raw)


def _mapping(value) -> dict:
    return value if isinstance(value, dict) else {}


def _items(data) -> list[dict]:
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        return [i for i in data["items"] if isinstance(i, dict)]
    return [data] if isinstance(data, dict) else []


def _line_of(doc: Document, needle: str) -> int:
    return next((i for i, ln in enumerate(doc.lines) if needle in ln), 0)


@parser("helm.release-secret", "Helm release Secrets/ConfigMaps (sh.helm.release.v1.*), decoded", sniff=sniff_release_secret)
def parse_release_secret(doc: Document) -> Iterable[HelmRelease]:
    import yaml
    try:
        docs = [d for d in safe_load_all(doc.text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise UnusableData(f"not valid YAML/JSON{f' at line {doc.lineno(mark.line)}' if mark else ''} (truncated paste?)") from None
    # group chunks: sh.helm.release.v1.REL.vN, sh.helm.release.v1.REL.vN.2, ... (tolerated MultiSecret layout)
    groups: dict[str, list[tuple[int, str, bool, dict]]] = {}
    for item in (i for d in docs for i in _items(d)):
        meta = _mapping(item.get("metadata"))
        name = str(meta.get("name") or "")
        m = _RELEASE_NAME.match(name)
        is_secret = item.get("kind") == "Secret" or item.get("type") == "helm.sh/release.v1"
        payload = _mapping(item.get("data")).get("release")
        if not m or not isinstance(payload, str):
            continue  # not a Helm release: its data is never looked at
        labels = _mapping(meta.get("labels"))
        chunk = int(m.group("chunk") or (str(labels.get("chunk")) if str(labels.get("chunk", "")).isdigit() else 1))
        groups.setdefault(m.group("base"), []).append((chunk, payload, is_secret, labels))
    latest: dict[tuple, HelmRelease] = {}
    skipped = []
    for base, parts in groups.items():
        parts.sort(key=lambda p: p[0])
        chunks = str(parts[0][3].get("chunks", ""))
        expected = int(chunks) if chunks.isdigit() else len(parts)
        if len(parts) < expected:
            skipped.append(f"{base}: {len(parts)} of {expected} chunks")
            continue
        try:
            # a Secret's data carries the API's base64 layer on top of Helm's; a ConfigMap's does not
            rel = decode_release("".join(_b64(p).decode("ascii") if secret else p for _, p, secret, _ in parts))
        except (binascii.Error, ValueError, OSError, EOFError, zlib.error, UnicodeDecodeError):
            skipped.append(f"{base}: release data does not decode")
            continue
        if not isinstance(rel, dict):
            skipped.append(f"{base}: release data is not a JSON object")
            continue
        chart = _mapping(rel.get("chart"))
        meta = _mapping(chart.get("metadata"))
        config = _mapping(rel.get("config"))
        info = _mapping(rel.get("info"))
        line = _line_of(doc, base)
        release = HelmRelease(
            name=rel.get("name"),
            namespace=rel.get("namespace"),
            chart=meta.get("name"),
            chart_version=meta.get("version"),
            app_version=meta.get("appVersion"),
            revision=rel.get("version"),
            status=info.get("status"),
            values=deep_merge(_mapping(chart.get("values")), config),
            user_values=config,
            computed=True,
            source="release secret",
            artifact=doc.artifact,
            evidence=Evidence(doc.artifact, doc.lineno(line), f"{base} (Helm release, decoded; status {info.get('status')})"),
        )
        key = (release.name, release.namespace)
        if key not in latest or (release.revision or 0) > (latest[key].revision or 0):
            latest[key] = release
    if not latest:
        raise UnusableData("no decodable Helm release" + (f" ({'; '.join(skipped)})" if skipped else ""))
    yield from latest.values()


# ----------------------------------------------------------------------------------------------- --set flags

_SET_FLAG = re.compile(r"""(?:^|\s)--(?P<kind>set|set-string|set-json)(?:=|\s+)(?P<arg>'[^']*'|"(?:[^"\\]|\\.)*"|\S+)""")
_HELM_CMD = re.compile(r"^\s*(?:\$\s+|#\s+)?(?:sudo\s+)?(?:microk8s\s+)?helm3?\s+(?:upgrade|install|template)\b")
_INDEX = re.compile(r"^(?P<key>[^\[\]]*)\[(?P<i>\d+)\]$")


def _command_lines(doc: Document) -> list[tuple[int, str]]:
    """(line number, text) of the helm command: the prompt's command line, then the lines that continue it."""
    out: list[tuple[int, str]] = []
    if doc.command and _HELM_CMD.match(doc.command):
        out.append((doc.first_line - 1, doc.command))
        if not _goes_on(doc.command, doc.lines[0] if doc.lines else None):
            return out  # the lines below are what the command printed
    for i, ln in enumerate(doc.lines):
        if not out and not _HELM_CMD.match(ln):
            if ln.strip():
                return []
            continue
        if out and not ln.strip():
            break
        out.append((doc.first_line + i, ln))
        if not _goes_on(ln, doc.lines[i + 1] if i + 1 < len(doc.lines) else None):
            break
    return out


def _goes_on(line: str, nxt: str | None) -> bool:
    """Whether the command on `line` continues on the next line (a trailing backslash, or a next line of flags)."""
    return line.rstrip().endswith("\\") or (nxt is not None and nxt.lstrip().startswith("--"))


def sniff_set_flags(doc: Document) -> int:
    lines = _command_lines(doc)
    if not lines:
        return NO
    text = " ".join(t for _, t in lines)
    return SURE if _SET_FLAG.search(text) else WEAK


def _split_assignments(arg: str) -> list[str]:
    """`a=1,b={x,y},c=d\\,e` -> ["a=1", "b={x,y}", "c=d,e"]: commas outside braces separate assignments."""
    out, cur, depth, i = [], "", 0, 0
    while i < len(arg):
        c = arg[i]
        if c == "\\" and i + 1 < len(arg):
            cur += arg[i + 1]
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur:
        out.append(cur)
    return out


def _typed(value: str, kind: str):
    """The value as Helm reads it: --set guesses bools, ints and null; --set-string never does; --set-json is JSON."""
    if kind == "set-json":
        try:
            return json.loads(value)
        except ValueError:
            return value
    if kind == "set-string":
        return value
    if value.startswith("{") and value.endswith("}"):
        return [_typed(v, kind) for v in _split_assignments(value[1:-1])]
    if value in ("true", "false"):
        return value == "true"
    if value == "null":
        return None
    if re.fullmatch(r"-?\d+", value) and not (len(value) > 1 and value.lstrip("-").startswith("0")):
        return int(value)
    return value


def _assign(root: dict, path: str, value) -> str | None:
    """Set a Helm path (`toolkit.env[0].name`) in nested values; the dotted key (`toolkit.env.0.name`), or None."""
    parts = re.split(r"(?<!\\)\.", path)
    cur = root
    dotted: list[str] = []
    for n, raw in enumerate(parts):
        part = raw.replace("\\.", ".")
        m = _INDEX.match(part)
        last = n == len(parts) - 1
        if m:
            key, i = m.group("key"), int(m.group("i"))
            if not isinstance(cur, dict) or i > 1000:
                return None
            lst = cur.setdefault(key, [])
            if not isinstance(lst, list):
                return None
            while len(lst) <= i:
                lst.append({})
            dotted += [key, str(i)]
            if last:
                lst[i] = value
            else:
                if not isinstance(lst[i], dict):
                    lst[i] = {}
                cur = lst[i]
            continue
        if not isinstance(cur, dict):
            return None
        dotted.append(part)
        if last:
            cur[part] = value
        else:
            nxt = cur.get(part)
            if not isinstance(nxt, dict):
                nxt = cur[part] = {}
            cur = nxt
    return ".".join(dotted)


def _release_of_command(text: str) -> tuple[str | None, str | None, str | None, str | None]:
    """(release, namespace, chart, chart version) of `helm install|upgrade REL CHART -n NS --version V`."""
    try:
        tokens = shlex.split(text.replace("\\\n", " ").replace("\\ ", " "))
    except ValueError:
        tokens = text.split()
    tokens = [t for t in tokens if t != "\\"]
    takes = {"-n", "--namespace", "-f", "--values", "--version", "--set", "--set-string", "--set-json", "--set-file",
             "--kube-context", "--kubeconfig", "--timeout", "--repo", "-o", "--output", "--description", "--post-renderer"}
    positional, namespace, version, i = [], None, None, 0
    while i < len(tokens):
        t = tokens[i]
        if t in ("-n", "--namespace") and i + 1 < len(tokens):
            namespace = tokens[i + 1]
        elif t == "--version" and i + 1 < len(tokens):
            version = tokens[i + 1]
        elif t.startswith("--namespace="):
            namespace = t.split("=", 1)[1]
        elif t.startswith("--version="):
            version = t.split("=", 1)[1]
        if t in takes:
            i += 2
            continue
        if not t.startswith("-"):
            positional.append(t)
        i += 1
    while positional and positional[0] in ("sudo", "microk8s", "$", "#"):
        positional.pop(0)
    args = positional[2:]  # after `helm install|upgrade`
    generate = "--generate-name" in tokens or "-g" in tokens
    release = None if generate or len(args) < 2 else args[0]
    chart_ref = args[0] if generate and args else args[1] if len(args) >= 2 else None
    chart = chart_ref.rstrip("/").rsplit("/", 1)[-1] if chart_ref else None
    return release, namespace, chart, version


@parser("helm.set-flags", "`helm install|upgrade ... --set/--set-string/--set-json` flags: the chart values they set, typed as Helm types them",
        sniff=sniff_set_flags)
def parse_set_flags(doc: Document) -> Iterable[HelmRelease]:
    lines = _command_lines(doc)
    if not lines:
        raise UnusableData("no helm install/upgrade command")
    values: dict = {}
    key_lines: dict[str, int] = {}
    for number, text in lines:
        for m in _SET_FLAG.finditer(text):
            arg = m.group("arg")
            if arg[:1] in ("'", '"') and arg[-1:] == arg[:1]:
                arg = arg[1:-1]
            for assignment in _split_assignments(arg) if m.group("kind") != "set-json" else [arg]:
                path, sep, value = assignment.partition("=")
                if not sep or not path:
                    continue
                dotted = _assign(values, path.strip(), _typed(value, m.group("kind")))
                if dotted:
                    key_lines[dotted] = number
                    parts = dotted.split(".")
                    for k in range(1, len(parts)):
                        key_lines.setdefault(".".join(parts[:k]), number)
    release, namespace, chart, version = _release_of_command("\n".join(t for _, t in lines))
    if not values and not release:
        raise UnusableData("a helm command without --set flags")
    first = lines[0][0]
    body = [ln for ln in parse_text(doc).lines if ln.line > lines[-1][0]] if lines[-1][0] < doc.first_line + len(doc.lines) - 1 else []
    if body:  # what helm printed after the command (`Error: INSTALLATION FAILED: ...`) is read as any paste's lines are
        yield ContainerLog(doc.artifact, tuple(body), kind="text")
    yield HelmRelease(
        name=release,
        namespace=namespace,
        chart=chart,
        chart_version=version,
        user_values=values,
        source="helm --set flags",
        artifact=doc.artifact,
        key_lines=key_lines,
        evidence=Evidence(doc.artifact, first, lines[0][1].strip()[:400]),
    )
