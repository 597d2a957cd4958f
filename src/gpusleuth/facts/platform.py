"""``Platform``: which Kubernetes distribution or managed node image the cluster runs (knowledge/runtimes.toml
[[platform]]), from the strongest sign the artifacts hold, and what that means for the GPU stack: where its
container engine's config and socket are, whether the file is generated (and from what), the toolkit settings
it needs, and its known pitfalls.

Signs, strongest first: a node label only that platform sets, a kubelet / containerd version suffix (+k3s1,
+rke2r1, -eks-, -gke.), a containerd instance the runtime view matched to a distribution layout, host paths and
sockets in configs, the node's os-image / kernel, and last what a person wrote ("on our RKE2 cluster"). A
platform known only from a sentence is marked `stated`; checks say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, cached_property

from gpusleuth.errors import NotApplicable
from gpusleuth.facts.cluster import Cluster
from gpusleuth.facts.store import Facts, combiner
from gpusleuth.knowledge import table
from gpusleuth.model.evidence import Evidence

# How much each kind of sign weighs.
LABEL, VERSION, INSTANCE, PATH, IMAGE, WORD = 5, 5, 4, 3, 2, 1


@dataclass(frozen=True)
class PlatformRow:
    id: str
    name: str
    runtime: str
    config: str
    socket: str
    generated: bool
    source: str
    distribution: str | None = None
    template: str | None = None
    template_note: str | None = None
    toolkit_env: dict = field(default_factory=dict, hash=False, compare=False)
    toolkit_note: str | None = None
    preinstalled: str | None = None
    restart: str | None = None
    recognise: dict = field(default_factory=dict, hash=False, compare=False)
    pitfalls: tuple[dict, ...] = ()

    def edit_target(self) -> str:
        """The file a change to the engine's config must go to so that it lasts."""
        if self.generated and self.template:
            return self.template
        return self.config

    def toolkit_env_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.toolkit_env.items())


@cache
def platforms() -> tuple[PlatformRow, ...]:
    rows = []
    for r in table("runtimes").get("platform", ()):
        rows.append(PlatformRow(
            id=r["id"], name=r["name"], runtime=r.get("runtime", "containerd"), config=r["config"], socket=r["socket"],
            generated=bool(r.get("generated")), source=r["source"], distribution=r.get("distribution"),
            template=r.get("template"), template_note=r.get("template_note"), toolkit_env=dict(r.get("toolkit_env", {})),
            toolkit_note=r.get("toolkit_note"), preinstalled=r.get("preinstalled"), restart=r.get("restart"),
            recognise=dict(r.get("recognise", {})), pitfalls=tuple(r.get("pitfalls", ())),
        ))
    return tuple(rows)


def platform(pid: str) -> PlatformRow | None:
    return next((p for p in platforms() if p.id == pid), None)


@dataclass
class Sign:
    weight: int
    how: str  # "node label k3s.io/hostname", "kubelet version v1.27.4+k3s1", "stated: on our RKE2 cluster"
    evidence: Evidence | None


@dataclass
class Platform:
    row: PlatformRow
    signs: list[Sign]
    nodes: tuple[str, ...] = ()

    # Worked out once: a platform shown by every node's labels has a sign per node, and checks ask once per finding.
    @cached_property
    def stated(self) -> bool:
        """Known only from what a person wrote."""
        return all(s.weight <= WORD for s in self.signs)

    @cached_property
    def _ranked(self) -> list[Sign]:
        return sorted(self.signs, key=lambda s: -s.weight)

    @cached_property
    def how(self) -> str:
        return "; ".join(dict.fromkeys(s.how for s in self._ranked[:3]))

    @cached_property
    def evidence(self) -> tuple[Evidence, ...]:
        return tuple(s.evidence for s in self._ranked if s.evidence)[:3]

    @property
    def name(self) -> str:
        return self.row.name + (" (stated)" if self.stated else "")

    @cached_property
    def pitfall(self) -> dict | None:
        """The first of the row's pitfalls that applies here: one for every node of the platform, or one whose `when`
        a sign it was recognised by matches (the node's OS image, its kubelet version). A pitfall of Container-Optimized
        OS is not told of Ubuntu nodes."""
        for pit in self.row.pitfalls:
            when = pit.get("when")
            if when is None or any(re.search(when, s.how) for s in self.signs):
                return pit
        return None


def _labels(row: PlatformRow) -> list[tuple[str, str | None]]:
    out = []
    for item in row.recognise.get("labels", ()):
        key, _, value = item.partition("=")
        out.append((key, value or None))
    return out


def _node_signs(cluster: Cluster, row: PlatformRow) -> tuple[list[Sign], set[str]]:
    signs: list[Sign] = []
    nodes: set[str] = set()
    rec = row.recognise
    for name, node in cluster.nodes.items():
        for key, value in _labels(row):
            if key in node.labels and (value is None or str(node.labels[key]) == value):
                weight = LABEL if key != "node-role.kubernetes.io/control-plane" else WORD  # set by most distributions
                signs.append(Sign(weight, f"node label {key}{'=' + value if value else ''}", node.evidence.get(f"label:{key}")))
                nodes.add(name)
        for attr, rx_key, weight, what in (
            ("kubelet_version", "kubelet", VERSION, "kubelet version"),
            ("container_runtime", "containerd", VERSION - 1, "container runtime version"),  # RKE2 ships K3s's containerd build
            ("os_image", "os_image", IMAGE, "os-image"),
            ("kernel_version", "kernel", IMAGE, "kernel"),
        ):
            value = getattr(node, attr, None)
            rx = rec.get(rx_key)
            if value and rx and re.search(rx, value, re.I):
                signs.append(Sign(weight, f"{what} {value}", node.evidence.get(attr)))
                nodes.add(name)
    return signs, nodes


def _path_signs(facts: Facts, row: PlatformRow) -> list[Sign]:
    from gpusleuth.model.runtime import ContainerdConfig, ContainerdInstance

    signs: list[Sign] = []
    paths = tuple(row.recognise.get("paths", ())) + tuple(row.recognise.get("sockets", ()))
    if not paths:
        return signs
    for cfg in facts.all(ContainerdConfig):
        where = cfg.path or ""
        if cfg.path_source != "file name (weak)" and any(where.startswith(p) for p in paths):
            signs.append(Sign(PATH, f"containerd config at {where}", cfg.evidence))
    for inst in facts.all(ContainerdInstance):
        text = " ".join(str(v) for v in (inst.config_path, inst.socket, inst.binary) if v)
        if any(p in text for p in paths):
            signs.append(Sign(PATH, f"containerd process {text}", getattr(inst, "evidence", None)))
    return signs


def _os_signs(facts: Facts, row: PlatformRow) -> list[Sign]:
    """The node's /etc/os-release naming an image only this platform uses (Container-Optimized OS, Bottlerocket,
    RHCOS)."""
    from gpusleuth.model.host import OsRelease

    rx = row.recognise.get("os_image")
    if not rx:
        return []
    out = []
    for o in facts.all(OsRelease):
        name = o.pretty_name or ""
        if name and re.search(rx, name, re.I):
            out.append(Sign(IMAGE, f"/etc/os-release {name}", o.evidence))
    return out


def _instance_signs(facts: Facts, row: PlatformRow) -> list[Sign]:
    if not row.distribution or row.distribution == "standard":
        return []
    from gpusleuth.facts.runtime import RuntimeSetup

    try:
        setup = facts.get(RuntimeSetup)
    except Exception:  # noqa: BLE001 - no runtime facts: no sign from them
        return []
    out = []
    for inst in setup.instances:
        if inst.distribution is not None and inst.distribution.id == row.distribution and not inst.inferred:
            out.append(Sign(INSTANCE, f"containerd instance of {inst.distribution.name} ({inst.label})", inst.evidence[0] if inst.evidence else None))
    return out


def _stated_signs(facts: Facts, row: PlatformRow) -> list[Sign]:
    from gpusleuth.facts.prose import Prose

    try:
        prose = facts.get(Prose)
    except Exception:  # noqa: BLE001 - no prose: no stated platform
        return []
    return [Sign(WORD, f"stated: \"{s.evidence.text[:120]}\"", s.evidence) for s in prose.stated_of("platform") if s.detail == row.id]


@combiner(Platform)
def build_platform(facts: Facts) -> Platform:
    try:
        cluster = facts.get(Cluster)
    except Exception:  # noqa: BLE001
        cluster = None
    best: tuple[int, int, Platform] | None = None
    for order, row in enumerate(platforms()):
        signs, nodes = _node_signs(cluster, row) if cluster is not None else ([], set())
        signs += _path_signs(facts, row) + _os_signs(facts, row) + _instance_signs(facts, row) + _stated_signs(facts, row)
        if not signs:
            continue
        score = max(s.weight for s in signs) * 10 + min(len(signs), 9)
        cand = Platform(row, signs, tuple(sorted(nodes)))
        if best is None or score > best[0]:
            best = (score, order, cand)
    if best is None:
        raise NotApplicable("no sign of the Kubernetes distribution (node labels, kubelet/containerd versions, paths, or a sentence naming it)")
    return best[2]
