"""--format sarif and --format junit: what CI systems and code-scanning tools read."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.checks import all_checks
from gpusleuth.model.finding import Gap
from gpusleuth.report import renderer
from gpusleuth.sources import example_names, examples_root, open_source

SCHEMA = Path(__file__).parent / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module", params=example_names())
def report(request):
    return diagnose(open_source(f"example:{request.param}"))


def _sarif(report) -> dict:
    return json.loads(renderer("sarif")(report))


def test_sarif_validates_against_the_sarif_2_1_0_schema(report):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(_sarif(report)), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_sarif_schema_check_catches_a_broken_log(report):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    broken = _sarif(report)
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    del broken["runs"][0]["tool"]["driver"]["name"]
    assert len(list(jsonschema.Draft4Validator(schema).iter_errors(broken))) >= 2


def test_sarif_rules_are_the_catalogue_and_results_cite_evidence_lines(report):
    log = _sarif(report)
    (run,) = log["runs"]
    assert log["version"] == "2.1.0"
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [c.code for c in all_checks()]
    assert all(r["help"]["text"] and "How to fix" in r["help"]["text"] for r in rules)
    assert len(run["results"]) == len(report.findings) > 0
    level = {"critical": "error", "error": "error", "warning": "warning", "info": "note"}
    for f, res in zip(report.findings, run["results"]):
        assert res["ruleId"] == f.code and rules[res["ruleIndex"]]["id"] == f.code
        assert res["level"] == level[f.severity.value]
        assert f.title in res["message"]["text"]
        cited = [(loc["physicalLocation"]["artifactLocation"]["uri"], loc["physicalLocation"].get("region", {}).get("startLine"))
                 for loc in res["locations"]]
        assert cited == [(e.artifact, e.line) for e in f.evidence]


def test_sarif_lists_partial_input_first_among_the_notifications():
    src = open_source("example:device-plugin-unregistered")
    src.gaps.append(Gap("partial-input", "cut at --max-bytes 64 KiB", "device-plugin.log"))
    run = _sarif(diagnose(src))["runs"][0]
    first = run["invocations"][0]["toolExecutionNotifications"][0]
    assert first["level"] == "warning" and "cut at --max-bytes" in first["message"]["text"]


def test_sarif_artifact_uris_are_relative_to_a_folder_source(tmp_path):
    for p in (examples_root() / "device-plugin-unregistered").iterdir():
        (tmp_path / p.name).write_bytes(p.read_bytes())
    run = _sarif(diagnose(open_source(str(tmp_path))))["runs"][0]
    assert run["originalUriBaseIds"]["SOURCE"]["uri"] == tmp_path.resolve().as_uri() + "/"
    loc = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc["uriBaseId"] == "SOURCE" and (tmp_path / loc["uri"]).is_file()


def _junit(report) -> ET.Element:
    return ET.fromstring(renderer("junit")(report).encode())


def test_junit_has_one_testcase_per_check_with_failures_skips_and_passes(report):
    root = _junit(report)
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == len(report.checks) and int(suite.get("tests")) == len(cases)
    by_code = {c.get("name").split()[0]: c for c in cases}
    serious = {f.code for f in report.findings if f.severity.weight >= 1}
    for o in report.checks:
        case = by_code[o.code]
        if o.status == "skipped":
            assert case.find("skipped") is not None and case.find("skipped").get("message") == o.reason
        elif o.code in serious:
            assert case.find("failure") is not None, o.code
        else:
            assert case.find("failure") is None and case.find("skipped") is None
    assert int(suite.get("failures")) == len(serious) > 0
    assert int(suite.get("skipped")) == sum(o.status == "skipped" for o in report.checks)
    first = report.root_causes[0]
    failure = by_code[first.code].find("failure")
    assert first.evidence[0].cite() in failure.text


def test_junit_fails_an_extra_case_on_partial_input_and_survives_escape_codes():
    src = open_source("example:device-plugin-unregistered")
    src.gaps.append(Gap("partial-input", "archive is truncated or corrupt after 3 file(s) \x1b[31m", "bundle.tgz"))
    suite = _junit(diagnose(src)).find("testsuite")
    case = next(c for c in suite.findall("testcase") if c.get("name") == "input read whole")
    assert "truncated" in case.find("failure").get("message") and "\\x1b" in case.find("failure").get("message")


def test_cli_formats_and_exit_code(tmp_path):
    env = {**os.environ, "GPUSLEUTH_DEBUG": ""}
    for fmt in ("sarif", "junit"):
        out = tmp_path / f"r.{fmt}"
        proc = subprocess.run([sys.executable, "-m", "gpusleuth", "diagnose", "example:peermem-race", "--format", fmt, "-o", str(out)],
                              capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 1, proc.stderr
        assert out.stat().st_size > 1000
