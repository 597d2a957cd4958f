"""The configuration schemas (knowledge/schemas/): every file says where it came from, the validator finds
what a component would drop, and the components' own default configs raise nothing."""

import json
from pathlib import Path

import pytest
import yaml

from gpusleuth.facts.validation import check_path, snippet, validate
from gpusleuth.knowledge.config_schemas import REQUIRED_PROVENANCE, load, names
from gpusleuth.model.document import Document
from gpusleuth.parsers.containerd_config import parse_config

FIXTURES = Path(__file__).parent.parent / "fixtures" / "schemas"
SCHEMAS = Path(__file__).parent.parent.parent / "src" / "gpusleuth" / "knowledge" / "schemas"


@pytest.mark.parametrize("path", sorted(SCHEMAS.glob("*.json")), ids=lambda p: p.stem)
def test_every_schema_states_its_provenance(path):
    data = json.loads(path.read_text())
    prov = data.get("provenance") or {}
    missing = [k for k in REQUIRED_PROVENANCE if not prov.get(k)]
    assert not missing, f"{path.name} lacks provenance {missing}"
    assert prov["source"].startswith("https://github.com/")
    assert prov.get("commit") or prov.get("curated"), f"{path.name}: neither a commit nor a curated note"
    assert prov["version"] == prov["refs"][-1]
    assert isinstance(data.get("schema"), dict) and data["schema"]


def test_the_docs_table_lists_every_schema():
    table = (Path(__file__).parent.parent.parent / "docs" / "schemas.md").read_text()
    for name in names():
        prov = load(name).provenance
        assert f"`{name}`" in table and prov["version"] in table and prov["commit"][:12] in table, name


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("gpu-operator-values-*.yaml")), ids=lambda p: p.stem)
def test_the_operator_charts_own_values_are_valid(fixture):
    version = fixture.stem.rsplit("-", 1)[-1]
    problems = validate(yaml.safe_load(fixture.read_text()), load("gpu-operator-values"), version=version)
    assert [p.message for p in problems if p.kind != "deprecated"] == []


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("nvidia-device-plugin-values-*.yaml")), ids=lambda p: p.stem)
def test_the_plugin_charts_own_values_are_valid(fixture):
    version = fixture.stem.rsplit("-", 1)[-1]
    problems = validate(yaml.safe_load(fixture.read_text()), load("device-plugin-values"), version=version)
    assert [p.message for p in problems if p.kind != "deprecated"] == []


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("clusterpolicy-sample-*.yaml")), ids=lambda p: p.stem)
def test_the_operators_sample_clusterpolicy_is_valid(fixture):
    version = fixture.stem.rsplit("-", 1)[-1]
    body = yaml.safe_load(fixture.read_text())
    problems = validate(body["spec"], load("clusterpolicy-crd"), version=version, root=("spec",), at=("spec",))
    assert [p.message for p in problems if p.kind != "deprecated"] == []


def _cri_problems(name: str):
    from gpusleuth.checks.container_runtime import _cri_problems

    path = FIXTURES / name
    return _cri_problems(parse_config(Document(path.name, tuple(path.read_text().split("\n")))))


def test_containerds_documented_v2_config_for_2x_is_valid():
    # docs/cri/config.md of containerd v2.3.4: a version 2 file with keys only containerd 2.x has
    assert _cri_problems("containerd-cri-docs-v2.3.4.toml") == []


def test_containerds_own_1x_docs_put_top_level_keys_under_a_subtable():
    # docs/cri/config.md of containerd v1.7.27 (https://github.com/containerd/containerd/blob/v1.7.27/docs/cri/config.md):
    # after `[plugins."io.containerd.grpc.v1.cri".x509_key_pair_streaming]` every key, indented or not, belongs to that
    # table in TOML, so max_container_log_line_size, enable_cdi ... are not read where the comments say they are.
    found = {p.dotted: (p, ev) for p, ev in _cri_problems("containerd-cri-docs-v1.7.27.toml")}
    p, ev = found["x509_key_pair_streaming.enable_cdi"]
    assert p.kind == "misplaced-key" and p.belongs == ("enable_cdi",) and ev.line == 116
    assert len(found) == 12 and all(q.belongs and len(q.belongs) == 1 for q, _ in found.values())


def test_misplaced_unknown_case_type_enum_and_versions():
    body = yaml.safe_load("""
version: v1
flags:
  migStrategy: Mixed
  renameByDefault: true
  plugin:
    deviceIDStrategy: uid
sharing:
  timeslicing: {}
  mps:
    resources:
    - name: nvidia.com/gpu
      replicas: "2"
""")
    got = {p.dotted: p for p in validate(body, load("device-plugin-config"), version="v0.14.5")}
    assert got["flags.renameByDefault"].kind == "misplaced-key" and got["flags.renameByDefault"].belongs == ("sharing", "timeSlicing", "renameByDefault")
    assert got["flags.migStrategy"].kind == "bad-value" and got["flags.migStrategy"].closest == "mixed"
    assert got["flags.plugin.deviceIDStrategy"].closest == "uuid"
    assert got["sharing.timeslicing"].kind == "wrong-case" and got["sharing.timeslicing"].closest == "timeSlicing"
    assert got["sharing.mps"].kind == "not-yet" and "v0.15" in got["sharing.mps"].message
    assert got["sharing.mps.resources[0].replicas"].kind == "wrong-type"
    assert snippet(got["flags.renameByDefault"]) == "sharing:\n  timeSlicing:\n    renameByDefault: true\n"
    # the same file for a plugin that has MPS: no version problem
    assert "sharing.mps" not in {p.dotted for p in validate(body, load("device-plugin-config"), version="v0.17.4")}


def test_dotted_map_keys_and_runc_options_are_open():
    schema = load("containerd-cri-v2")
    assert check_path(("registry", "mirrors", "docker", "io", "endpoint"), schema) is None
    assert check_path(("containerd", "runtimes", "nvidia", "options", "BinaryName"), schema) is None
    p = check_path(("containerd", "runtimes", "nvidia", "privileged_without_host_device"), schema)
    assert p.kind == "unknown-key" and p.closest == "privileged_without_host_devices"


def test_a_slip_of_a_sibling_key_is_that_key_not_the_name_read_elsewhere():
    # `enabled` exists in many places of the operator's values; beside `enable` it is a slip of that key
    (p,) = validate({"node-feature-discovery": {"prometheus": {"enabled": True}}}, load("gpu-operator-values"))
    assert p.kind == "unknown-key" and p.closest == "enable" and p.belongs is None
    # a key that is no slip of a sibling is still placed where the schema reads it
    (q,) = validate({"node-feature-discovery": {"prometheus": {"extraLabelNs": ["nvidia.com"]}}}, load("gpu-operator-values"))
    assert q.kind == "misplaced-key" and q.belongs == ("node-feature-discovery", "master", "extraLabelNs")
