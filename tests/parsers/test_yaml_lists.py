"""A big YAML List read in parts on several cores (parsers/yaml_lists.py) gives the objects of the whole read, line
for line; anything it cannot cut safely is read whole, with the whole read's gaps and errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from conftest import doc_from_text

from gpusleuth import parallel
from gpusleuth.errors import UnusableData
from gpusleuth.model.finding import Gap
from gpusleuth.parsers import k8s_objects, yaml_lists
from gpusleuth.sources import examples_root

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="parts are read in forked processes")


@pytest.fixture(autouse=True)
def _small_and_many_cores(monkeypatch):
    """Parts for any size, on four cores, whatever machine runs the tests."""
    monkeypatch.setattr(yaml_lists, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(parallel, "cores", lambda: 4)


def _pod(i: int) -> dict:
    """Pods of a few shapes: running or waiting, with or without init containers, a literal block holding lines
    that start with `- ` and `items:`, a comment-like value, a multi-line command."""
    status = ({"running": {"startedAt": "2025-06-01T11:00:00Z"}} if i % 3 else
              {"waiting": {"reason": "CrashLoopBackOff", "message": f"back-off restarting failed container {i}"}})
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"nvidia-driver-daemonset-{i:05d}", "namespace": "gpu-operator",
                     "labels": {"app": "nvidia-driver-daemonset", "pod-template-hash": f"{i * 7919 % 100000:05d}"},
                     "ownerReferences": [{"kind": "DaemonSet", "name": "nvidia-driver-daemonset", "controller": True}]},
        "spec": {"nodeName": f"gpu-node-{i:05d}", "containers": [{
            "name": "nvidia-driver-ctr", "image": "nvcr.io/nvidia/driver:570.158.01",
            "args": ["init", "# not a comment", "- not an item"],
            "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
            "resources": {"limits": {"nvidia.com/gpu": 1}} if i % 4 == 0 else {}}]},
        "status": {"phase": "Running" if i % 3 else "Pending", "containerStatuses": [{
            "name": "nvidia-driver-ctr", "image": "nvcr.io/nvidia/driver:570.158.01", "ready": bool(i % 3),
            "restartCount": i % 5, "state": status}]},
    }
    if i % 5 == 0:
        pod["spec"]["initContainers"] = [{"name": "k8s-driver-manager", "image": "nvcr.io/nvidia/k8s-driver-manager:v0.8",
                                          "command": ["sh", "-c", "- a\nitems:\n- b\n  - c\n"]}]
        pod["status"]["initContainerStatuses"] = [{"name": "k8s-driver-manager", "ready": True, "restartCount": 0,
                                                   "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]
    return pod


def _list_text(n: int, kind: str = "List") -> str:
    return yaml.safe_dump({"apiVersion": "v1", "items": [_pod(i) for i in range(n)], "kind": kind,
                           "metadata": {"resourceVersion": ""}}, default_flow_style=False, sort_keys=False)


def _both(text: str, name: str = "gpu_operand_pods.yaml"):
    doc = doc_from_text(text, name)
    whole = k8s_objects._read_yaml(doc)
    return doc, list(k8s_objects.parse_yaml.parse(doc)), whole


def test_a_list_read_in_parts_gives_the_objects_of_the_whole_read():
    doc, parted, whole = _both(_list_text(120))
    parts = yaml_lists.parts_for(doc)
    assert parts is not None and len(parts) == 4
    assert yaml_lists.read_in_parts(doc, k8s_objects._read_yaml) is not None  # the parts path, not a fallback
    assert len(whole) == 120 and parted == whole
    assert [p.evidence for p in parted] == [p.evidence for p in whole]
    assert [p.manifest.key_lines for p in parted] == [p.manifest.key_lines for p in whole]
    assert [c.evidence for p in parted for c in p.containers] == [c.evidence for p in whole for c in p.containers]


def test_parts_start_at_items_and_cover_the_block():
    doc = doc_from_text(_list_text(50), "pods.yaml")
    parts = yaml_lists.parts_for(doc)
    lines = doc.lines
    assert all(lines[s].startswith("- ") for s, _ in parts)
    assert [e for _, e in parts[:-1]] == [s for s, _ in parts[1:]]
    assert lines[parts[0][0] - 1] == "items:" and lines[parts[-1][1]].startswith("kind:")


def test_a_pod_list_kind_and_other_kinds_read_the_same():
    for kind in ("PodList", "List"):
        _, parted, whole = _both(_list_text(20, kind))
        assert parted == whole and len(whole) == 20


@pytest.mark.parametrize("change", [
    lambda t: "---\n" + t,  # a document marker: maybe several documents
    lambda t: t.replace("\n- ", "\n  - ").replace("\nitems:\n", "\nitems:\n", 1),  # items indented
    lambda t: t.replace("# not a comment", "*alias"),  # maybe an alias
    lambda t: t.replace("kind: List", "kind: Secret"),  # not a List
    lambda t: t.replace("items:\n", "items: []\nother:\n", 1),  # no items block
])
def test_other_layouts_are_read_whole(change):
    doc = doc_from_text(change(_list_text(20)), "pods.yaml")
    assert yaml_lists.read_in_parts(doc, k8s_objects._read_yaml) is None


def test_a_part_that_does_not_read_cleanly_leaves_the_whole_read_to_say_why():
    text = _list_text(40)
    lines = text.split("\n")
    bad = next(i for i, ln in enumerate(lines) if "nvidia-driver-daemonset-00030" in ln)
    lines[bad] += ": [unclosed"
    doc = doc_from_text("\n".join(lines), "pods.yaml")
    assert yaml_lists.read_in_parts(doc, k8s_objects._read_yaml) is None
    with pytest.raises(UnusableData) as whole:
        k8s_objects._read_yaml(doc)
    with pytest.raises(UnusableData) as parted:
        list(k8s_objects.parse_yaml.parse(doc))
    assert str(parted.value) == str(whole.value) and f"line {bad + 1}" in str(whole.value)


@pytest.mark.parametrize("share", [0.3, 0.5, 0.77])
def test_a_list_cut_short_reads_as_the_whole_read_does(share):
    text = _list_text(40)
    doc = doc_from_text(text[: int(len(text) * share)], "pods.yaml")

    def read(parse):
        try:
            return list(parse(doc))
        except UnusableData as exc:
            return str(exc)

    assert read(k8s_objects.parse_yaml.parse) == read(k8s_objects._read_yaml)


def test_every_yaml_file_of_the_examples_and_tests_reads_the_same():
    roots = (examples_root(), Path(__file__).parents[1])
    checked = 0
    for path in sorted(p for r in roots for p in r.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()):
        text = path.read_text(errors="replace")
        try:
            doc = doc_from_text(text, path.name)
        except AssertionError:  # a paste of several documents
            continue
        try:
            whole = k8s_objects._read_yaml(doc)
        except UnusableData:
            continue
        assert list(k8s_objects.parse_yaml.parse(doc)) == whole, path
        checked += 1
    assert checked >= 5


def test_a_single_core_or_a_small_list_reads_whole(monkeypatch):
    doc = doc_from_text(_list_text(20), "pods.yaml")
    monkeypatch.setattr(parallel, "cores", lambda: 1)
    assert yaml_lists.parts_for(doc) is None
    monkeypatch.setattr(parallel, "cores", lambda: 4)
    monkeypatch.setattr(yaml_lists, "PARALLEL_BYTES", 1 << 30)
    assert yaml_lists.parts_for(doc) is None


def test_a_fleet_whose_pods_are_one_yaml_list_is_diagnosed_as_from_json_pages(tmp_path, monkeypatch):
    """The generated fleet (bench/bench_scale.py) with its pods as one YAML List, read in parts, against the same
    pods as JSON pages: the same causes, findings and node counts (their evidence cites other files, so not it)."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
    from bench_scale import generate

    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.sources.loose import read_directory

    used = []
    monkeypatch.setattr(yaml_lists, "part_document", lambda *a, f=yaml_lists.part_document: used.append(1) or f(*a))
    reports = {}
    for pods_yaml in (False, True):
        root = tmp_path / f"yaml-{pods_yaml}"
        generate(root, 24, pods_yaml=pods_yaml)
        assert (root / "namespaces/gpu-operator/pods.yaml").exists() == pods_yaml
        r = diagnose(read_directory(root))
        reports[pods_yaml] = (r.verdict, [(c.code, c.title) for c in r.root_causes], sorted((f.code, f.title) for f in r.findings))
    assert used and reports[True] == reports[False] and reports[False][1]
