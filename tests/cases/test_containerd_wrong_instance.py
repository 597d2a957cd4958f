"""Golden: example:containerd-wrong-instance (seed 003) — the same facts as tests/cases/test_seed003.py,
on the bundled example, by meaning: whatever its files are called, the report must say that kubelet's
containerd lacks the nvidia runtime because the toolkit was pointed at the other containerd."""

import re

import pytest
import yaml
from golden import report

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.report import renderer
from gpusleuth.sources import example_names, open_source

NAME = "containerd-wrong-instance"
pytestmark = pytest.mark.skipif(NAME not in example_names(), reason="needs example containerd-wrong-instance from branch examples")


@pytest.fixture(scope="module")
def rep():
    return report(f"example:{NAME}")


def test_first_root_cause_is_kubelets_containerd_without_the_runtime(rep):
    root = rep["root_causes"][0]
    assert (root["code"], root["layer"]) == ("RT002", "container-runtime")
    texts = [e["text"] for e in root["evidence"]]
    assert any("runtimes.nvidia" in t for t in texts)  # the config that has it
    assert any(re.search(r"runtimes\.(?!nvidia)", t) or "imports" in t for t in texts)  # kubelet's config without it
    assert any("toolkit" in t or "CONTAINERD_" in t for t in texts)  # what the toolkit was told
    assert any("--container-runtime-endpoint" in t for t in texts)  # which containerd kubelet talks to
    assert len({e["artifact"] for e in root["evidence"]}) >= 2


def test_the_fix_points_the_toolkit_at_kubelets_containerd(rep):
    root = rep["root_causes"][0]
    fix = next(f for f in root["fixes"] if f["kind"] == "permanent")
    env = {e["name"]: e["value"] for e in yaml.safe_load(fix["snippet"])["toolkit"]["env"]}
    assert env["CONTAINERD_CONFIG"] == root["facts"]["kubelet_config"] or env["CONTAINERD_CONFIG"].endswith(".tmpl")
    assert env["CONTAINERD_SOCKET"] == root["facts"]["kubelet_socket"]
    assert env["CONTAINERD_RUNTIME_CLASS"] == "nvidia"
    assert any(re.match(r"helm upgrade gpu-operator(-\d+)? nvidia/gpu-operator -n \S+ ", c) for c in fix["commands"]) or \
        fix["commands"] == ["helm list -A --filter gpu-operator"]


def test_the_malformed_config_of_the_other_containerd_is_reported_too(rep):
    bad = next(f for f in rep["findings"] if f["code"] == "RT008")
    assert bad["facts"]["config"] == "/etc/containerd/config.toml" and bad["severity"] == "warning"
    assert "is running" in bad["explanation"]
    toolkit = next(f for f in rep["findings"] if f["code"] == "TK001")
    assert "not valid TOML" in toolkit["explanation"] and any("duplicated tables" in e["text"] for e in toolkit["evidence"])


def test_symptoms_are_linked_to_it(rep):
    for f in rep["findings"]:
        if f["code"] in ("RT001", "TK001"):
            assert f["role"] == "symptom" and f["caused_by"] == ["RT002"], f


def test_readable_in_the_terminal():
    text = renderer("text")(diagnose(open_source(f"example:{NAME}")), color=False)
    assert "RT002" in text and "CONTAINERD_SOCKET" in text and "Traceback" not in text


def test_renamed_and_quoted_copies_give_the_same_diagnosis(tmp_path):
    from golden import disguised

    from gpusleuth.sources.loose import read_directory

    for quote in (False, True):
        (tmp_path / str(quote)).mkdir()
        copy = disguised(NAME, tmp_path / str(quote), quote=quote)
        assert diagnose(read_directory(copy)).root_causes[0].code == "RT002"
