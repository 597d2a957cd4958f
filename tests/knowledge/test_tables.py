"""Internal-consistency tests for the knowledge tables in src/gpusleuth/knowledge/.

Each table is loaded with the stdlib ``tomllib`` and checked for required keys, enum values,
cross references that must resolve, and regexes that must compile with Python ``re`` AND with
RE2 (``import re2``) and must not use backreferences or lookaround (RE2 has neither).
These tests read data only; they import nothing from the engine.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from pathlib import Path

import pytest

KNOWLEDGE = Path(__file__).resolve().parents[2] / "src" / "gpusleuth" / "knowledge"

LAYERS = {
    "hardware", "firmware", "kernel-driver", "userspace-driver", "cuda-runtime",
    "container-toolkit", "container-runtime", "device-plugin", "feature-discovery",
    "operator", "scheduler", "workload",
}
SEVERITIES = {"critical", "error", "warning", "info"}

# Constructs RE2 does not support (backreferences, lookahead/lookbehind, atomic/possessive).
_FORBIDDEN = [
    (re.compile(r"\\[1-9]"), "numeric backreference"),
    (re.compile(r"\(\?P="), "named backreference (?P=...)"),
    (re.compile(r"\\k<"), "named backreference \\k<...>"),
    (re.compile(r"\(\?<?[=!]"), "lookaround"),
    (re.compile(r"\(\?>"), "atomic group"),
    (re.compile(r"[*+?}]\+"), "possessive quantifier"),
]


def load(name: str) -> dict:
    with open(KNOWLEDGE / name, "rb") as fh:
        return tomllib.load(fh)


def assert_re2_compatible(pattern: str, where: str) -> None:
    """Compile with re and re2; reject constructs RE2 lacks (checked on the raw text)."""
    import re2  # google-re2

    # Escaped backslashes cannot start a forbidden construct; remove them before scanning.
    scan = pattern.replace("\\\\", "")
    for rx, what in _FORBIDDEN:
        assert not rx.search(scan), f"{where}: {what} is not RE2-compatible: {pattern!r}"
    try:
        re.compile(pattern)
    except re.error as exc:  # pragma: no cover - message only
        pytest.fail(f"{where}: Python re rejects {pattern!r}: {exc}")
    try:
        re2.compile(pattern)
    except Exception as exc:  # pragma: no cover - message only
        pytest.fail(f"{where}: RE2 rejects {pattern!r}: {exc}")


def require(row: dict, keys: set[str], where: str) -> None:
    missing = keys - row.keys()
    assert not missing, f"{where}: missing keys {sorted(missing)}"


def has_source(row: dict, where: str) -> None:
    src = row.get("source")
    assert src, f"{where}: every row needs a source"
    if isinstance(src, list):
        assert all(isinstance(s, str) and s for s in src), f"{where}: bad source list"
    else:
        assert isinstance(src, str)


# ---------------------------------------------------------------------------------------------
# self-test of the RE2 guard


@pytest.mark.parametrize("bad", [r"(a)\1", r"(?P<x>a)(?P=x)", r"foo(?=bar)", r"(?<!x)y", r"(?>a)", r"a++"])
def test_guard_rejects_non_re2(bad: str) -> None:
    with pytest.raises(AssertionError):
        assert_re2_compatible(bad, "guard")


@pytest.mark.parametrize("good", [r"\\1 literal", r"(?i)error", r"(?P<n>\d+)", r"a{2,3}?"])
def test_guard_accepts_re2(good: str) -> None:
    assert_re2_compatible(good, "guard")


# ---------------------------------------------------------------------------------------------
# operands.toml

OPERATORS = {"gpu-operator", "network-operator"}
KINDS = {"DaemonSet", "Deployment", "Pod"}


@pytest.fixture(scope="module")
def operands() -> dict:
    return load("operands.toml")


def test_operands_components(operands: dict) -> None:
    comps = operands["component"]
    names = [c["name"] for c in comps]
    assert len(names) == len(set(names)), "duplicate component names"
    for c in comps:
        w = f"component {c.get('name')}"
        require(c, {"name", "operator", "kind", "layer", "pod_name_patterns", "containers",
                    "init_containers", "produces", "waits_on", "optional", "description"}, w)
        has_source(c, w)
        assert c["operator"] in OPERATORS, w
        assert c["kind"] in KINDS, w
        assert c["layer"] in LAYERS, w
        assert c["pod_name_patterns"], f"{w}: needs at least one pod name pattern"
        for p in c["pod_name_patterns"]:
            assert_re2_compatible(p, w)
        assert isinstance(c["optional"], bool), w
        assert c["containers"] or c["kind"] == "Pod" or c["init_containers"], w
        clash = set(c["containers"]) & set(c["init_containers"])
        assert not clash, f"{w}: {clash} is both container and init container"


def test_operands_references_resolve(operands: dict) -> None:
    comps = {c["name"]: c for c in operands["component"]}
    markers = {m["path"]: m for m in operands["marker"]}
    labels = {g["label"]: g for g in operands.get("gate_label", [])}
    assert len(markers) == len(operands["marker"]), "duplicate marker paths"

    for c in comps.values():
        w = f"component {c['name']}"
        every_container = set(c["containers"]) | set(c["init_containers"])
        for p in c["produces"] + c.get("removes_on_stop", []) + c.get("reads", []):
            assert p in markers, f"{w}: marker {p} has no [[marker]] row"
        for lab in c.get("sets_labels", []):
            assert lab in labels, f"{w}: label {lab} has no [[gate_label]] row"
        for wait in c["waits_on"]:
            require(wait, {"container"}, w)
            assert wait["container"] in every_container, f"{w}: waits_on names unknown container {wait['container']}"
            kinds = [k for k in ("marker", "node_label", "condition") if k in wait]
            assert len(kinds) == 1, f"{w}: waits_on needs exactly one of marker|node_label|condition: {wait}"
            if "marker" in wait:
                assert wait["marker"] in markers, f"{w}: waits on unknown marker {wait['marker']}"
            if "node_label" in wait:
                assert wait["node_label"].split("=")[0] in labels, f"{w}: waits on unknown label {wait['node_label']}"

    for m in markers.values():
        w = f"marker {m['path']}"
        require(m, {"path", "produced_by", "producer_container", "scope", "meaning"}, w)
        has_source(m, w)
        assert m["scope"] in {"host", "pod"}, w
        assert m["produced_by"] in comps, f"{w}: unknown producer {m['produced_by']}"
        producers = [m["produced_by"], *m.get("also_produced_by", [])]
        for prod in producers:
            assert prod in comps, f"{w}: unknown producer {prod}"
            assert m["path"] in comps[prod]["produces"], f"{w}: {prod} does not list it in produces"
        owners = set().union(*(set(comps[p]["containers"]) | set(comps[p]["init_containers"]) for p in producers))
        assert m["producer_container"] in owners, f"{w}: producer_container not a container of its producer"
        if "removed_by" in m:  # free text: who deletes it and when
            assert isinstance(m["removed_by"], str) and m["removed_by"], w

    for g in labels.values():
        w = f"gate_label {g['label']}"
        require(g, {"label", "set_by", "meaning"}, w)
        has_source(g, w)
        assert g["set_by"] in comps, w


def test_operands_pod_patterns_are_disjoint_enough(operands: dict) -> None:
    """A typical pod name of one component must not be claimed by another's pattern."""
    comps = operands["component"]
    samples = {
        "nvidia-driver-daemonset": ["nvidia-driver-daemonset-wg9ws", "nvidia-gpu-driver-ubuntu22.04-7c5d6f8b9-x2k4p"],
        "nvidia-container-toolkit-daemonset": ["nvidia-container-toolkit-daemonset-2hx8w"],
        "nvidia-operator-validator": ["nvidia-operator-validator-6vqbt"],
        "nvidia-cuda-validator": ["nvidia-cuda-validator-7p2xq"],
        "nvidia-device-plugin-daemonset": ["nvidia-device-plugin-daemonset-k7j4m"],
        "gpu-feature-discovery": ["gpu-feature-discovery-cl2lw"],
        "nvidia-dcgm-exporter": ["nvidia-dcgm-exporter-9dz5c"],
        "mofed": ["mofed-rhcos4.18-554bdbd7cf-ds-djxv9", "mofed-ubuntu22.04-ds-8r2fz"],
    }
    by_name = {c["name"]: c for c in comps}
    for owner, pods in samples.items():
        assert owner in by_name, owner
        for pod in pods:
            claimed = [c["name"] for c in comps if any(re.search(p, pod) for p in c["pod_name_patterns"])]
            assert claimed == [owner], f"{pod} claimed by {claimed}, expected only {owner}"
