"""Every GPU sharing configuration in the artifacts: files, and YAML strings inside ConfigMaps (the GPU
Operator keeps mig-parted's in default-mig-parted-config and the device plugin's in the ConfigMap that
ClusterPolicy spec.devicePlugin.config.name names)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.model.k8s import K8sObject
from gpusleuth.model.sharing import SharingConfig
from gpusleuth.parsers.gpu_sharing import from_text


@dataclass
class SharingConfigs:
    configs: list[SharingConfig]

    def of_kind(self, kind: str) -> list[SharingConfig]:
        return [c for c in self.configs if c.kind == kind]


@combiner(SharingConfigs)
def build_sharing(facts: Facts) -> SharingConfigs:
    configs = list(facts.all(SharingConfig))
    for obj in facts.all(K8sObject):
        if obj.kind != "ConfigMap" or not isinstance(obj.body.get("data"), dict):
            continue
        for key, value in obj.body["data"].items():
            if not isinstance(value, str) or ("mig-configs" not in value and "version" not in value):
                continue
            origin = f"ConfigMap {obj.namespace + '/' if obj.namespace else ''}{obj.name}, key {key}"
            cfg = from_text(value, obj.artifact, origin=origin, anchor=obj.key_lines.get(f"data.{key}", obj.line))
            if cfg is not None:
                configs.append(replace(cfg, configmap=obj.name, namespace=obj.namespace, key=key))
    if not configs:
        raise NotApplicable("no mig-parted or device-plugin sharing configuration in the artifacts")
    return SharingConfigs(configs)
