"""The cluster as all artifacts together describe it: pods, nodes, events, daemonsets, merged.

The same pod may appear in a `get pods` table, a `describe`, and a JSON list; each view fills the fields
it has. Tables without a NAMESPACE column match by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.model.k8s import DaemonSet, Event, Node, Pod

GPU_RESOURCE = "nvidia.com/gpu"


def _merge(a, b):
    """Fill a's empty fields from b (same type); collections are unioned, a wins on conflicts."""
    changes = {}
    for f in fields(a):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if va in (None, "", (), {}) and vb not in (None, "", (), {}):
            changes[f.name] = vb
        elif isinstance(va, dict) and isinstance(vb, dict) and vb:
            changes[f.name] = {**vb, **va}
    if isinstance(a, Pod) and a.containers and b.containers:
        known = lambda cs: (sum(1 for c in cs if c.state), len(cs))  # noqa: E731
        base, other = (a.containers, b.containers) if known(a.containers) >= known(b.containers) else (b.containers, a.containers)
        names = {c.name for c in base}
        changes["containers"] = tuple(base) + tuple(c for c in other if c.name not in names)
    return replace(a, **changes) if changes else a


@dataclass
class Cluster:
    pods: list[Pod] = field(default_factory=list)
    nodes: dict[str, Node] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    daemonsets: list[DaemonSet] = field(default_factory=list)

    def pod(self, name: str) -> Pod | None:
        return next((p for p in self.pods if p.name == name), None)

    def pods_on(self, node: str) -> list[Pod]:
        return [p for p in self.pods if p.node == node]

    def events_for(self, name: str) -> list[Event]:
        """Events whose object is this pod/node (by name), or whose message names it."""
        return [e for e in self.events if e.object and e.object.rsplit("/", 1)[-1] == name]

    def gpu_pods(self) -> list[Pod]:
        return [p for p in self.pods if (p.gpu_request or 0) > 0 or any(k.startswith("nvidia.com/") for k in p.resource_requests)]

    def namespace_of(self, pod: Pod) -> str | None:
        return pod.namespace

    def node_names(self) -> list[str]:
        names = set(self.nodes)
        names.update(p.node for p in self.pods if p.node)
        return sorted(names)


@combiner(Cluster)
def build_cluster(facts: Facts) -> Cluster:
    pods: dict[tuple, Pod] = {}
    by_name: dict[str, tuple] = {}
    for p in facts.all(Pod):
        key = (p.namespace, p.name)
        if key not in pods and p.namespace is None and p.name in by_name:
            key = by_name[p.name]
        elif key not in pods and p.namespace is not None and (None, p.name) in pods:
            pods[key] = _merge(p, pods.pop((None, p.name)))
            by_name[p.name] = key
            continue
        pods[key] = _merge(pods[key], p) if key in pods else p
        by_name.setdefault(p.name, key)
    nodes: dict[str, Node] = {}
    for n in facts.all(Node):
        nodes[n.name] = _merge(nodes[n.name], n) if n.name in nodes else n
    events, seen = [], set()
    for e in facts.all(Event):
        k = (e.object, e.reason, e.message, e.age)
        if k not in seen:
            seen.add(k)
            events.append(e)
    dss: dict[tuple, DaemonSet] = {}
    for d in facts.all(DaemonSet):
        k = (d.namespace, d.name)
        dss[k] = _merge(dss[k], d) if k in dss else d
    cluster = Cluster(list(pods.values()), nodes, events, list(dss.values()))
    if not (cluster.pods or cluster.nodes or cluster.events or cluster.daemonsets):
        raise NotApplicable("no Kubernetes objects (pods, nodes, events, daemonsets) in the artifacts")
    return cluster
