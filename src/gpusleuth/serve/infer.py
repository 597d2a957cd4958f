"""Labels and fields a served object lacks only because its source never recorded them.

A `kubectl get pods` table, a describe or a log names a pod but not always its labels, its node or its
owner. Real clients find objects by those: NVIDIA's GPU Operator must-gather script starts with
`kubectl get pods -lapp=gpu-operator -A`, skips pods whose labels do not mention nvidia/gpu, and finds
driver pods by `-lapp.kubernetes.io/component=nvidia-driver`. So where the source recorded NO labels for an
operand pod or DaemonSet (knowledge/operands.toml says which operand a name belongs to), it gets the
operand's `app_labels`; a pod without owner gets the owner its name implies (DaemonSet `<ds>-xxxxx`, ReplicaSet `<rs>-xxxxx` of
a Deployment); a node without labels gets those the kubelet always sets, and the GPU ones when GPU
operands deployed only on GPU nodes run on it (with their nvidia.com/gpu.deploy.* gates) or it advertises
nvidia.com/gpu.

Labels a source DID record are never changed or added to: the source is what the cluster said. Every
object changed here says what was inferred in the annotation ``gpusleuth.io/inferred`` (comma-separated:
label keys as ``label:KEY``, fields as dotted paths), and serve's notes say how many.

A pod's node is NOT guessed (say, as the only GPU node): a pod the source placed nowhere is diagnosed on no
node, and serving it on one would make `collect` + `diagnose` tell a different story than the source.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache

from gpusleuth.knowledge import table
from gpusleuth.live.resources import BY_KIND

ANNOTATION = "gpusleuth.io/inferred"
_GPU_NODE_LABELS = {"nvidia.com/gpu.present": "true", "feature.node.kubernetes.io/pci-10de.present": "true"}


@dataclass(frozen=True)
class Operand:
    name: str
    kind: str
    operator: str
    pattern: re.Pattern
    labels: tuple[tuple[str, str], ...]
    node_selector: tuple[tuple[str, str], ...] = ()  # gate labels of the nodes it is deployed on

    @property
    def gpu_nodes_only(self) -> bool:
        return any(k.startswith("nvidia.com/gpu.deploy.") for k, _ in self.node_selector)


@cache
def operands() -> tuple[Operand, ...]:
    out = []
    for c in table("operands").get("component", []):
        if not c.get("pod_name_patterns"):
            continue
        labels = []
        for kv in c.get("app_labels", ()):
            k, eq, v = kv.partition("=")
            if eq and "<" not in kv:  # "<release>" placeholders: the real value is not known
                labels.append((k, v))
        selector = tuple(tuple(kv.split("=", 1)) for kv in c.get("node_selector", ()) if "=" in kv and "<" not in kv)
        out.append(Operand(c["name"], c.get("kind", ""), c.get("operator", ""), re.compile("|".join(c["pod_name_patterns"])), tuple(labels),
                           selector))
    return tuple(out)


def operand_of_pod(name: str) -> Operand | None:
    return next((o for o in operands() if o.pattern.search(name)), None)


def operand_of_controller(kind: str, name: str) -> Operand | None:
    """The operand a DaemonSet or Deployment named NAME runs: the one its pods' names would belong to."""
    pod = f"{name}-xxxxx" if kind == "DaemonSet" else f"{name}-5d4f8b9c7d-xxxxx"
    return next((o for o in operands() if o.kind == kind and o.pattern.search(pod)), None)


def _unambiguous(op: Operand, pod: str) -> dict[str, str]:
    """The operand's labels, less any that gpusleuth's own operand matching (facts/operands.py, first row with
    ANY label in common) would read as another operand's: NFD's worker and gc share
    app.kubernetes.io/name=node-feature-discovery with the master. Nothing is inferred that changes which
    operand a pod is diagnosed as."""
    from gpusleuth.facts.operands import spec_for
    from gpusleuth.model.k8s import Pod

    labels = dict(op.labels)
    spec = spec_for(Pod(name=pod, labels=labels))
    if spec is None or spec.name == op.name:
        return labels
    others = {kv for o in operands() if o.name != op.name for kv in o.labels}
    return {k: v for k, v in labels.items() if (k, v) not in others}


def _uid(*parts) -> str:
    h = hashlib.sha1("/".join(str(p) for p in parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _mark(meta: dict, what: list[str]) -> None:
    ann = meta.setdefault("annotations", {})
    before = [w for w in (ann.get(ANNOTATION) or "").split(",") if w]
    ann[ANNOTATION] = ",".join(before + [w for w in what if w not in before])


def complete(store) -> list[str]:
    """Fill in what the store's objects lack (see the module doc); returns serve's notes about it."""
    counts: dict[str, int] = {}

    def count(what: str) -> None:
        counts[what] = counts.get(what, 0) + 1

    pod_res, ds_res, node_res = BY_KIND["Pod"], BY_KIND["DaemonSet"], BY_KIND["Node"]
    nodes = store.items(node_res)
    pods = store.items(pod_res)
    gates: dict[str, dict[str, str]] = {}  # node -> the deploy labels of the GPU operands that run there
    for p in pods:
        op, host = operand_of_pod(p["metadata"]["name"]), (p.get("spec") or {}).get("nodeName")
        if op is not None and host and op.gpu_nodes_only:
            gates.setdefault(host, {}).update(op.node_selector)
    for node in nodes:
        meta = node.setdefault("metadata", {})
        if meta.get("labels"):
            continue
        name = meta.get("name")
        added = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
        arch = ((node.get("status") or {}).get("nodeInfo") or {}).get("architecture")
        if arch:
            added["kubernetes.io/arch"] = arch
        if name in gates or any(k.startswith("nvidia.com/gpu") for k in ((node.get("status") or {}).get("capacity") or {})):
            added.update(_GPU_NODE_LABELS)
            added.update(gates.get(name, {}))
        meta["labels"] = added
        _mark(meta, [f"label:{k}" for k in added])
        count("node labels")

    for pod in pods:
        meta, spec = pod.setdefault("metadata", {}), pod.setdefault("spec", {})
        name, ns = meta.get("name", ""), meta.get("namespace")
        if meta.get("labels", {}).get("app.kubernetes.io/managed-by") == "gpusleuth":
            continue
        op = operand_of_pod(name)
        if op is None:
            continue
        what = []
        labels = _unambiguous(op, name)
        if not meta.get("labels") and labels:
            meta["labels"] = labels
            what += [f"label:{k}" for k in labels]
            count("pod labels")
        if not meta.get("ownerReferences") and op.kind in ("DaemonSet", "Deployment"):
            m = re.fullmatch(r"(?P<owner>.+)-[a-z0-9]{5}", name)
            if m:
                kind = "DaemonSet" if op.kind == "DaemonSet" else "ReplicaSet"
                owner = m.group("owner")
                meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": owner, "uid": _uid(ns, kind, owner),
                                            "controller": True, "blockOwnerDeletion": True}]
                what.append("metadata.ownerReferences")
                count("pod owners")
        if what:
            _mark(meta, what)

    for ds in store.items(ds_res):
        meta = ds.setdefault("metadata", {})
        op = operand_of_controller("DaemonSet", meta.get("name", ""))
        if op is None or not op.labels or meta.get("labels"):
            continue
        meta["labels"] = dict(op.labels)
        what = [f"label:{k}" for k, _ in op.labels]
        spec = ds.setdefault("spec", {})
        template = spec.setdefault("template", {}).setdefault("metadata", {})
        if template.get("labels") == {"app": meta["name"]} or not template.get("labels"):  # what synth made up, not what was recorded
            template["labels"] = dict(op.labels)
            spec["selector"] = {"matchLabels": dict(op.labels)}
            what += ["spec.selector", "spec.template.metadata.labels"]
        _mark(meta, what)
        count("DaemonSet labels")
    if not counts:
        return []
    done = ", ".join(f"{n} {what}" for what, n in counts.items())
    note = (f"inferred what the source did not record ({done}), from the operand table; each such object names them in its "
            f"{ANNOTATION} annotation")
    return [note]
