"""`kubectl get` output cut down by a pipe, where the command line says what the lines are.

- `kubectl get ds -n NS NAME -o yaml | yq '.spec.template.spec.tolerations'` (or `jq`, `-o json`): a
  sub-tree with no apiVersion/kind. It becomes a K8sObject of that kind/name/namespace with the fragment
  placed at the path the expression names, so `obj.get("spec.template.spec.tolerations")` and its key lines
  work as for a full object. Simple forms only: a plain path (`.spec.template.spec.tolerations`,
  `.metadata.labels`) and a path piped into an object of its own fields
  (`.spec.template.spec | {"affinity": .affinity, "tolerations": .tolerations}`); anything else stays
  unrecognised (a gap). A DaemonSet's fragment with tolerations also gives a DaemonSet with them.
- `kubectl get node NAME --show-labels | tr ',' '\\n'` (maybe `| grep ...`): one `key=value` per line,
  the node's labels.

Samples:

    $ kubectl get ds -n kube-system nvidia-device-plugin-node-feature-discovery-worker -o yaml | yq '.spec.template.spec.tolerations'
    - effect: NoSchedule
      key: nvidia.com/gpu
      operator: Equal
      value: present

    $ kubectl get node ip-172-31-9-210 --show-labels | tr ',' '\\n' | grep -E 'os_release|pci-10de'
    feature.node.kubernetes.io/pci-10de.present=true
"""

from __future__ import annotations

import re
import shlex
from typing import Iterable

from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.model.k8s import DaemonSet, K8sObject, Node
from gpusleuth.parsers.base import NO, SURE, parser
from gpusleuth.parsers.helm import load_yaml_with_lines

# kubectl resource names (and short names) -> kind
_KINDS = {
    "ds": "DaemonSet", "daemonset": "DaemonSet", "daemonsets": "DaemonSet", "daemonset.apps": "DaemonSet",
    "deploy": "Deployment", "deployment": "Deployment", "deployments": "Deployment",
    "po": "Pod", "pod": "Pod", "pods": "Pod", "no": "Node", "node": "Node", "nodes": "Node",
    "cm": "ConfigMap", "configmap": "ConfigMap", "configmaps": "ConfigMap",
    "sts": "StatefulSet", "statefulset": "StatefulSet", "statefulsets": "StatefulSet",
    "clusterpolicy": "ClusterPolicy", "clusterpolicies": "ClusterPolicy",
}
_PATH = r"(?:\.[A-Za-z_][\w-]*)+"
_PLAIN = re.compile(rf"^\s*(?P<path>{_PATH})\s*$")
_PROJECTION = re.compile(rf"^\s*(?P<path>{_PATH})\s*\|\s*\{{(?P<fields>[^{{}}]*)\}}\s*$")
_FIELD = re.compile(r'^\s*"?(?P<key>[A-Za-z_][\w-]*)"?\s*:\s*\.(?P<src>[A-Za-z_][\w-]*)\s*$')
_LABEL = re.compile(r"^(?P<key>[A-Za-z0-9][\w./-]*)=(?P<value>[\w.-]*)$")


def _get_target(segment: str) -> tuple[str, str, str | None] | None:
    """(kind, name, namespace) of `kubectl get <kind> <name>` (or `<kind>/<name>`) in a pipeline segment."""
    try:
        tokens = shlex.split(segment)
    except ValueError:
        return None
    if not tokens or tokens[0] not in ("kubectl", "k", "oc") or "get" not in tokens:
        return None
    positional, namespace, i = [], None, tokens.index("get") + 1
    while i < len(tokens):
        t = tokens[i]
        if t in ("-n", "--namespace", "-o", "--output", "-l", "--selector", "--context", "--kubeconfig") and i + 1 < len(tokens):
            if t in ("-n", "--namespace"):
                namespace = tokens[i + 1]
            i += 2
            continue
        if t.startswith("--namespace="):
            namespace = t.split("=", 1)[1]
        elif not t.startswith("-"):
            positional.append(t)
        i += 1
    if len(positional) == 1 and "/" in positional[0]:
        positional = positional[0].split("/", 1)
    if len(positional) != 2 or positional[0].lower() not in _KINDS:
        return None
    return _KINDS[positional[0].lower()], positional[1], namespace


def _expression(cmd: str) -> tuple[tuple[str, str, str | None], str] | None:
    """(target, yq/jq expression) of `kubectl get KIND NAME -o yaml|json | yq|jq 'EXPR'`, one pipe only."""
    parts = cmd.split("|", 1)
    if len(parts) != 2 or not re.search(r"\s-o\s*(?:yaml|json)\b|--output[= ](?:yaml|json)\b", parts[0]):
        return None
    target = _get_target(parts[0])
    if target is None:
        return None
    try:
        tokens = shlex.split(parts[1])
    except ValueError:
        return None
    if not tokens or tokens[0] not in ("yq", "jq"):
        return None
    args = [t for t in tokens[1:] if not t.startswith("-") and t not in ("e", "eval")]
    return (target, args[0]) if len(args) == 1 else None


def _placement(expr: str) -> tuple[list[str], dict[str, str] | None] | None:
    """(path, {output key: source field} for a projection, or None) of a supported expression."""
    m = _PLAIN.match(expr)
    if m:
        return m.group("path").split(".")[1:], None
    m = _PROJECTION.match(expr)
    if not m:
        return None
    fields = {}
    for part in m.group("fields").split(","):
        f = _FIELD.match(part)
        if not f:
            return None
        fields[f.group("key")] = f.group("src")
    return m.group("path").split(".")[1:], fields


def _fragment(doc: Document):
    found = _expression(doc.command or "")
    if found is None:
        return None
    placement = _placement(found[1])
    return (found[0], *placement) if placement else None


def sniff_fragment(doc: Document) -> int:
    return SURE if _fragment(doc) else NO


@parser("kubectl.yq-fragment", "`kubectl get KIND NAME -o yaml | yq '.path'` fragments (a sub-tree of one object)", sniff=sniff_fragment)
def parse_fragment(doc: Document) -> Iterable:
    import yaml
    (kind, name, namespace), path, fields = _fragment(doc)
    try:
        value, lines = load_yaml_with_lines(list(doc.lines), doc.first_line)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise UnusableData(f"the yq/jq output is not valid YAML/JSON{f' at line {doc.lineno(mark.line)}' if mark else ''}") from None
    if value is None or value == "null":
        raise UnusableData(f"yq/jq printed nothing for {'.'.join(path)} of {kind} {name}")
    if fields is not None and isinstance(value, dict):
        # `{"affinity": .affinity}` renames nothing in the simple form; a renamed key is put back under its source name
        renamed = {fields.get(k, k): v for k, v in value.items() if v is not None}
        lines = {".".join([fields.get(p.split(".")[0], p.split(".")[0]), *p.split(".")[1:]]): n for p, n in lines.items()}
        value = renamed
    body: object = value
    for part in reversed(path):
        body = {part: body}
    prefix = ".".join(path)
    key_lines = {f"{prefix}.{p.lstrip('.')}": n for p, n in lines.items()}  # a list's items come as ".0"
    key_lines.setdefault(prefix, doc.first_line)
    body = {"kind": kind, "metadata": {"name": name, **({"namespace": namespace} if namespace else {})}, **body}
    obj = K8sObject(kind=kind, name=name, namespace=namespace, body=body, artifact=doc.artifact, line=doc.first_line,
                    key_lines=key_lines)
    tolerations = obj.get("spec.template.spec.tolerations")
    if kind == "DaemonSet" and isinstance(tolerations, list) and tolerations:
        first = key_lines.get("spec.template.spec.tolerations.0", doc.first_line) - doc.first_line
        yield DaemonSet(name=name, namespace=namespace, tolerations=tuple(t for t in tolerations if isinstance(t, dict)),
                        evidence=doc.evidence(first), tolerations_evidence=doc.evidence(first))
    yield obj


_SHOW_LABELS = re.compile(r"\bget\s+(?:nodes?|no)(?:\s+|/)(?P<node>[a-z0-9][\w.-]*)\b.*--show-labels.*\|\s*tr\s+['\"]?,['\"]?\s+['\"]?\\n")


def sniff_labels(doc: Document) -> int:
    if not _SHOW_LABELS.search(doc.command or ""):
        return NO
    return SURE if any(_LABEL.match(ln.split()[-1]) for ln in doc.head(5)) else NO


@parser("kubectl.show-labels-lines", "`kubectl get node NAME --show-labels | tr ',' '\\n'`: one label per line", sniff=sniff_labels)
def parse_labels(doc: Document) -> Iterable[Node]:
    node = _SHOW_LABELS.search(doc.command).group("node")
    labels, evidence = {}, {}
    for i, ln in enumerate(doc.lines):
        m = _LABEL.match(ln.split()[-1]) if ln.strip() else None  # the row's first label follows its columns
        if m:
            labels[m.group("key")] = m.group("value")
            evidence[f"label:{m.group('key')}"] = doc.evidence(i)
    if not labels:
        raise UnusableData(f"no key=value label line for node {node}")
    yield Node(name=node, labels=labels, evidence=evidence, artifact=doc.artifact)
