"""YAML alias bombs: refused with a one-line gap naming the file, in well under a second, with bounded memory;
ordinary anchors still work, and an alias is never walked twice."""

from __future__ import annotations

import resource
import time

import pytest
import yaml
from conftest import doc_from_text

from gpusleuth.analysis.diagnose import build_facts
from gpusleuth.parsers import gpu_sharing, helm, k8s_objects
from gpusleuth.parsers.yamlsafe import AliasBomb, check_aliases, node_paths
from gpusleuth.sources.loose import read_directory


def laughs(header: str, indent: str = "  ", levels: int = 9) -> str:
    """The classic: nine anchors of nine aliases each, 9^9 (387 million) strings once expanded."""
    out = [header, f'{indent}a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    prev = "a"
    for n in "bcdefghijk"[: levels - 1]:
        out.append(f"{indent}{n}: &{n} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = n
    return "\n".join(out) + "\n"


K8S_BOMB = laughs("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\n  namespace: default\ndata:")
HELM_BOMB = laughs("# values.yaml of the gpu-operator chart\ndriver:\n  enabled: true\ntoolkit:", indent="  ")
SHARING_BOMB = laughs("version: v1\nsharing:\n  timeSlicing:\n    resources: []\nflags:", indent="  ")


def test_the_bomb_is_small():
    assert len(K8S_BOMB.encode()) < 600


def _peak_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@pytest.mark.parametrize("parse, text", [
    (k8s_objects.parse_yaml, K8S_BOMB),
    (helm.parse_values, HELM_BOMB),
    (gpu_sharing.parse, SHARING_BOMB),
])
def test_each_yaml_parser_refuses_an_alias_bomb_quickly(parse, text):
    doc = doc_from_text(text, "bomb.yaml")
    before = _peak_kib()
    t0 = time.perf_counter()
    with pytest.raises(AliasBomb) as err:
        list(parse.parse(doc))
    assert time.perf_counter() - t0 < 1.0
    assert _peak_kib() - before < 50 * 1024  # KiB: the composed graph is a few hundred nodes
    msg = str(err.value)
    assert "\n" not in msg and "alias" in msg


def test_release_secret_and_cdi_loaders_check_aliases_too():
    from gpusleuth.parsers import cdi
    with pytest.raises(AliasBomb):
        list(helm.parse_release_secret.parse(doc_from_text(laughs("type: helm.sh/release.v1\nkind: Secret\ndata:"), "r.yaml")))
    with pytest.raises(AliasBomb):
        list(cdi.parse.parse(doc_from_text(laughs('cdiVersion: "0.5.0"\nkind: nvidia.com/gpu\nx:'), "cdi.yaml")))


def test_a_bomb_in_a_source_is_a_one_line_gap_naming_the_file(tmp_path):
    (tmp_path / "bomb.yaml").write_text(K8S_BOMB)
    (tmp_path / "pods.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ok\n  namespace: x\nspec: {}\n")
    t0 = time.perf_counter()
    facts = build_facts(read_directory(tmp_path))
    assert time.perf_counter() - t0 < 5.0
    gaps = [g for g in facts.gaps if g.artifact == "bomb.yaml"]
    assert gaps and "alias" in gaps[0].why and "\n" not in gaps[0].why
    assert any(getattr(p, "name", None) == "ok" for p in facts.all(k8s_objects.Pod))


def test_a_bomb_after_a_good_document_keeps_the_good_one():
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: first\nspec: {}\n---\n" + K8S_BOMB
    out = list(k8s_objects.parse_yaml.parse(doc_from_text(text, "two.yaml")))
    assert any(getattr(o, "name", None) == "first" for o in out)
    assert any(getattr(o, "why", "").startswith("YAML aliases expand") for o in out)


def test_a_self_referring_alias_is_refused():
    with pytest.raises(AliasBomb):
        check_aliases(yaml.compose("a: &a [1, *a]", Loader=yaml.SafeLoader))


def test_ordinary_anchors_still_parse_with_their_lines():
    text = (
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ds\n  namespace: gpu-operator\n"
        "spec:\n  template:\n    spec:\n      tolerations: &tol\n        - key: nvidia.com/gpu\n          operator: Exists\n"
        "      x: *tol\n"
    )
    out = list(k8s_objects.parse_yaml.parse(doc_from_text(text, "ds.yaml")))
    obj = next(o for o in out if getattr(o, "kind", None) == "DaemonSet" and hasattr(o, "key_lines"))
    assert obj.key_lines["spec.template.spec.tolerations.0.key"] == 10
    assert obj.key_lines["spec.template.spec.x"] == 12
    assert obj.body["spec"]["template"]["spec"]["x"][0]["key"] == "nvidia.com/gpu"


def test_the_walk_never_descends_into_an_alias_twice():
    node = yaml.compose("a: &a {k: 1, j: 2}\nb: *a\nc: *a\n", Loader=yaml.SafeLoader)
    paths = [p for p, _ in node_paths(node)]
    assert paths == [("a",), ("a", "k"), ("a", "j"), ("b",), ("c",)]


def test_deep_nesting_does_not_recurse():
    """libyaml stops at 1,000 levels (a YAMLError, a gap); the walks themselves use no recursion at all."""
    depth = 5000
    mark = yaml.Mark("x", 0, 0, 0, None, None)
    node = yaml.SequenceNode("tag:yaml.org,2002:seq", [], mark, mark)
    for _ in range(depth - 1):
        node = yaml.SequenceNode("tag:yaml.org,2002:seq", [node], mark, mark)
    assert sum(1 for _ in node_paths(node)) == depth - 1
    assert check_aliases(node) == depth


def _yaml_texts():
    from pathlib import Path

    from gpusleuth.sources import examples_root
    for root in (examples_root(), Path(__file__).parents[1]):
        for path in sorted(root.rglob("*")):
            if path.suffix in (".yaml", ".yml") and path.is_file():
                yield str(path), path.read_text(errors="replace")
    yield "pods", yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "labels": {"app": "x"}},
         "spec": {"containers": [{"name": "c", "args": ["--a", "b"]}]}} for i in range(50)]})


def _distinct_nodes(node) -> int:
    from gpusleuth.parsers.yamlsafe import _children
    seen, stack = set(), [node]
    while stack:
        n = stack.pop()
        if id(n) not in seen:
            seen.add(id(n))
            stack.extend(_children(n))
    return len(seen)


def test_text_without_a_star_composes_to_a_tree():
    """may_alias lets a parser skip the alias walk: where it says no, no node of the composed document is shared
    (what check_aliases counts equals the distinct nodes), on every YAML document of the examples and the tests'
    files and a pod list."""
    from gpusleuth.parsers.yamlsafe import loader_class, may_alias
    checked = 0
    for name, text in _yaml_texts():
        if may_alias(text):
            continue
        loader = loader_class()(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is not None:
                    assert check_aliases(node) == _distinct_nodes(node), name
                    checked += 1
        except yaml.YAMLError:
            continue
        finally:
            loader.dispose()
    assert checked >= 10
    assert may_alias("a: &x [1]\nb: *x\n") and not may_alias("a: &x [1]\nb: [1]\n")


def test_a_pod_list_reads_the_same_whether_or_not_it_is_walked_for_aliases(monkeypatch):
    text = next(text for name, text in _yaml_texts() if name == "pods")
    plain = list(k8s_objects.parse_yaml.parse(doc_from_text(text, "pods.yaml")))
    monkeypatch.setattr(k8s_objects, "may_alias", lambda text: True)
    walked = list(k8s_objects.parse_yaml.parse(doc_from_text(text, "pods.yaml")))
    assert plain == walked and len(plain) == 50
