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


# ---------------------------------------------------------------------------------------------
# xid.toml

XID_CATEGORIES = {"application", "driver", "hardware", "firmware", "thermal", "memory", "nvlink", "fabric", "unknown"}
GPU_FAMILIES = {"A100", "H100", "B100", "GB200"}
XID_REQUIRED = {8, 13, 31, 32, 38, 43, 44, 45, 48, 56, 57, 58, 61, 62, 63, 64, 65, 68, 69, 74, 79, 92, 94, 95,
                109, 119, 120, 121, 122, 123, 140, 143, 144, 145, 146, 147, 148, 149, 150, 154}


@pytest.fixture(scope="module")
def xid() -> dict:
    return load("xid.toml")


def test_xid_rows(xid: dict) -> None:
    buckets = {b["name"] for b in xid["bucket"]}
    codes = [r["code"] for r in xid["xid"]]
    assert len(codes) == len(set(codes)), "duplicate Xid codes"
    assert codes == sorted(codes), "keep [[xid]] sorted by code"
    for r in xid["xid"]:
        w = f"xid {r.get('code')}"
        require(r, {"code", "mnemonic", "name", "category", "layer", "severity", "applies_to",
                    "catalog_immediate", "catalog_investigatory", "meaning", "immediate_action",
                    "investigation", "follow_on_of"}, w)
        has_source(r, w)
        assert isinstance(r["code"], int) and r["code"] > 0, w
        assert r["category"] in XID_CATEGORIES, w
        assert r["layer"] in LAYERS, w
        assert r["severity"] in SEVERITIES, w
        assert set(r["applies_to"]) <= GPU_FAMILIES, w
        assert r["catalog_immediate"] == "" or r["catalog_immediate"] in buckets, f"{w}: unknown bucket"
        for flag in ("restart_workload", "reset_gpu", "drain", "reboot_node", "rma_candidate"):
            if flag in r:
                assert isinstance(r[flag], bool), f"{w}: {flag} must be a bool"
        if "reset_timing" in r:
            assert r["reset_timing"] in {"before-restart", "when-convenient"}, w
            assert r.get("reset_gpu") is True, f"{w}: reset_timing without reset_gpu = true"
        if r.get("rma_candidate"):
            assert r.get("rma_rule"), f"{w}: rma_candidate needs an rma_rule"


def test_xid_coverage_and_unused(xid: dict) -> None:
    codes = {r["code"] for r in xid["xid"]}
    unused = {int(k): v for k, v in xid["unused"].items()}
    assert XID_REQUIRED <= codes, f"missing {sorted(XID_REQUIRED - codes)}"
    assert not codes & unused.keys(), "a code is both a row and unused"
    assert codes | unused.keys() == set(range(1, max(codes) + 1)), "catalog codes 1..max must all be accounted for"


def test_xid_follow_on_references(xid: dict) -> None:
    rows = {r["code"]: r for r in xid["xid"]}
    for r in rows.values():
        for c in r["follow_on_of"]:
            assert c in rows, f"xid {r['code']}: follow_on_of {c} is not a row"
            assert c != r["code"], f"xid {r['code']} follows itself"

    def visit(code: int, path: tuple[int, ...]) -> None:
        assert code not in path, f"follow_on_of cycle: {path + (code,)}"
        for nxt in rows[code]["follow_on_of"]:
            visit(nxt, path + (code,))

    for code in rows:
        visit(code, ())


def test_xid_seed_004_distinctions(xid: dict) -> None:
    rows = {r["code"]: r for r in xid["xid"]}
    for c in (13, 31, 43):
        assert rows[c]["category"] == "application" and rows[c]["restart_workload"] and not rows[c]["reset_gpu"]
    assert rows[48]["category"] == "memory" and rows[48]["reset_gpu"]
    assert rows[94]["reset_timing"] == "when-convenient" and rows[94]["drain"]
    assert rows[95]["reset_timing"] == "before-restart"
    assert rows[63]["rma_candidate"] is False and rows[64]["rma_candidate"] is True
    assert rows[79]["reboot_node"] and rows[79]["rma_candidate"] and "slot" in rows[79]["rma_rule"]
    for c in (119, 120):
        assert rows[c]["category"] == "firmware" and rows[c]["reset_gpu"] and "GSP" in rows[c]["investigation"]


def test_xid_recovery_actions_and_ladder(xid: dict) -> None:
    values = [a["value"] for a in xid["recovery_action"]]
    assert values == sorted(set(values))
    assert {a["text"] for a in xid["recovery_action"]} >= {"None", "Drain P2P", "Drain and Reset",
                                                           "GPU Reset Required", "Node Reboot Required"}
    ladder = xid["ladder"]
    has_source(ladder, "ladder")
    steps = ladder["step"]
    assert [s["order"] for s in steps] == list(range(1, len(steps) + 1))
    assert any("dcgmi diag -r 3" in cmd for s in steps for cmd in s["commands"])
    for s in steps:
        require(s, {"order", "scope", "action", "applies_when", "commands"}, f"ladder step {s.get('order')}")


# ---------------------------------------------------------------------------------------------
# driver_branches.toml

BRANCH_TYPES = {"LTS", "production", "new-feature"}
_VERSION = re.compile(r"^\d+(\.\d+){1,2}$")


def vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


@pytest.fixture(scope="module")
def branches() -> dict:
    return load("driver_branches.toml")


def test_branch_rows(branches: dict) -> None:
    rows = branches["branch"]
    names = [b["branch"] for b in rows]
    assert len(names) == len(set(names))
    assert names == sorted(names, key=lambda n: int(n[1:])), "keep branches oldest first"
    for b in rows:
        w = f"branch {b.get('branch')}"
        require(b, {"branch", "type", "max_cuda", "max_cuda_major", "min_version", "verified"}, w)
        has_source(b, w)
        assert re.fullmatch(r"R\d{3}", b["branch"]), w
        assert b["type"] in BRANCH_TYPES, w
        if "eol" in b:
            dt.date.fromisoformat(b["eol"])
        elif b["type"] != "new-feature":
            pytest.fail(f"{w}: LTS/production branches need an eol")
        assert _VERSION.match(b["min_version"]), w
        assert b["min_version"].split(".")[0] == b["branch"][1:], f"{w}: min_version not in branch"
        assert re.fullmatch(r"\d+\.\d+", b["max_cuda"]), w
        assert int(b["max_cuda"].split(".")[0]) == b["max_cuda_major"], w
        assert isinstance(b["verified"], bool), w
        if not b["verified"]:
            assert b.get("note"), f"{w}: unverified rows must say what is unverified"
    # max CUDA never decreases with newer branches
    cudas = [vkey(b["max_cuda"]) for b in rows]
    assert cudas == sorted(cudas)


def test_seed_004_branch_facts(branches: dict) -> None:
    by = {b["branch"]: b for b in branches["branch"]}
    expect = {"R535": ("LTS", "2026-06-30", "12.2"), "R580": ("LTS", "2028-06-30", "13.0"),
              "R595": ("production", "2027-03-31", None), "R610": ("new-feature", "2026-08-31", None),
              "R550": (None, None, "12.4"), "R570": (None, None, "12.8"), "R575": (None, None, "12.9")}
    for name, (typ, eol, cuda) in expect.items():
        if typ:
            assert by[name]["type"] == typ
        if eol:
            assert by[name]["eol"] == eol
        if cuda:
            assert by[name]["max_cuda"] == cuda
    assert by["R535"]["min_version"] == "535.54.03"


def test_cuda_min_driver_consistent(branches: dict) -> None:
    rows = branches["cuda_min_driver"]
    seen = set()
    for r in rows:
        w = f"cuda {r.get('cuda')} {r.get('release')}"
        require(r, {"cuda", "release", "min_driver"}, w)
        has_source(r, w)
        assert (r["cuda"], r["release"]) not in seen, f"{w}: duplicate"
        seen.add((r["cuda"], r["release"]))
        assert _VERSION.match(r["min_driver"]), w
    # newer CUDA never needs an older driver
    ordered = sorted(rows, key=lambda r: (vkey(r["cuda"]), r["release"] != "GA", r["release"]))
    drivers = [vkey(r["min_driver"]) for r in ordered]
    assert drivers == sorted(drivers), "minimum drivers must grow with CUDA version"
    # every branch's min_version is the GA minimum of its max_cuda when that row exists
    ga = {r["cuda"]: r["min_driver"] for r in rows if r["release"] == "GA"}
    for b in branches["branch"]:
        if b["max_cuda"] in ga:
            assert ga[b["max_cuda"]] == b["min_version"], b["branch"]


def test_compat_and_traps(branches: dict) -> None:
    majors = {m["cuda_major"] for m in branches["minor_version_compat"]}
    assert {11, 12, 13} <= majors
    for m in branches["minor_version_compat"]:
        assert _VERSION.match(m["min_driver"])
        has_source(m, f"minor compat {m['cuda_major']}")
    fc = branches["forward_compat"]
    require(fc, {"package", "gpus", "requires", "errors", "verified"}, "forward_compat")
    has_source(fc, "forward_compat")
    ids = [t["id"] for t in branches["trap"]]
    assert len(ids) == len(set(ids))
    assert "cdmm-mig-gds" in ids
    for t in branches["trap"]:
        w = f"trap {t['id']}"
        require(t, {"id", "title", "applies", "effect", "detect", "fix", "layer", "severity", "verified"}, w)
        has_source(t, w)
        assert t["layer"] in LAYERS and t["severity"] in SEVERITIES, w
        for k in ("driver_min", "driver_max"):
            if k in t["applies"]:
                assert _VERSION.match(t["applies"][k]), w


# ---------------------------------------------------------------------------------------------
# mig_profiles.toml

_PROFILE = re.compile(r"^(?P<c>[1-7])g\.(?P<m>\d+)gb(?P<me>\+me)?$")


@pytest.fixture(scope="module")
def mig() -> dict:
    return load("mig_profiles.toml")


def test_mig_gpu_rows(mig: dict) -> None:
    models = [g["model"] for g in mig["gpu"]]
    assert len(models) == len(set(models))
    for g in mig["gpu"]:
        w = f"gpu {g.get('model')}"
        require(g, {"model", "match", "memory_gb", "compute_unit", "memory_unit", "profiles", "verified"}, w)
        has_source(g, w)
        for p in g["match"]:
            assert_re2_compatible(p, w)
        assert (g["compute_unit"], g["memory_unit"]) in {(7, 8), (4, 4)}, w
        if not g["verified"]:
            assert g.get("note"), f"{w}: unverified rows must say what is unverified"
        names = [p["name"] for p in g["profiles"]]
        assert len(names) == len(set(names)), f"{w}: duplicate profile"
        assert sum(p["media_extensions"] for p in g["profiles"]) <= 2, w
        full = [p for p in g["profiles"] if p["compute_slices"] == g["compute_unit"]]
        assert len(full) == 1 and full[0]["memory_slices"] == g["memory_unit"], f"{w}: needs one full-GPU profile"
        for p in g["profiles"]:
            pw = f"{w} profile {p.get('name')}"
            require(p, {"name", "compute_slices", "memory_slices", "max_instances", "media_extensions"}, pw)
            m = _PROFILE.match(p["name"])
            assert m, f"{pw}: bad name"
            assert int(m["c"]) == p["compute_slices"], f"{pw}: name and compute_slices disagree"
            assert bool(m["me"]) == p["media_extensions"], pw
            allowed = {1, 2, 3, 4, 7} if g["compute_unit"] == 7 else {1, 2, 4}
            assert p["compute_slices"] in allowed, f"{pw}: no 5g/6g profiles exist"
            assert 1 <= p["memory_slices"] <= g["memory_unit"], pw
            # the GB in the name is the memory share of the GPU, rounded
            expect_gb = g["memory_gb"] * p["memory_slices"] / g["memory_unit"]
            assert abs(int(m["m"]) - expect_gb) <= 1.5, f"{pw}: {m['m']} GB vs {expect_gb:.1f} expected"
            # instances never exceed the compute or memory slices available
            if not p["media_extensions"]:
                assert p["max_instances"] * p["compute_slices"] <= g["compute_unit"], pw
                assert p["max_instances"] * p["memory_slices"] <= g["memory_unit"], pw
            else:
                assert p["max_instances"] == 1, f"{pw}: only one +me instance per GPU"


def test_mig_seed_004_facts(mig: dict) -> None:
    by = {g["model"]: {p["name"]: p for p in g["profiles"]} for g in mig["gpu"]}
    assert by["H100-80GB"]["1g.10gb"]["max_instances"] == 7
    assert by["H100-80GB"]["3g.40gb"]["max_instances"] == 2
    assert by["H100-80GB"]["7g.80gb"]["max_instances"] == 1
    assert by["H200-141GB"]["1g.18gb"]["max_instances"] == 7
    assert by["B200-180GB"]["1g.23gb"]["max_instances"] == 7
    for model in ("L4", "A10G", "L40S"):
        assert model in mig["not_mig_capable"]["models"]
    # match patterns must find real product names and must not claim non-MIG parts
    product = {"NVIDIA H100 80GB HBM3": "H100-80GB", "NVIDIA-H100-80GB-HBM3": "H100-80GB",
               "NVIDIA A100-SXM4-40GB": "A100-40GB", "NVIDIA A100-SXM4-80GB": "A100-80GB",
               "NVIDIA H200": "H200-141GB", "NVIDIA B200": "B200-180GB", "NVIDIA GH200 480GB": "GH200-96GB",
               "NVIDIA A30": "A30-24GB", "NVIDIA H100 NVL": "H100-94GB", "NVIDIA GB200": "GB200-186GB",
               "NVIDIA-H200": "H200-141GB"}
    for name, model in product.items():
        hits = [g["model"] for g in mig["gpu"] if any(re.search(p, name) for p in g["match"])]
        assert hits == [model], f"{name}: {hits}"
    for name in ("NVIDIA L4", "NVIDIA L40S", "NVIDIA A10G", "Tesla T4"):
        assert not [g["model"] for g in mig["gpu"] if any(re.search(p, name) for p in g["match"])], name


def test_mig_isolation_and_labels(mig: dict) -> None:
    modes = {i["mode"]: i for i in mig["isolation"]}
    assert set(modes) == {"mig", "mps", "time-slicing"}
    assert modes["mig"]["memory_isolation"] == "hardware" and modes["time-slicing"]["fault_isolation"] == "none"
    for i in mig["isolation"]:
        require(i, {"mode", "memory_isolation", "fault_isolation", "concurrency", "use_for", "k8s"}, i["mode"])
        has_source(i, i["mode"])
    assert {s["name"] for s in mig["strategy"]} == {"none", "single", "mixed"}
    labels = {l["label"] for l in mig["mig_label"]}
    assert "nvidia.com/mig.config.state" in labels


# ---------------------------------------------------------------------------------------------
# signatures.toml

TAGS = {
    "component-start", "waiting", "compile-start", "compile-end", "install-start", "install-end",
    "module-loaded", "module-failed", "marker-set", "marker-unset", "container-crash",
    "container-restart", "pod-scheduled", "plugin-registered", "plugin-failed", "runtime-missing",
    "image-pull-failed", "error", "xid",
}
EXTRA_COMPONENTS = {"kernel", "nvidia-installer", "containerd", "docker", "kubelet", "kube-scheduler",
                    "registry", "nvidia-smi", "nvidia-container-cli", "workload"}
_SIG_ID = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+$")


@pytest.fixture(scope="module")
def signatures() -> dict:
    return load("signatures.toml")


def test_signature_rows(signatures: dict, operands: dict) -> None:
    rows = signatures["signature"]
    assert len(rows) >= 60, "aim for 60+ signatures"
    ids = [s["id"] for s in rows]
    assert len(ids) == len(set(ids)), "duplicate signature ids"
    components = {c["name"] for c in operands["component"]} | EXTRA_COMPONENTS
    markers = {m["path"] for m in operands["marker"]}
    for s in rows:
        w = f"signature {s.get('id')}"
        require(s, {"id", "tag", "layer", "severity", "pattern", "example"}, w)
        has_source(s, w)
        assert _SIG_ID.match(s["id"]), f"{w}: id must be dotted lowercase"
        assert s["tag"] in TAGS, f"{w}: unknown tag {s['tag']}"
        assert s["layer"] in LAYERS, w
        assert s["severity"] in SEVERITIES, w
        if "component" in s:
            assert s["component"] in components, f"{w}: unknown component {s['component']}"
        if "marker" in s:
            assert s["marker"] in markers, f"{w}: marker {s['marker']} not in operands.toml"
        if s["tag"] in {"marker-set", "marker-unset"}:
            assert "marker" in s, f"{w}: {s['tag']} needs a marker"


def test_signature_patterns(signatures: dict) -> None:
    for s in signatures["signature"]:
        w = f"signature {s['id']}"
        assert_re2_compatible(s["pattern"], w)
        rx = re.compile(s["pattern"])
        for line in [s["example"], *s.get("more_examples", [])]:
            assert rx.search(line), f"{w}: pattern does not match its example {line!r}"
        for line in s.get("not_examples", []):
            assert not rx.search(line), f"{w}: pattern matches a not_example {line!r}"


def test_signature_patterns_also_match_in_re2(signatures: dict) -> None:
    import re2

    for s in signatures["signature"]:
        rx = re2.compile(s["pattern"])
        assert rx.search(s["example"]), f"signature {s['id']}: RE2 does not match the example"


def test_seed_lines_are_covered(signatures: dict) -> None:
    """Lines quoted in seeds 001-003 must each be recognised by at least one signature."""
    seed_lines = [
        "[21-Nov-25_11:51:13] DTK driver build script start",
        "[21-Nov-25_11:51:23] Starting compilation of driver version 25.07-0.9.7.0",
        "[21-Nov-25_11:53:43] DTK driver build script end",
        "[21-Nov-25_11:51:06] Unsetting driver ready state",
        "[21-Nov-25_11:51:06] Awaiting openshift driver toolkit to complete NIC driver build",
        "Loading HCA driver and Access Layer:[60G[  OK  ]",
        "[21-Nov-25_11:58:39] Current mlx5_core driver version: 25.07-0.9.7",
        "[21-Nov-25_11:58:39] Setting driver ready state",
        "time=2025-11-21T11:51:41Z msg=Waiting for MOFED to be installed",
        "time=2025-11-21T11:51:41Z msg=Mellanox device found at 0000:01:00.0",
        "Loading NVIDIA Peer Memory kernel module...",
        "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument",
        "Required file 'nvidia-peermem.ko' not found in package",
        "Skipping BTF generation for nvidia-peermem.ko due to unavailability of vmlinux",
        "waiting for mellanox ofed and nvidia drivers to be installed",
        "failed to validate driver: error checking driver container status: exit status 1",
        'failed to get sandbox runtime: no runtime for "Nvidia" is configured',
    ]
    compiled = [(s["id"], re.compile(s["pattern"])) for s in signatures["signature"]]
    for line in seed_lines:
        assert any(rx.search(line) for _, rx in compiled), f"no signature for seed line {line!r}"
    # the two MOFED marker lines must not be confused
    by_id = dict(compiled)
    assert not by_id["mofed.driver-ready.set"].search("[21-Nov-25_11:51:06] Unsetting driver ready state")
    assert by_id["mofed.driver-ready.unset"].search("[21-Nov-25_11:51:06] Unsetting driver ready state")


def test_xid_signature_extracts_code(signatures: dict, xid: dict) -> None:
    sig = next(s for s in signatures["signature"] if s["id"] == "nvrm.xid")
    rx = re.compile(sig["pattern"])
    known = {r["code"] for r in xid["xid"]}
    for line in [sig["example"], *sig["more_examples"]]:
        m = rx.search(line)
        assert m and int(m["xid"]) in known, line
