"""knowledge/runtimes.toml stays consistent: patterns match their examples, layouts fill, keys are known."""

from __future__ import annotations

import re

import pytest

from gpusleuth.knowledge import table
from gpusleuth.facts.runtime import _PLACEHOLDER, distributions

T = table("runtimes")


@pytest.mark.parametrize("row", T["handler_error"] + T["toolkit_failure"], ids=lambda r: r["id"])
def test_patterns_match_their_examples(row):
    m = re.search(row["pattern"], row["example"])
    assert m, row["id"]
    if "needle" in row:
        assert row["needle"] in row["example"]
    if row in T["handler_error"]:
        assert m.group("handler") and row["engine"] in ("containerd", "docker", "crio")
    else:
        assert row["cause"] in ("socket", "config", "restart")
    assert row["source"]


def test_toolkit_failures_are_ordered_most_specific_first():
    """The first row matching each example is that row itself (a fallback row excepted)."""
    rows = T["toolkit_failure"]
    for row in rows:
        first = next(r for r in rows if re.search(r["pattern"], row["example"]))
        assert first is row or row.get("fallback"), (row["id"], first["id"])


def test_distributions_are_unique_and_layouts_fill():
    ids = [d.id for d in distributions()]
    assert len(ids) == len(set(ids)) and "standard" in ids
    for d in distributions():
        assert d.layouts, d.id
        for lay in d.layouts:
            names = set(_PLACEHOLDER.findall(lay.config)) | set(_PLACEHOLDER.findall(lay.socket))
            assert set(_PLACEHOLDER.findall(lay.toolkit_config or "")) <= names | ({"data"} if lay.data_hint else set()), d.id


def test_toolkit_defaults_are_the_operators():
    tk = T["toolkit"]
    assert (tk["default_config"], tk["default_socket"]) == ("/etc/containerd/config.toml", "/run/containerd/containerd.sock")
    assert tk["config_env"][0] == "CONTAINERD_CONFIG" and tk["socket_env"][0] == "CONTAINERD_SOCKET"


def test_config_versions_name_the_cri_plugin():
    assert {r["version"]: r["cri_plugin"] for r in T["config_version"]} == {
        1: "cri", 2: "io.containerd.grpc.v1.cri", 3: "io.containerd.cri.v1.runtime"}
    assert "BinaryName" in T["runc"]["option_keys"] and "SystemdCgroup" in T["runc"]["option_keys"]
