"""JUnit XML (`--format junit`): one test case per check that ran, for CI systems that show test reports.

A check that fired with a finding at warning or above is a failure (its findings, evidence and first fix
in the body); a check skipped for want of an input is skipped with the reason; a check that broke is an
error; everything else passed. When part of the input was not read (a cut archive, a capped file, a
--select naming nothing), one more test case, ``input read whole``, fails: a green CI run must not rest on
half an incident.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gpusleuth.model.finding import Finding
from gpusleuth.model.report import Report

PARTIAL = "partial-input"
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # no XML 1.0 document may hold these


def _clean(text: str) -> str:
    """Text as XML can carry it: a log's escape sequences (colour codes) shown as \\x1b, never a broken file."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _finding_text(f: Finding) -> str:
    return _clean(_finding_lines(f))


def _finding_lines(f: Finding) -> str:
    lines = [f"[{f.severity.value}] {f.title}", f.explanation]
    lines += [f"  {e.cite()}: {e.text}" for e in f.evidence]
    if f.fixes:
        fx = f.fixes[0]
        lines.append(f"Fix ({fx.kind.value}): {fx.description}")
        lines += [f"  $ {c}" for c in fx.commands]
    return "\n".join(lines)


def to_junit(report: Report) -> ET.Element:
    from gpusleuth.checks import get_check

    by_code: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_code.setdefault(f.code, []).append(f)
    suite = ET.Element("testsuite", name=_clean(f"gpusleuth diagnose {report.source.get('description', '')}".strip()))
    props = ET.SubElement(suite, "properties")
    for name, value in (("verdict", report.verdict), ("headline", report.headline)):
        ET.SubElement(props, "property", name=name, value=_clean(str(value)))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for outcome in report.checks:
        c = get_check(outcome.code)
        layer = c.layer.value if c else "unknown"
        name = f"{outcome.code} {c.name}" if c else outcome.code
        case = ET.SubElement(suite, "testcase", classname=f"gpusleuth.{layer}", name=name)
        counts["tests"] += 1
        serious = [f for f in by_code.get(outcome.code, []) if f.severity.weight >= 1]
        if outcome.status == "error":
            counts["errors"] += 1
            ET.SubElement(case, "error", message=_clean(outcome.reason or "the check failed"), type="gpusleuth.internal")
        elif outcome.status == "skipped":
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=_clean(outcome.reason or "skipped"))
        elif serious:
            counts["failures"] += 1
            worst = max(serious, key=lambda f: f.severity.weight)
            fail = ET.SubElement(case, "failure", message=_clean(worst.title), type=worst.severity.value)
            fail.text = "\n\n".join(_finding_text(f) for f in serious)
        elif by_code.get(outcome.code):
            ET.SubElement(case, "system-out").text = "\n\n".join(_finding_text(f) for f in by_code[outcome.code])
    partial = [g for g in report.gaps if g.what == PARTIAL]
    if partial:
        case = ET.SubElement(suite, "testcase", classname="gpusleuth.input", name="input read whole")
        counts["tests"] += 1
        counts["failures"] += 1
        fail = ET.SubElement(case, "failure", message=_clean(str(partial[0])), type=PARTIAL)
        fail.text = _clean("\n".join(str(g) for g in partial))
    if report.gaps:
        ET.SubElement(suite, "system-err").text = _clean("Could not be seen:\n" + "\n".join(f"- {g}" for g in report.gaps))
    for k, v in counts.items():
        suite.set(k, str(v))
    root = ET.Element("testsuites", name="gpusleuth", **{k: str(v) for k, v in counts.items()})
    root.append(suite)
    return root


def render(report: Report) -> str:
    root = to_junit(report)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
