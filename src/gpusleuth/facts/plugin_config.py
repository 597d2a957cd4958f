"""How the device plugin gets its sharing configuration, and which configuration it actually runs with.

A time-slicing or MPS config only takes effect when the plugin is pointed at it: the standalone chart
mounts the ConfigMap named by `config.name` (or built from `config.map`) and picks the key `config.default`
(or the node's `nvidia.com/device-plugin.config` label); the GPU Operator does the same from ClusterPolicy
`spec.devicePlugin.config.{name,default}`. What the plugin really runs with it prints at start:

    I1011 02:13:45.512112       1 main.go:314]
    Running with config:
    {
      "version": "v1",
      ...
      "sharing": {
        "timeSlicing": {}
      }
    }

This view lines up the three: the sharing configs defined, the plugin's wiring (Helm values of the
standalone chart, ClusterPolicy), and the configs the plugin pods printed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.configuration import Configuration, is_operator_release
from gpusleuth.facts.logs import Logs
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.logs import ContainerLog
from gpusleuth.model.runtime import HelmRelease

RUNNING = "Running with config:"
CONFIG_LABEL = "nvidia.com/device-plugin.config"
_PLUGIN_VALUES = ("name", "map", "default")  # the standalone chart's config.* keys
_MAX_JSON_LINES = 200


@dataclass(frozen=True)
class RunningConfig:
    """The config one device plugin pod printed at start."""

    pod: str | None
    namespace: str | None
    node: str | None
    body: dict = field(hash=False)
    evidence: Evidence | None = None  # the "Running with config:" line

    def replicas(self) -> dict[str, int]:
        """resource name -> replicas of the time-slicing / MPS resources it runs with (empty: no sharing)."""
        out: dict[str, int] = {}
        sharing = self.body.get("sharing") if isinstance(self.body.get("sharing"), dict) else {}
        for mode in ("timeSlicing", "mps"):
            block = sharing.get(mode) if isinstance(sharing.get(mode), dict) else {}
            for r in block.get("resources") or ():
                if isinstance(r, dict) and isinstance(r.get("replicas"), int):
                    out[str(r.get("name"))] = r["replicas"]
        return out


@dataclass
class PluginWiring:
    running: list[RunningConfig]
    releases: list[HelmRelease]  # the standalone nvidia-device-plugin chart's values
    configuration: Configuration | None = None


def _plugin_release(rel: HelmRelease) -> bool:
    if is_operator_release(rel):
        return False
    if rel.chart:
        return rel.chart == "nvidia-device-plugin"
    values = rel.values if rel.values is not None else rel.user_values
    config = values.get("config") if isinstance(values, dict) else None
    return isinstance(config, dict) and any(k in config for k in _PLUGIN_VALUES)


def _running(log: ContainerLog) -> list[RunningConfig]:
    """Every "Running with config:" JSON block in one plugin log (the log parser may have joined its lines)."""
    out = []
    lines = log.lines
    for i, ln in enumerate(lines):
        if ln.message.strip() != RUNNING:
            continue
        text = ""
        for nxt in lines[i + 1 : i + 1 + _MAX_JSON_LINES]:
            text += nxt.message + "\n"
            if text.count("{") and text.count("{") == text.count("}"):
                try:
                    body = json.loads(text)
                except json.JSONDecodeError:
                    break
                if isinstance(body, dict):
                    out.append(RunningConfig(ln.pod or log.pod, log.namespace, log.node, body, ln.evidence()))
                break
    return out


@combiner(PluginWiring)
def build_plugin_wiring(facts: Facts) -> PluginWiring:
    try:
        logs = facts.get(Logs)
    except NotApplicable:
        logs = None
    try:
        configuration = facts.get(Configuration)
    except NotApplicable:
        configuration = None
    with_config = {id(log): log for log, _ in (logs.grep(RUNNING) if logs else ())}
    running = [rc for log in with_config.values() for rc in _running(log)]
    releases = [r for r in facts.all(HelmRelease) if _plugin_release(r)]
    if not running and not releases and configuration is None:
        raise NotApplicable("no device plugin start-up config, device plugin Helm values or ClusterPolicy in the artifacts")
    return PluginWiring(running, releases, configuration)
