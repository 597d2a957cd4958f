"""Incidents seen before: one TOML file per source project (gpu-operator.toml, k3s.toml, ...), each row a
public thread reduced to facts: its link, the machine-printed lines that identify it (normalised by
`gpusleuth.checks.accounting.normalise`, so repeats with other numbers, ids and paths compare equal), the
conditions under which it happens (platform, runtime, GPU family, component version ranges), the cause and
the fix in gpusleuth's words, the layer, and the version that fixed it where one did.

`incidents()` loads them all once; `analysis/seen_before.py` ranks them against a source.

Version ranges are comma-separated bounds, each `<`, `<=`, `>`, `>=` or `==` and a version: ">=1.14.0,<1.14.4".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from gpusleuth.knowledge import folder
from gpusleuth.knowledge.versions import vtuple
from gpusleuth.model.layers import Layer

# The names a version in use is known by (facts/inuse.py) and a range or a fix can name.
COMPONENTS = (
    "gpu-operator", "device-plugin", "container-toolkit", "driver", "dcgm-exporter", "dcgm", "gfd", "nfd",
    "mig-manager", "driver-manager", "network-operator", "mofed", "dra-driver", "containerd", "cri-o", "docker",
    "kubelet", "kernel", "cuda", "k3s", "rke2", "k0s", "microk8s", "kind", "openshift",
)
PLATFORMS = ("k3s", "rke2", "k0s", "microk8s", "kind", "minikube", "openshift", "eks", "gke", "aks", "oke", "kubeadm",
             "tanzu", "talos", "nomad", "docker", "podman")
RUNTIMES = ("containerd", "cri-o", "docker", "podman")
CONDITION_KEYS = ("platform", "runtime", "gpu", "os", "arch", "versions")

_BOUND = re.compile(r"^\s*(<=|>=|==|<|>)?\s*v?([0-9][0-9A-Za-z.\-+]*)\s*$")


@dataclass(frozen=True, slots=True)
class Range:
    """A version range: every bound must hold."""

    text: str
    bounds: tuple[tuple[str, tuple[int, ...]], ...]

    @classmethod
    def parse(cls, text: str) -> "Range":
        bounds = []
        for part in text.split(","):
            m = _BOUND.match(part)
            if not m:
                raise ValueError(f"not a version bound: {part!r} in {text!r}")
            bounds.append((m.group(1) or "==", vtuple(m.group(2))))
        return cls(text, tuple(bounds))

    def holds(self, version: str) -> bool:
        v = vtuple(version)
        if not v:
            return False
        for op, b in self.bounds:
            n = max(len(v), len(b))
            a, c = v + (0,) * (n - len(v)), b + (0,) * (n - len(b))
            if op == "==":
                ok = v[: len(b)] == b  # "==535" holds for every 535.x
            else:
                ok = {"<": a < c, "<=": a <= c, ">": a > c, ">=": a >= c}[op]
            if not ok:
                return False
        return True


@dataclass(frozen=True, slots=True)
class Incident:
    id: str  # <project>/<number or slug>
    project: str
    link: str
    title: str
    layer: Layer
    lines: tuple[str, ...]  # normalised machine-printed lines
    cause: str
    fix: str
    component: str | None = None
    terms: tuple[str, ...] = ()  # words that name the failure where no line does (a prose-only report)
    platform: tuple[str, ...] = ()
    runtime: tuple[str, ...] = ()
    gpu: tuple[str, ...] = ()  # GPU families or products ("A100", "H100", "T4", "Grace Hopper")
    os: tuple[str, ...] = ()
    arch: tuple[str, ...] = ()
    versions: dict = field(default_factory=dict, hash=False)  # component -> Range that must hold
    fixed: dict = field(default_factory=dict, hash=False)  # component -> the version that fixed it
    klass: str | None = None  # a failure class code (failure_classes.toml) this incident is an instance of

    def conditions(self) -> dict:
        out = {k: getattr(self, k) for k in ("platform", "runtime", "gpu", "os", "arch") if getattr(self, k)}
        if self.versions:
            out["versions"] = {k: r.text for k, r in self.versions.items()}
        return out


@dataclass(frozen=True)
class Corpus:
    incidents: tuple[Incident, ...]
    excluded: tuple[str, ...]  # links deliberately left out (see the files' headers)

    def by_link(self) -> dict[str, Incident]:
        return {i.link: i for i in self.incidents}

    def projects(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for i in self.incidents:
            out[i.project] = out.get(i.project, 0) + 1
        return out


def _tuple(value) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def parse_file(name: str, text: str) -> tuple[list[Incident], list[str]]:
    import tomllib

    return rows(name, tomllib.loads(text))


def rows(name: str, data: dict) -> tuple[list[Incident], list[str]]:
    """The incidents and excluded links of one parsed project file; ValueError names a bad row."""
    project = data.get("project", name)
    out = []
    for n, row in enumerate(data.get("incident", []), 1):
        where = f"incidents/{name}.toml incident {n}"
        missing = [k for k in ("link", "title", "layer", "lines", "cause", "fix") if k not in row]
        if missing:
            raise ValueError(f"{where}: missing {', '.join(missing)}")
        unknown = set(row) - {"link", "title", "layer", "lines", "cause", "fix", "component", "terms", "when", "fixed", "class"}
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
        when = row.get("when", {})
        bad = set(when) - set(CONDITION_KEYS)
        if bad:
            raise ValueError(f"{where}: unknown conditions {sorted(bad)}")
        versions = {k: Range.parse(v) for k, v in when.get("versions", {}).items()}
        for comp in [*versions, *row.get("fixed", {})]:
            if comp not in COMPONENTS:
                raise ValueError(f"{where}: unknown component {comp!r} (knowledge/incidents COMPONENTS)")
        link = row["link"]
        number = link.rstrip("/").rsplit("/", 1)[-1]
        out.append(Incident(
            id=f"{project}/{number}", project=project, link=link, title=row["title"], layer=Layer(row["layer"]),
            lines=tuple(row["lines"]), cause=row["cause"], fix=row["fix"], component=row.get("component"),
            terms=_tuple(row.get("terms")), platform=_tuple(when.get("platform")), runtime=_tuple(when.get("runtime")),
            gpu=_tuple(when.get("gpu")), os=_tuple(when.get("os")), arch=_tuple(when.get("arch")), versions=versions,
            fixed={k: str(v) for k, v in row.get("fixed", {}).items()}, klass=row.get("class"),
        ))
    return out, list(data.get("excluded", []))


@cache
def incidents() -> Corpus:
    """Every incident of every project file, in file order."""
    found: list[Incident] = []
    excluded: list[str] = []
    for name, data in folder("incidents").items():
        got, ex = rows(name, data)
        found.extend(got)
        excluded.extend(ex)
    return Corpus(tuple(found), tuple(excluded))
