"""The exception model: a bug in one check is its own error, missing input is 'skipped', never fatal."""

from typing import Iterable

import pytest

from gpusleuth.analysis.engine import Selection, ingest, run_checks
from gpusleuth.checks.base import check
from gpusleuth.errors import NotApplicable, UnusableData
from gpusleuth.facts import Cluster, Facts
from gpusleuth.model.finding import Hit, Severity
from gpusleuth.model.k8s import Pod

DOC = """Short summary.

        What it does: a.
        Why it matters: b.
        How to fix: c.
        """


def _mk(code, body, inputs="cluster"):
    def fn(cluster: Cluster) -> Iterable[Hit]:
        return body(cluster)

    fn.__doc__ = DOC
    return check(code, f"test-{code.lower()}")(fn)


def _facts_with_pod():
    f = Facts()
    f.add(Pod(name="nvidia-driver-daemonset-abc", namespace="gpu-operator", status="CrashLoopBackOff"))
    return f


def test_a_crashing_check_is_isolated_and_reported():
    def boom(cluster):
        raise KeyError("spec")

    def ok(cluster):
        return [Hit("driver crashed", "because", severity=Severity.ERROR)]

    facts = _facts_with_pod()
    findings, outcomes = run_checks(facts, checks=[_mk("KD901", boom), _mk("KD902", ok)])
    assert [f.code for f in findings] == ["KD902"]
    status = {o.code: o.status for o in outcomes}
    assert status == {"KD901": "error", "KD902": "fired"}
    assert any("KD901" in e and "KeyError" in e for e in facts.errors)


def test_missing_input_skips_with_reason_and_unusable_data_is_named():
    def unusable(cluster):
        raise UnusableData("config.toml line 3: invalid TOML")

    def ok(cluster):
        return []

    def not_mine(cluster):
        raise NotApplicable("no driver pod on a GPU node")

    findings, outcomes = run_checks(Facts(), checks=[_mk("KD903", ok)])
    assert outcomes[0].status == "skipped" and "no Kubernetes objects" in outcomes[0].reason
    assert outcomes[0].missing == "Cluster"  # the required input that was absent
    _, outcomes = run_checks(_facts_with_pod(), checks=[_mk("KD904", unusable), _mk("KD905", not_mine)])
    assert outcomes[0].status == "skipped" and "data unusable" in outcomes[0].reason
    assert outcomes[1].status == "skipped" and outcomes[1].missing is None  # the check's own reason, not an input


def test_without_kubernetes_objects_what_only_a_cluster_holds_is_one_gap(tmp_path):
    """A node's own files: one line for the cluster's inputs (not one per input), the node's own stay apart."""
    from pathlib import Path

    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.checks import all_checks
    from gpusleuth.facts import scope
    from gpusleuth.sources.loose import read_directory

    required = {t.__name__ for c in all_checks() for _, t in c.requires}
    assert scope.CLUSTER_ONLY <= required  # a renamed type cannot drop out unnoticed
    report = diagnose(read_directory(Path(__file__).parents[1] / "node" / "h100" / "bundle"))
    gaps = [str(g) for g in report.gaps]
    (cluster,) = [g for g in gaps if "no Kubernetes objects" in g]
    assert "Helm release and ClusterPolicy" in cluster and "gpusleuth collect" in cluster
    assert not any("no GPU Operator Helm release" in g or "no RuntimeClass" in g for g in gaps), gaps
    assert any("no CDI spec" in g for g in gaps)  # a node's own input: its own line
    (tmp_path / "pods.txt").write_text(
        "$ kubectl get pods -n gpu-operator -o wide\n"
        "NAME                            READY   STATUS     RESTARTS   AGE   IP           NODE\n"
        "nvidia-driver-daemonset-7xk2p   0/1     Init:0/1   0          12m   10.42.0.17   gpu-node-1\n")
    gaps = [str(g) for g in diagnose(read_directory(tmp_path)).gaps]
    assert any("no GPU Operator Helm release" in g for g in gaps), gaps  # with a cluster, each missing input is named


def test_selection_by_code_prefix_and_layer():
    c = _mk("KD905", lambda cl: [])
    assert Selection(select=("KD",)).wants(c)
    assert Selection(select=("kernel-driver",)).wants(c)
    assert not Selection(ignore=("KD905",)).wants(c)
    assert not Selection(select=("RT",)).wants(c)


def test_check_declaration_rejects_bad_codes_and_docs():
    def fn(cluster: Cluster) -> Iterable[Hit]:
        """Only a summary."""
        return []

    with pytest.raises(ValueError, match="lacks"):
        check("KD906", "x")(fn)
    fn.__doc__ = DOC
    with pytest.raises(ValueError, match="two letters"):
        check("K906", "x")(fn)
    with pytest.raises(ValueError, match="layer prefix"):
        check("ZZ906", "x")(fn)


def test_a_sniffer_or_parser_bug_is_a_gap_not_a_crash(monkeypatch):
    from gpusleuth.analysis import engine
    from gpusleuth.parsers.base import SURE, Parser

    def parse(doc):
        raise IndexError("list index out of range")

    monkeypatch.setattr(engine, "PARSERS", (Parser("test.broken", "", lambda d: SURE, parse),))
    from conftest import docs_from_text

    facts = ingest(docs_from_text("anything\n", "x.txt"), Facts())
    assert any("internal error" in g.why and g.artifact == "x.txt" for g in facts.gaps)
    assert facts.errors and "IndexError" in facts.errors[0]


def test_the_same_gap_on_many_artifacts_reads_as_one_line():
    from gpusleuth.analysis.diagnose import _grouped
    from gpusleuth.model.finding import Gap

    many = [Gap("artifact", "output of `lsmod` not recognised", f"nodes/n{i}/lsmod") for i in range(1000)]
    few = [Gap("artifact", "binary file", "core.dump"), Gap("source", "archive truncated")]
    out = _grouped(many + few)
    assert len(out) == 3
    merged = next(g for g in out if "lsmod" in g.why)
    assert "1000 artifacts: nodes/n0/lsmod, nodes/n1/lsmod, nodes/n2/lsmod and 997 more" in merged.why
    assert Gap("artifact", "binary file", "core.dump") in out


def test_an_artifact_its_parser_finds_unusable_is_still_read_for_what_it_says(tmp_path):
    """A MIG config pasted with the command around it and the program's FATA line after it: the config parser
    rejects the whole (YAML error), and the FATA line was lost with it ("nothing gpusleuth can read")."""
    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.sources import open_source

    (tmp_path / "terminal.txt").write_text(
        "~~~ shell\ncat <<EOF | nvidia-mig-parted apply -f -\nversion: v1\nmig-configs:\n  all-1g.5gb:\n  - devices: 7\n"
        "    mig-enabled: true\n    mig-devices:\n      1g.5gb: 7\nEOF\n~~~\n\nError:\n~~~\n"
        "FATA[0000] Error parsing config file: unmarshal error: error unmarshaling JSON: while decoding JSON: invalid string input for 'devices': 7\n~~~\n")
    report = diagnose(open_source(str(tmp_path)))
    assert report.verdict != "no-verdict" and any(e.cite() == "terminal.txt:15" for f in report.findings for e in f.evidence)
    assert any("YAML error" in g.why and "read as prose instead" in g.why for g in report.gaps)
