"""The GPU Operator's configuration: its Helm release (list, values, release Secret) and ClusterPolicy,
merged, each setting with where it was read; and the Network Operator's NicClusterPolicy beside it.

The ClusterPolicy is what the operator acts on; Helm values are what the next `helm upgrade` writes into
it. A setting is read from the ClusterPolicy when one was given, else from the Helm values (computed
values include the chart defaults; user-supplied values only what was overridden). Where the two
disagree both are kept, so a check can say that an upgrade will undo a hand edit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.k8s import K8sObject
from gpusleuth.model.runtime import HelmRelease
from gpusleuth.parsers.helm import OPERATOR_KEYS

CHART = "gpu-operator"
DEFAULT_POLICY_NAME = "cluster-policy"  # deployments/gpu-operator/templates/clusterpolicy.yaml
# `helm install --generate-name nvidia/gpu-operator` names releases gpu-operator-<unix time>; their
# NFD subchart pods carry the release name.
_GENERATED_RELEASE = re.compile(r"^(?P<rel>gpu-operator(?:-\d{10})?)-node-feature-discovery-")


@dataclass(frozen=True, slots=True)
class Setting:
    path: str  # "toolkit.env.CONTAINERD_CONFIG", "cdi.enabled"
    value: object
    source: str  # "ClusterPolicy cluster-policy", "Helm values of gpu-operator-1758912452", "chart default"
    evidence: Evidence | None
    explicit: bool = True  # False: not set anywhere we could see; value is None or a default


def truthy(value) -> bool | None:
    """Helm/ClusterPolicy booleans arrive as bools or as the strings "true"/"false"."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def is_operator_release(rel: HelmRelease) -> bool:
    if rel.chart:
        return rel.chart == CHART
    values = rel.values if rel.values is not None else rel.user_values
    if isinstance(values, dict) and _toolkit_env_only(values):
        return True
    return bool(isinstance(values, dict) and len(set(values) & OPERATOR_KEYS) >= 2) or bool(rel.name and rel.name.startswith(CHART))


def _toolkit_env_only(values: dict) -> bool:
    """A values file that sets just the toolkit's containerd env (the usual K3s/RKE2 paste) is the
    operator's: no other chart has toolkit.env with CONTAINERD_* entries."""
    env = (values.get("toolkit") or {}).get("env") if isinstance(values.get("toolkit"), dict) else None
    return isinstance(env, list) and any(isinstance(e, dict) and str(e.get("name", "")).startswith("CONTAINERD_") for e in env)


@dataclass
class Configuration:
    release: HelmRelease | None = None  # the GPU Operator release, names merged from every artifact
    values_docs: list[HelmRelease] = field(default_factory=list)  # its values artifacts, computed first
    cluster_policy: K8sObject | None = None
    releases: list[HelmRelease] = field(default_factory=list)  # every release seen
    nic_cluster_policy: K8sObject | None = None  # the Network Operator's (ofedDriver, rdmaSharedDevicePlugin, ...)

    @property
    def policy_name(self) -> str:
        return (self.cluster_policy.name if self.cluster_policy and self.cluster_policy.name else DEFAULT_POLICY_NAME)

    def _helm(self, path: str) -> Setting | None:
        """The Helm value at a dotted path, cited at the line that sets it (user values first)."""
        ordered = sorted(self.values_docs, key=lambda r: (r.computed, r.partial))
        for rel in ordered:
            if path in rel.key_lines:
                return Setting(path, rel.get(path), self._helm_source(rel), rel.cite(path))
        for rel in self.values_docs:
            if rel.computed and not rel.partial:
                return Setting(path, None, f"{self._helm_source(rel)} (not set)", rel.cite(path), explicit=False)
        return None

    def _helm_source(self, rel: HelmRelease) -> str:
        name = rel.name or (self.release.name if self.release else None)
        what = "computed Helm values" if rel.computed else "Helm values"
        return f"{what} of {name}" if name else f"{what} ({rel.artifact})"

    def _policy(self, path: str) -> Setting | None:
        cp = self.cluster_policy
        if cp is None:
            return None
        value = cp.get(f"spec.{path}")
        if value is None:
            return None
        return Setting(path, value, f"ClusterPolicy {self.policy_name}", cp.evidence(f"spec.{path}"))

    def nic_setting(self, path: str) -> Setting | None:
        """A NicClusterPolicy spec value (`ofedDriver.version`), cited at its line."""
        ncp = self.nic_cluster_policy
        value = ncp.get(f"spec.{path}") if ncp else None
        if value is None:
            return None
        return Setting(path, value, f"NicClusterPolicy {ncp.name}", ncp.evidence(f"spec.{path}"))

    def setting(self, path: str) -> Setting | None:
        """The value the operator uses, ClusterPolicy first; None when no artifact speaks of it."""
        return self._policy(path) or self._helm(path)

    def enabled(self, path: str) -> bool | None:
        s = self.setting(path)
        return truthy(s.value) if s else None

    def env(self, component: str, name: str) -> Setting | None:
        """`<component>.env` entry NAME (toolkit.env CONTAINERD_CONFIG), from ClusterPolicy or Helm; an
        explicit=False Setting when the env list was seen and lacks it."""
        for source in (self._policy_env, self._helm_env):
            found = source(component, name)
            if found is not None:
                return found
        return None

    def _policy_env(self, component: str, name: str) -> Setting | None:
        cp = self.cluster_policy
        if cp is None:
            return None
        items = cp.get(f"spec.{component}.env")
        if items is None:
            return None
        for i, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict) and item.get("name") == name:
                line = cp.key_lines.get(f"spec.{component}.env.{i}.value", cp.key_lines.get(f"spec.{component}.env.{i}"))
                return Setting(f"{component}.env.{name}", item.get("value"), f"ClusterPolicy {self.policy_name}",
                               Evidence(cp.artifact, line or cp.line, f"{name}={item.get('value')}"))
        return Setting(f"{component}.env.{name}", None, f"ClusterPolicy {self.policy_name}",
                       cp.evidence(f"spec.{component}.env", f"spec.{component}.env has no {name}"), explicit=False)

    def _helm_env(self, component: str, name: str) -> Setting | None:
        ordered = sorted(self.values_docs, key=lambda r: (r.computed, r.partial))
        seen_list: HelmRelease | None = None
        for rel in ordered:
            items = rel.get(f"{component}.env")
            if items is None:
                continue
            seen_list = seen_list or rel
            for i, item in enumerate(items if isinstance(items, list) else []):
                if isinstance(item, dict) and item.get("name") == name:
                    line = rel.key_lines.get(f"{component}.env.{i}.value", rel.key_lines.get(f"{component}.env.{i}"))
                    return Setting(f"{component}.env.{name}", item.get("value"), self._helm_source(rel),
                                   Evidence(rel.artifact, line, f"{name}: {item.get('value')}"))
        if seen_list is not None:
            items = seen_list.get(f"{component}.env")
            shown = "[]" if not items else f"{len(items)} entries"
            return Setting(f"{component}.env.{name}", None, self._helm_source(seen_list),
                           seen_list.cite(f"{component}.env", f"{component}.env: {shown} (no {name})"), explicit=False)
        for rel in ordered:
            if rel.computed and not rel.partial:
                return Setting(f"{component}.env.{name}", None, self._helm_source(rel),
                               rel.cite(component, f"{component}.env not set"), explicit=False)
        return None

    def env_list(self, component: str) -> list[dict]:
        """The env entries the operator will apply (ClusterPolicy first, else Helm), as written."""
        if self.cluster_policy is not None and isinstance(self.cluster_policy.get(f"spec.{component}.env"), list):
            return [e for e in self.cluster_policy.get(f"spec.{component}.env") if isinstance(e, dict)]
        for rel in sorted(self.values_docs, key=lambda r: (not r.computed, r.partial)):
            items = rel.get(f"{component}.env")
            if isinstance(items, list):
                return [e for e in items if isinstance(e, dict)]
        return []


def _merge_release(a: HelmRelease, b: HelmRelease) -> HelmRelease:
    fill = {f: getattr(b, f) for f in ("name", "namespace", "chart", "chart_version", "app_version", "revision", "status")
            if getattr(a, f) is None and getattr(b, f) is not None}
    return replace(a, **fill) if fill else a


@combiner(Configuration)
def build_configuration(facts: Facts) -> Configuration:
    releases = facts.all(HelmRelease)
    objects = facts.all(K8sObject)
    policies = [o for o in objects if o.kind == "ClusterPolicy"]
    nic = next((o for o in objects if o.kind == "NicClusterPolicy"), None)
    operator = [r for r in releases if is_operator_release(r)]
    if not operator and not policies and nic is None:
        raise NotApplicable("no GPU Operator Helm release, ClusterPolicy or NicClusterPolicy in the artifacts")
    named = [r for r in operator if r.name]
    identity: HelmRelease | None = None
    if named:
        # several names: prefer the one a `helm list` or release Secret describes as deployed
        best = sorted(named, key=lambda r: (r.status != "deployed", r.source not in ("helm list", "release secret"), r.name))[0]
        identity = best
        for r in named:
            if r.name == best.name:
                identity = _merge_release(identity, r)
    if identity is None or identity.namespace is None:
        try:
            cluster = facts.get(Cluster)
        except NotApplicable:
            cluster = None
        for pod in cluster.pods if cluster else ():
            m = _GENERATED_RELEASE.match(pod.name or "")
            if m and (identity is None or identity.name in (None, m.group("rel"))):
                guess = HelmRelease(name=m.group("rel"), namespace=pod.namespace, chart=CHART, source="pod names",
                                    artifact=pod.evidence.artifact if pod.evidence else "", evidence=pod.evidence)
                identity = _merge_release(identity, guess) if identity else guess
                break
    docs = [r for r in operator if r.values is not None or r.user_values is not None]
    if identity is not None and identity.name:
        docs = [r for r in docs if r.name in (None, identity.name)]
    docs.sort(key=lambda r: (not r.computed, r.partial))
    policy = sorted(policies, key=lambda o: (o.name != DEFAULT_POLICY_NAME, o.name or ""))[0] if policies else None
    return Configuration(release=identity, values_docs=docs, cluster_policy=policy, releases=releases, nic_cluster_policy=nic)
