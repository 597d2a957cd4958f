"""Known issues of the versions in use: the release notes' known and fixed issues (knowledge/known_issues.toml)
compared with the versions the artifacts show, as a vulnerability scanner compares package versions with
advisories."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Iterable

from gpusleuth.checks.base import check
from gpusleuth.facts import inuse as _inuse  # noqa: F401 - registers the VersionsInUse combiner
from gpusleuth.facts.errors import ErrorLines
from gpusleuth.facts.inuse import InUse, VersionsInUse
from gpusleuth.knowledge import table
from gpusleuth.knowledge.incidents import COMPONENTS, Range
from gpusleuth.knowledge.versions import vtuple
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Fix, FixKind, Hit, Role, Severity
from gpusleuth.model.layers import Layer

# The layer a component's known issue is reported on.
LAYER = {
    "gpu-operator": Layer.OPERATOR, "mig-manager": Layer.OPERATOR, "driver-manager": Layer.OPERATOR,
    "network-operator": Layer.OPERATOR, "dcgm-exporter": Layer.OPERATOR, "dcgm": Layer.USERSPACE_DRIVER,
    "container-toolkit": Layer.CONTAINER_TOOLKIT, "device-plugin": Layer.DEVICE_PLUGIN, "dra-driver": Layer.DEVICE_PLUGIN,
    "driver": Layer.KERNEL_DRIVER, "mofed": Layer.KERNEL_DRIVER, "kernel": Layer.KERNEL_DRIVER, "cuda": Layer.CUDA_RUNTIME,
    "gfd": Layer.FEATURE_DISCOVERY, "nfd": Layer.FEATURE_DISCOVERY, "containerd": Layer.CONTAINER_RUNTIME,
    "cri-o": Layer.CONTAINER_RUNTIME, "docker": Layer.CONTAINER_RUNTIME, "kubelet": Layer.SCHEDULER,
}
LINE_SEEN = 0.85  # a row's printed line counts as seen in the artifacts at this similarity


@dataclass(frozen=True)
class KnownIssue:
    id: str
    component: str
    affects: Range
    fixed_in: str | None
    severity: str
    title: str
    detail: str
    workaround: str
    source: str
    lines: tuple[str, ...] = ()
    platform: tuple[str, ...] = ()
    runtime: tuple[str, ...] = ()
    gpu: tuple[str, ...] = ()
    os: tuple[str, ...] = ()
    versions: tuple[tuple[str, Range], ...] = ()


@cache
def known_issues() -> tuple[KnownIssue, ...]:
    out = []
    for row in table("known_issues").get("issue", []):
        when = row.get("when", {})
        comp = row["component"]
        if comp not in COMPONENTS or comp not in LAYER:
            raise ValueError(f"known_issues.toml {row['id']}: unknown component {comp!r}")
        out.append(KnownIssue(
            id=row["id"], component=comp, affects=Range.parse(row["affects"]), fixed_in=row.get("fixed_in"),
            severity=row.get("severity", "info"), title=row["title"], detail=row["detail"], workaround=row.get("workaround", ""),
            source=row["source"], lines=tuple(row.get("lines", ())), platform=tuple(when.get("platform", ())),
            runtime=tuple(when.get("runtime", ())), gpu=tuple(when.get("gpu", ())), os=tuple(when.get("os", ())),
            versions=tuple((k, Range.parse(v)) for k, v in when.get("versions", {}).items()),
        ))
    return tuple(out)


def _os_matches(wanted: str, shown: str) -> bool:
    w = wanted.lower().replace(" ", "")
    s = shown.lower().replace(" ", "").replace("linux", "").replace("redhatenterprise", "rhel").replace("server", "")
    name = "".join(c for c in w if c.isalpha())
    num = "".join(c for c in w if c.isdigit() or c == ".")
    return name in s and (not num or num in s)


def applies(issue: KnownIssue, versions: VersionsInUse) -> tuple[list[InUse], list[str], list[str]]:
    """The versions in use the issue's range holds for, its conditions the artifacts show to hold, and those
    they cannot show (neither held nor contradicted). Empty first list: it does not apply."""
    hit = [v for v in versions.of(issue.component) if issue.affects.holds(v.version)]
    if not hit:
        return [], [], []
    held, unknown = [], []
    for kind, wanted in (("platforms", issue.platform), ("runtimes", issue.runtime)):
        if not wanted:
            continue
        seen = versions.names(kind)
        if not seen:
            unknown.append(f"{kind[:-1]} {'/'.join(wanted)}")
        elif seen & {w.lower() for w in wanted}:
            held.append(f"{kind[:-1]} {'/'.join(wanted)}")
        else:
            return [], [], []
    if issue.gpu:
        products = [p for p, _ in versions.gpus]
        if not products:
            unknown.append(f"GPU {'/'.join(issue.gpu)}")
        elif any(g.lower() in p.lower() for g in issue.gpu for p in products):
            held.append(f"GPU {'/'.join(issue.gpu)}")
        else:
            return [], [], []
    if issue.os:
        shown = [o for o, _ in versions.os]
        if not shown:
            unknown.append(f"OS {'/'.join(issue.os)}")
        elif any(_os_matches(w, s) for w in issue.os for s in shown):
            held.append(f"OS {'/'.join(issue.os)}")
        else:
            return [], [], []
    for comp, rng in issue.versions:
        used = [v.version for v in versions.of(comp)]
        if not used:
            unknown.append(f"{comp} {rng.text}")
        elif any(rng.holds(u) for u in used):
            held.append(f"{comp} {rng.text}")
        else:
            return [], [], []
    return hit, held, unknown


def _seen_lines(issue: KnownIssue, errors: ErrorLines | None) -> list[Evidence]:
    if not issue.lines or errors is None:
        return []
    from gpusleuth.analysis.seen_before import similarity
    from gpusleuth.checks.accounting import normalise

    wanted = [normalise(x).lower() for x in issue.lines]
    out = []
    for e in errors.lines:
        msg = normalise(e.message).lower()
        if any(similarity(w, msg) >= LINE_SEEN for w in wanted):
            out.append(e.evidence)
            if len(out) >= 3:
                break
    return out


@check("OP180", "known-issue-of-version-in-use")
def known_issue_of_version_in_use(versions: VersionsInUse, errors: ErrorLines | None = None) -> Iterable[Hit]:
    """A version in use is named by a release note's known issue; the upgrade that removes it.

    What it does: Reads the versions the artifacts show in use (image tags of the GPU Operator's operands,
    the Helm chart version, ClusterPolicy/Helm `*.version` values, nvidia-smi and the NVRM line for the driver,
    `uname -r`, the nodes' kubelet, runtime and kernel versions) and compares each with the affected ranges
    of knowledge/known_issues.toml, which holds the known and fixed issues of the GPU Operator, the container
    toolkit, the device plugin, DCGM/dcgm-exporter, NFD and the data-center driver branches from their
    release notes. A row applies when its range holds for a version in use and none of its conditions
    (platform, runtime, GPU, OS, other components' versions) is contradicted by the artifacts. One finding per
    component, on its layer, lists every row that applies and the upgrade that removes most of them; it is a
    warning when the artifacts also print a breaking issue's own lines, else a note (info).
    Why it matters: a release already fixed many failures an engineer meets at night; knowing the version in
    use is affected turns a search through threads into an upgrade decision, and a known limitation explains
    behaviour no configuration change will alter.
    How to fix: upgrade the component to the fixed-in version the finding names (for operands managed by the
    GPU Operator, upgrade the operator or set the component's version in the ClusterPolicy), or apply the
    workaround from the release notes until you can.
    References: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/release-notes.html; https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/release-notes.html
    """
    by_component: dict[str, list] = {}
    for issue in known_issues():
        hit, held, unknown = applies(issue, versions)
        if hit:
            by_component.setdefault(issue.component, []).append((issue, hit, held, unknown, _seen_lines(issue, errors)))
    for component, rows in by_component.items():
        # the issues whose own lines the artifacts print first, then the ones that break things, then the rest
        rows.sort(key=lambda r: (not r[4], r[0].severity != "warning", r[0].id))
        in_use = sorted({v.version for _, hit, _, _, _ in rows for v in hit}, key=vtuple)
        hits = list(dict.fromkeys(v for _, hit, _, _, _ in rows for v in hit))
        nodes = {v.node for v in hits}
        where = ", ".join(f"{v.version} ({v.source}{' on ' + v.node if v.node else ''})" for v in hits[:4])
        if len(hits) > 4:
            where += f" and {len(hits) - 4} more"
        seen = list(dict.fromkeys(e for r in rows for e in r[4]))
        warn = any(issue.severity == "warning" and lines for issue, _, _, _, lines in rows)
        parts = [f"In use: {component} {where}. The release notes name {len(rows)} issue(s) of this version:"]
        for n, (issue, _, held, unknown, lines) in enumerate(rows, 1):
            bit = f"({n}) {issue.title} [{issue.affects.text}" + (f"; fixed in {issue.fixed_in}]" if issue.fixed_in else "; no fix named]")
            bit += f" {issue.detail}"
            if held:
                bit += " Shown to hold here: " + ", ".join(held) + "."
            if unknown:
                bit += " Not shown by the artifacts (check): " + ", ".join(unknown) + "."
            if lines:
                bit += " The artifacts print its own lines."
            parts.append(bit)
        fixed = [issue.fixed_in for issue, *_ in rows if issue.fixed_in]
        fixes = []
        if fixed:
            target = max(fixed, key=vtuple)
            removed = sum(1 for f in fixed if vtuple(f) <= vtuple(target))
            fixes.append(Fix(FixKind.PERMANENT, f"Upgrade {component} to {target} or later: it removes {removed} of the {len(rows)} issue(s)."
                             + (" With the GPU Operator, upgrade the operator (or set the component's version in the ClusterPolicy)."
                                if component not in ("gpu-operator", "driver", "kernel", "kubelet", "containerd", "cri-o") else "")))
        for issue, *_ in rows:
            if issue.workaround:
                fixes.append(Fix(FixKind.WORKAROUND, f"{issue.title}: {issue.workaround}"))
        first = rows[0][0]
        title = (f"Known issue of {component} {', '.join(in_use)}: {first.title}" if len(rows) == 1 else
                 f"{len(rows)} known issues of {component} {', '.join(in_use)}, first: {first.title}")
        yield Hit(
            title=title,
            explanation=" ".join(parts) + " Sources: " + ", ".join(sorted({issue.source for issue, *_ in rows})),
            severity=Severity.WARNING if warn else Severity.INFO,
            role=Role.CONTRIBUTING if warn else Role.INFO,
            evidence=tuple(dict.fromkeys(e for e in [*(v.evidence for v in hits[:4]), *seen[:3]] if e)),
            fixes=tuple(fixes[:6]),
            node=next(iter(nodes)) if len(nodes) == 1 else None,
            component=component,
            confidence=0.7 if seen else 0.5,
            layer=LAYER[component],
            facts={"component": component, "in_use": in_use, "known_issues": [
                {"id": issue.id, "affects": issue.affects.text, "fixed_in": issue.fixed_in, "severity": issue.severity,
                 "source": issue.source, "conditions_held": held, "conditions_unknown": unknown, "lines_seen": len(lines)}
                for issue, _, held, unknown, lines in rows]},
        )
