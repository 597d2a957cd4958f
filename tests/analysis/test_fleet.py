"""Fleet grouping (analysis/fleet.py): N nodes failing the same way are one root cause naming the N nodes;
single-node reports are exactly what ranking gave; `--node` shows one node ungrouped."""

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gpusleuth.analysis import fleet
from gpusleuth.analysis.diagnose import _fleet_nodes, build_facts, diagnose
from gpusleuth.analysis.engine import run_checks
from gpusleuth.analysis.rank import rank
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Finding, Role, Severity
from gpusleuth.model.layers import Layer
from gpusleuth.report.json_report import render as render_json
from gpusleuth.report.text import render as render_text
from gpusleuth.sources import examples_root, open_source

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_scale import generate  # noqa: E402


def _finding(node: str, title: str, code: str = "OP001", line: int = 3) -> Finding:
    return Finding(code, "operand-crashloop", title, Layer.DEVICE_PLUGIN,
                   Severity.ERROR, Role.ROOT_CAUSE, f"explanation for {node}", node=node, component="nvidia-device-plugin-daemonset",
                   evidence=(Evidence(f"logs/{node}.log", line, f"error on {node}"),))


def test_n_identical_failures_are_one_root_cause_naming_the_n_nodes():
    nodes = [f"gpu-node-{i:03d}" for i in range(7)]
    fs = [_finding(n, f"nvidia-device-plugin-daemonset-{h} is crash-looping on {n}: exit code {i}")
          for i, (n, h) in enumerate(zip(nodes, ("x7k2p", "q9r4t", "m3n8v", "b5c6d", "f2g7h", "j4k9l", "p8q3r")))]
    other = _finding("gpu-node-000", "something else entirely", code="KD001")
    roots, findings, summary = fleet.group(fs + [other], fs + [other], nodes + ["gpu-node-100"], {})
    assert [f.code for f in roots] == ["OP001", "KD001"]
    g = roots[0].facts["fleet"]
    assert g["nodes"] == nodes and g["of_nodes"] == 8 and g["example_node"] == "gpu-node-000"
    assert "on 7 of 8 nodes" in roots[0].title
    assert [m["node"] for m in g["members"]] == nodes  # every node's evidence is kept ...
    assert all(m["evidence"][0]["artifact"] == f"logs/{m['node']}.log" for m in g["members"])
    assert roots[0].explanation == "explanation for gpu-node-000"  # ... one explanation, the example's
    assert roots[1] is other  # a cause on one node stays as ranking gave it
    assert summary["nodes"] == 8 and summary["failing_nodes"] == 7 and summary["without_errors"] == 1
    assert [r["nodes"] for r in summary["causes"]] == [7, 1]


def test_different_messages_stay_apart_and_labels_show_where_nodes_differ():
    fs = [_finding(f"n{i}", "plugin crash-looping: could not load NVML" if i < 4 else "plugin crash-looping: out of memory") for i in range(8)]
    labels = {f"n{i}": {"kernel": "6.8.0-bad" if i < 4 else "6.5.0-ok", "GPU product": "H100"} for i in range(12)}
    roots, _, _ = fleet.group(fs, fs, list(labels), labels)
    assert [len(f.facts["fleet"]["nodes"]) for f in roots] == [4, 4]
    differs = roots[0].facts["fleet"]["differs"]
    assert differs == [{"label": "kernel", "value": "6.8.0-bad", "affected": 4, "others_with_it": 0, "others": 8}]
    assert roots[0].facts["fleet"]["groups"] == {"kernel": {"6.8.0-bad": 4}, "GPU product": {"H100": 4}}


def test_single_node_findings_pass_through_unchanged():
    fs = [_finding("n1", "a"), _finding("n1", "b", code="KD001"), replace(_finding("n1", "c"), node=None)]
    roots, findings, summary = fleet.group(fs, fs, ["n1"], {})
    assert roots is fs and findings is fs and summary is None


@pytest.mark.parametrize("name", sorted(d.name for d in examples_root().iterdir() if d.is_dir()))
def test_bundled_examples_are_not_grouped(name):
    facts = build_facts(open_source(str(examples_root() / name)))
    roots, ordered = rank(run_checks(facts)[0])
    names, labels = _fleet_nodes(facts)
    g_roots, g_findings, summary = fleet.group(roots, ordered, names, labels)
    assert summary is None and g_roots is roots and g_findings is ordered


@pytest.fixture(scope="module")
def driver_fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet")
    generate(root, nodes=6, failing=1.0, lines=20, kinds=("driver",))
    return str(root)


def test_generated_fleet_one_failure_on_every_node(driver_fleet):
    report = diagnose(open_source(driver_fleet))
    breaking = [f for f in report.root_causes if f.severity.weight >= Severity.ERROR.weight]
    assert len(breaking) == 1
    top = breaking[0]
    assert top.code == "KD001" and top.facts["fleet"]["nodes"] == [f"gpu-node-{i:05d}" for i in range(6)]
    assert "on 6 of 6 nodes" in report.headline
    assert len({f.id for f in report.findings}) == len(report.findings)
    out = json.loads(render_json(report))
    members = next(f for f in out["root_causes"] if f["code"] == "KD001")["facts"]["fleet"]["members"]
    assert len(members) == 6 and all(m["evidence"] for m in members)
    assert render_json(report).count(top.explanation.split(".")[0]) <= 2  # once in root_causes, once in findings
    text = render_text(report)
    assert "Fleet" in text and "diagnose --node NAME" in text


def test_node_focus_is_that_node_ungrouped(driver_fleet):
    report = diagnose(open_source(driver_fleet), node="gpu-node-00003")
    assert report.findings and all(f.node in (None, "gpu-node-00003") for f in report.findings)
    assert all("fleet" not in f.facts for f in report.findings)
    assert {c.node for c in report.components} <= {None, "gpu-node-00003"}
    assert {e.node for e in report.timeline} <= {None, "gpu-node-00003"}


def test_cli_node_option(driver_fleet):
    from click.testing import CliRunner

    from gpusleuth.cli import cli

    whole = CliRunner().invoke(cli, ["diagnose", driver_fleet, "--format", "json", "--fail-on", "never"], catch_exceptions=False)
    one = CliRunner().invoke(cli, ["diagnose", driver_fleet, "--node", "gpu-node-00002", "--format", "json", "--fail-on", "never"],
                             catch_exceptions=False)
    whole_ids = {f["id"] for f in json.loads(whole.output)["findings"]}
    one_ids = {f["id"] for f in json.loads(one.output)["findings"]}
    assert any(i.startswith("KD001/gpu-node-00000") for i in whole_ids) and not any("gpu-node-00002" in i for i in whole_ids)
    assert any(i.startswith("KD001/gpu-node-00002") for i in one_ids)
    assert all(f["node"] in (None, "gpu-node-00002") for f in json.loads(one.output)["findings"])


@pytest.fixture(scope="module")
def mixed_fleets(tmp_path_factory):
    """The same fleet at two sizes, failing three ways (bench_scale.py), diagnosed."""
    out = {}
    for n in (12, 36):
        root = tmp_path_factory.mktemp(f"fleet{n}")
        generate(root, nodes=n, failing=0.75, lines=12)
        out[n] = diagnose(open_source(str(root)))
        out[f"{n} path"] = str(root)
    return out


def test_the_human_reports_of_a_fleet_do_not_grow_with_its_nodes(mixed_fleets):
    """Text, Markdown and HTML show a fleet's operands by name with their counts and its races grouped by rule, not
    every node's components, cascade and timeline: three times the nodes is about the same report."""
    from gpusleuth.report.html import render as render_html
    from gpusleuth.report.markdown import render as render_md

    small, big = mixed_fleets[12], mixed_fleets[36]
    for render in (render_text, render_md, render_html):
        a, b = render(small), render(big)
        assert len(b) < 1.3 * len(a), (render.__module__, len(a), len(b))
    md = render_md(big)
    assert "## Fleet" in md and "## The operands" in md and "| component | node |" not in md
    assert "gpusleuth diagnose --node NAME" in md and "gpusleuth timeline --node NAME" in md
    assert "; the same on each of its 9 nodes)" in md  # an action's command names the example node's pod
    driver = next(ln for ln in md.splitlines() if ln.startswith("| nvidia-driver-daemonset |"))
    failed = sum(1 for c in big.components if c.name == "nvidia-driver-daemonset" and c.state.value == "failed")
    assert f"{failed} failed" in driver and failed == big.root_causes[0].facts["fleet"]["nodes"].__len__()
    assert "(9)" in next(ln for ln in md.splitlines() if ln.startswith("- ") and "component(s) failed" in ln)  # names counted
    html = render_html(big)
    assert 'id="fleet"' in html and "<h2>The operands</h2>" in html and "<figure>" not in html
    text = render_text(big)
    assert "Operands" in text and "nvidia-driver-daemonset" in text
    assert "where it differs" in render_text(big, brief=True)  # --brief of a fleet keeps its table of causes


def test_a_single_node_report_keeps_its_cascade_and_timeline():
    from gpusleuth.report.html import render as render_html
    from gpusleuth.report.markdown import render as render_md

    report = diagnose(open_source("example:peermem-race"))
    md, html = render_md(report), render_html(report)
    assert "## The cascade" in md and "## Fleet" not in md and "## Event sequence" in md
    assert "<h2>The cascade</h2>" in html and 'id="fleet"' not in html


def test_timeline_of_a_fleet_without_node_groups_its_races_and_names_the_command(driver_fleet, tmp_path):
    from click.testing import CliRunner

    from gpusleuth.cli import cli

    whole = CliRunner().invoke(cli, ["timeline", driver_fleet], catch_exceptions=False)
    assert whole.exit_code == 0
    assert whole.output.startswith("6 nodes: each has its own timeline") and f"gpusleuth timeline --node NAME {driver_fleet}" in whole.output
    assert "toolkit-validation.log" not in whole.output  # no lanes of every node, one under the other
    one = CliRunner().invoke(cli, ["timeline", driver_fleet, "--node", "gpu-node-00002"], catch_exceptions=False)
    assert one.exit_code == 0 and one.output.startswith("time") and "each has its own timeline" not in one.output
    assert one.output.count("GPU driver:") == 1  # that node's phases, not the six nodes' one under the other
    svg = CliRunner().invoke(cli, ["timeline", driver_fleet, "--svg", str(tmp_path / "t.svg")])
    assert svg.exit_code == 2 and "add --node NAME" in svg.output and not (tmp_path / "t.svg").exists()


def test_node_that_the_artifacts_do_not_name_is_an_error_not_a_healthy_node(mixed_fleets):
    """A typo in --node used to report the fleet's health signs as that node's: HEALTHY, in front of failing nodes."""
    from click.testing import CliRunner

    from gpusleuth.cli import cli
    from gpusleuth.errors import UnknownNode

    path = mixed_fleets["12 path"]
    with pytest.raises(UnknownNode) as caught:
        diagnose(open_source(path), node="gpu-node-99999")
    assert len(caught.value.known) == 12 and "gpu-node-00003" in caught.value.known
    for command in ("diagnose", "timeline"):
        r = CliRunner().invoke(cli, [command, path, "--node", "gpu-node-3"])
        assert r.exit_code == 2 and "no node named gpu-node-3 among its 12 node(s); did you mean gpu-node-00003?" in r.output, r.output


def test_one_node_is_judged_on_its_own_health_signs(mixed_fleets):
    path, report = mixed_fleets["12 path"], mixed_fleets[12]
    failing = {n for f in report.findings if f.severity.weight >= Severity.ERROR.weight
               for n in (f.facts.get("fleet", {}).get("nodes") or [f.node]) if n}
    healthy = sorted(f"gpu-node-{i:05d}" for i in range(12) if f"gpu-node-{i:05d}" not in failing)
    assert healthy and failing
    one = diagnose(open_source(path), node=healthy[0])
    assert one.source["node"] == healthy[0]
    assert one.extras["health"] and all(h["node"] in (None, healthy[0]) for h in one.extras["health"])
    sick = diagnose(open_source(path), node=sorted(failing)[0])
    assert sick.verdict == "broken" and all(h["node"] in (None, sorted(failing)[0]) for h in sick.extras["health"])


def test_one_nodes_marker_tree_is_that_nodes_own(mixed_fleets):
    """Markers are files on a node: --node used to merge every node's by path, so a node whose toolkit failed was
    told its .driver-ctr-ready was never created because the driver pods of other nodes had failed."""
    fleet = mixed_fleets["12 path"]
    whole = mixed_fleets[12]
    toolkit_node = next(f.node for f in whole.root_causes if f.code == "TK001")
    driver_node = next(f.node for f in whole.root_causes if f.code == "KD001")
    one = diagnose(open_source(fleet), node=toolkit_node)
    tree = {m["path"]: m for m in one.extras["markers"]}
    assert "nvidia-driver-daemonset is failed" not in tree.get("/run/nvidia/validations/.driver-ctr-ready", {}).get("status", "")
    other = diagnose(open_source(fleet), node=driver_node)
    assert "nvidia-driver-daemonset is failed" in {m["path"]: m for m in other.extras["markers"]}["/run/nvidia/validations/.driver-ctr-ready"]["status"]
    plugin_node = next(f.node for f in whole.root_causes if f.code == "RT111")  # its driver and toolkit came up
    plugin = diagnose(open_source(fleet), node=plugin_node)
    assert not [m for m in plugin.extras["markers"] if m["status"].startswith("never created")], plugin.extras["markers"]
