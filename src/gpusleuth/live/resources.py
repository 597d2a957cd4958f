"""The API resources gpusleuth reads or serves: kind <-> group/version/plural/scope, and their REST paths.

Pure data, no client library: the collector, ``serve`` and the bundle layout all use this one table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Resource:
    kind: str
    group: str  # "" for the core group
    version: str
    plural: str
    namespaced: bool
    short: tuple[str, ...] = ()  # kubectl short names, for discovery

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    @property
    def qualified(self) -> str:
        """`pods`, `daemonsets.apps`, `clusterpolicies.nvidia.com`: the name kubectl and the bundle use."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str | None = None, name: str | None = None, sub: str | None = None) -> str:
        parts = [self.prefix]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{namespace}")
        parts.append(self.plural)
        if name:
            parts.append(name)
            if sub:
                parts.append(sub)
        return "/".join(parts)


RESOURCES: tuple[Resource, ...] = (
    Resource("Namespace", "", "v1", "namespaces", False, ("ns",)),
    Resource("Node", "", "v1", "nodes", False, ("no",)),
    Resource("Pod", "", "v1", "pods", True, ("po",)),
    Resource("Event", "", "v1", "events", True, ("ev",)),
    Resource("ConfigMap", "", "v1", "configmaps", True, ("cm",)),
    Resource("Secret", "", "v1", "secrets", True),
    Resource("DaemonSet", "apps", "v1", "daemonsets", True, ("ds",)),
    Resource("Deployment", "apps", "v1", "deployments", True, ("deploy",)),
    Resource("RuntimeClass", "node.k8s.io", "v1", "runtimeclasses", False),
    Resource("ClusterPolicy", "nvidia.com", "v1", "clusterpolicies", False),
    Resource("NVIDIADriver", "nvidia.com", "v1alpha1", "nvidiadrivers", False),
    Resource("NicClusterPolicy", "mellanox.com", "v1alpha1", "nicclusterpolicies", False),
)
BY_KIND = {r.kind: r for r in RESOURCES}


def resource_for(api_version: str | None, kind: str) -> Resource:
    """The table's row, or a best guess for a kind it does not know (lowercase plural, namespaced)."""
    known = BY_KIND.get(kind)
    if known and (api_version is None or api_version == known.api_version):
        return known
    group, _, version = (api_version or "v1").rpartition("/")
    plural = kind.lower() + ("es" if kind.lower().endswith("s") else "s")
    return Resource(kind, group, version, plural, True)
