"""The cluster as all artifacts together describe it: pods, nodes, events, daemonsets, merged.

The same pod may appear in a `get pods` table, a `describe`, and a JSON list; each view fills the fields
it has. Tables without a NAMESPACE column match by name. Pasted fragments that never show their object's
name are attributed only on evidence (a node fragment when the artifacts know of a single node); the rest
are kept apart in `fragments` and said so in the gaps. A pod with no node shown is placed by its Scheduled
event. A pod's owning DaemonSet, when no artifact states it,
is taken from a DaemonSet of that name seen in the artifacts or from the controller's "Created pod" event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.model.finding import Gap
from gpusleuth.model.k8s import ContainerStatus, DaemonSet, Event, Node, NodeCondition, Pod, Taint
from gpusleuth.parsers.k8s_common import daemonset_base

GPU_RESOURCE = "nvidia.com/gpu"


# Items of a tuple field that describe the same thing in two views of one object.
_IDENTITY = {ContainerStatus: lambda c: c.name, NodeCondition: lambda c: c.type, Taint: lambda t: (t.key, t.effect)}
_EMPTY = (None, "", (), {})


def _merge(a, b):
    """Fill a's empty fields from b (same type); a wins on conflicts. Dicts are unioned (a's keys win);
    containers, conditions and taints are merged one by one on their name/type/key, so a table's lone Ready
    condition and a describe's full list become one list; other tuples are unioned in order."""
    changes = {}
    for f in fields(a):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if vb in _EMPTY or va is vb:
            continue
        if va in _EMPTY:
            changes[f.name] = vb
        elif isinstance(va, dict) and isinstance(vb, dict):
            merged = {**vb, **va}
            if merged != va:
                changes[f.name] = merged
        elif isinstance(va, tuple) and isinstance(vb, tuple):
            merged_items = _merge_items(va, vb)
            if merged_items != va:
                changes[f.name] = merged_items
    return replace(a, **changes) if changes else a


def _merge_items(va: tuple, vb: tuple) -> tuple:
    ident = _IDENTITY.get(type(va[0]))
    if ident is None:
        return va + tuple(x for x in vb if x not in va)
    others = {ident(x): x for x in vb if ident(x) is not None}
    mine = {ident(x) for x in va}
    merged = [_merge(x, others[ident(x)]) if ident(x) in others else x for x in va]
    return tuple(merged) + tuple(x for x in vb if ident(x) is None or ident(x) not in mine)


@dataclass
class Cluster:
    pods: list[Pod] = field(default_factory=list)
    nodes: dict[str, Node] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    daemonsets: list[DaemonSet] = field(default_factory=list)
    fragments: list = field(default_factory=list)  # pods/nodes from pasted fragments whose name is unknown
    # Indexes built on first use and rebuilt when the lists change (checks look pods and events up per pod
    # and per line: a scan per lookup made fleet-size inputs quadratic).
    _index: dict = field(default_factory=dict, repr=False, compare=False)

    def _indexed(self, what: str, items: list, key) -> dict:
        stamp = (id(items), len(items))
        hit = self._index.get(what)
        if hit is None or hit[0] != stamp:
            table: dict = {}
            for x in items:
                table.setdefault(key(x), []).append(x)
            hit = self._index[what] = (stamp, table)
        return hit[1]

    def pod(self, name: str) -> Pod | None:
        same = self._indexed("pod", self.pods, lambda p: p.name).get(name)
        return same[0] if same else None

    def pods_on(self, node: str) -> list[Pod]:
        return list(self._indexed("node", self.pods, lambda p: p.node).get(node, ()))

    def events_for(self, name: str) -> list[Event]:
        """Events whose object is this pod/node (by name), or whose message names it."""
        if name is None:
            return []
        return list(self._indexed("event", self.events, lambda e: e.object.rsplit("/", 1)[-1] if e.object else None).get(name, ()))

    def gpu_pods(self) -> list[Pod]:
        return [p for p in self.pods if (p.gpu_request or 0) > 0 or any(k.startswith("nvidia.com/") for k in p.resource_requests)]

    def node_names(self) -> list[str]:
        names = set(self.nodes)
        names.update(p.node for p in self.pods if p.node)
        return sorted(names)


_HEALTHY = frozenset({"Running", "Completed", "Succeeded"})


def pod_is_healthy(p: Pod) -> bool:
    """Running with every container ready, or finished well: what a pod that works looks like."""
    status = p.status or p.phase
    if status not in _HEALTHY:
        return False
    if p.ready and "/" in p.ready:
        have, want = p.ready.split("/", 1)
        if status == "Running" and have != want:
            return False
    return not any(c.reason for c in p.containers if c.state == "waiting")


@combiner(Cluster)
def build_cluster(facts: Facts) -> Cluster:
    fragments: list = [p for p in facts.all(Pod) if p.name is None]
    pods = _merge_by_name([p for p in facts.all(Pod) if p.name is not None])
    dss = _merge_by_name(facts.all(DaemonSet))
    events = _merge_events(facts.all(Event))
    pods = _place_pods(pods, events)
    nodes: dict[str, Node] = {}
    for n in facts.all(Node):
        if n.name is not None:
            nodes[n.name] = _merge(nodes[n.name], n) if n.name in nodes else n
    known = set(nodes) | {p.node for p in pods if p.node} | {e.node for e in events if e.node}
    for n in facts.all(Node):
        if n.name is None and len(known) == 1:  # the only node the artifacts know of: it can only be about it
            n = replace(n, name=next(iter(known)))
            nodes[n.name] = _merge(nodes[n.name], n) if n.name in nodes else n
        elif n.name is None:
            fragments.append(n)
    for f in fragments:
        facts.gaps.append(_fragment_gap(f, len(known)))
    cluster = Cluster(_resolve_owners(pods, dss, events), nodes, events, dss, fragments)
    if not (cluster.pods or cluster.nodes or cluster.events or cluster.daemonsets or cluster.fragments):
        raise NotApplicable("no Kubernetes objects (pods, nodes, events, daemonsets) in the artifacts")
    return cluster


def _fragment_gap(f: Pod | Node, known_nodes: int) -> Gap:
    if isinstance(f, Pod):
        where = f.evidence.cite() if f.evidence else None
        return Gap("pod", "a pasted `describe` fragment shows a pod without its name; kept, not attributed", where)
    ev = next(iter(f.evidence.values()), None)
    seen = f"the artifacts name {known_nodes} nodes" if known_nodes else "no node is named anywhere in the artifacts"
    return Gap("node", f"a pasted `describe` fragment shows a node without its name ({seen}); kept, not attributed", ev.cite() if ev else f.artifact)


def _merge_by_name(objs: list) -> list:
    """One object per (namespace, name) for pods and daemonsets; one seen without a namespace (a table
    without NAMESPACE column, a must-gather `.status` file) joins the namespaced one of that name."""
    out: dict[tuple, object] = {}
    by_name: dict[str, tuple] = {}
    for o in objs:
        key = (o.namespace, o.name)
        if key not in out and o.namespace is None and o.name in by_name:
            key = by_name[o.name]
        elif key not in out and o.namespace is not None and (None, o.name) in out:
            out[key] = _merge(out.pop((None, o.name)), o)
            by_name[o.name] = key
            continue
        out[key] = _merge(out[key], o) if key in out else o
        by_name.setdefault(o.name, key)
    return list(out.values())


def _merge_events(all_events: list[Event]) -> list[Event]:
    """The same event read from a table, a describe and JSON is one event (same object, reason, message)."""
    out: dict[tuple, Event] = {}
    for e in all_events:
        key = (e.object.rsplit("/", 1)[-1] if e.object else None, e.reason, e.message)
        out[key] = _merge(out[key], e) if key in out else e
    return list(out.values())


_ASSIGNED = re.compile(r"^Successfully assigned (?:(?P<ns>[^/\s]+)/)?(?P<pod>\S+) to (?P<node>\S+)$")


def _place_pods(pods: list[Pod], events: list[Event]) -> list[Pod]:
    """A pod whose node no artifact printed (a `get pods` without -o wide, a describe cut to its events)
    is on the node its Scheduled event assigned it to: "Successfully assigned <ns>/<pod> to <node>"."""
    assigned: dict[tuple, str] = {}
    for e in events:
        m = _ASSIGNED.match(e.message.strip()) if e.reason == "Scheduled" else None
        if m:
            assigned[(m.group("ns"), m.group("pod"))] = m.group("node")
            assigned.setdefault((None, m.group("pod")), m.group("node"))
    if not assigned:
        return pods
    out = []
    for p in pods:
        node = assigned.get((p.namespace, p.name)) or assigned.get((None, p.name))
        out.append(replace(p, node=node) if p.node is None and node else p)
    return out


def _resolve_owners(pods: list[Pod], dss: list[DaemonSet], events: list[Event]) -> list[Pod]:
    """Owner DaemonSet for pods whose artifacts do not state it, from evidence only: the DaemonSet
    controller's "Created pod: <name>" event, or a DaemonSet in the same namespace named like the pod
    without its generated suffix (a Job's pods have the same suffix shape, so a name alone never decides)."""
    created = {}
    for e in events:
        if e.reason == "SuccessfulCreate" and e.object and e.object.startswith("daemonset/") and e.message.startswith("Created pod: "):
            created[e.message[len("Created pod: ") :].strip()] = e.object.split("/", 1)[1]
    namespaces: dict[str, set] = {}
    for d in dss:
        namespaces.setdefault(d.name, set()).add(d.namespace)
    out = []
    for p in pods:
        if p.owner is None:
            base = daemonset_base(p.name)
            if p.name in created:
                p = replace(p, owner=f"DaemonSet/{created[p.name]}")
            elif base in namespaces and (p.namespace is None or namespaces[base] & {None, p.namespace}):
                p = replace(p, owner=f"DaemonSet/{base}")
        out.append(p)
    return out
