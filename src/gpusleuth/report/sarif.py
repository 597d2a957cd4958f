"""SARIF 2.1.0 (`--format sarif`): the report as code-scanning tools read it (GitHub code scanning, GitLab,
Azure DevOps, IDE viewers).

One run. ``tool.driver.rules`` is the whole check catalogue (each rule with its summary, what it does, why it
matters and how to fix it, and its public references); every finding is a result whose ``ruleId`` is its check
code, whose ``level`` follows its severity, and whose locations are its evidence lines (artifact as a relative
URI, ``region.startLine`` the line of the file the user has). Gaps, partial input first, are the invocation's
notifications, so a viewer shows what could not be seen beside what was found.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from urllib.parse import quote

from gpusleuth import __version__
from gpusleuth.model.finding import Finding, Severity
from gpusleuth.model.report import Report

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SOURCE_BASE = "SOURCE"  # uriBaseId of the artifacts: the folder diagnosed, when it is one
LEVEL = {Severity.CRITICAL: "error", Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
PARTIAL = "partial-input"


def _rule(c) -> dict:
    from gpusleuth.report.catalogue import reference_links

    links = reference_links(c)
    refs = [f"- [{label}]({url})" if url else f"- {label}" for url, label in links]
    help_text = f"{c.what}\n\nWhy it matters: {c.why}\n\nHow to fix: {c.fix}"
    help_md = (f"{c.summary}\n\n**What it does.** {c.what}\n\n**Why it matters.** {c.why}\n\n**How to fix.** {c.fix}"
               + ("\n\n**References**\n\n" + "\n".join(refs) if refs else ""))
    rule = {
        "id": c.code,
        "name": "".join(part.capitalize() for part in c.name.split("-")),
        "shortDescription": {"text": c.summary},
        "fullDescription": {"text": c.what},
        "help": {"text": help_text, "markdown": help_md},
        "properties": {"layer": c.layer.value, "check": c.name, "tags": ["gpu", "kubernetes", c.layer.value]},
    }
    first_url = next((url for url, _ in links if url), None)
    if first_url:
        rule["helpUri"] = first_url
    return rule


def _uri(artifact: str) -> str:
    """An artifact name as a relative URI reference (spaces, colons and the like percent-encoded)."""
    return quote(artifact, safe="/-_.~")


def _message(f: Finding) -> str:
    first_fix = next((fx for fx in f.fixes), None)
    text = f"{f.title}\n\n{f.explanation}"
    if first_fix:
        text += f"\n\nFix ({first_fix.kind.value}): {first_fix.description}"
        if first_fix.commands:
            text += "\n" + "\n".join(f"  {c}" for c in first_fix.commands)
    return text


def _locations(f: Finding, base: dict) -> list[dict]:
    out = []
    for e in f.evidence:
        physical = {"artifactLocation": {"uri": _uri(e.artifact), **base}}
        if e.line and e.line >= 1:
            physical["region"] = {"startLine": e.line, "snippet": {"text": e.text}}
        out.append({"physicalLocation": physical, "message": {"text": e.text}})
    return out


def _result(f: Finding, index: dict[str, int], base: dict) -> dict:
    result = {
        "ruleId": f.code,
        "level": LEVEL[f.severity],
        "message": {"text": _message(f)},
        "locations": _locations(f, base),
        # Stable across runs on the same incident: code, node, component (the finding's id).
        "partialFingerprints": {"gpusleuthFindingId/v1": hashlib.sha256(f.id.encode()).hexdigest()[:32]},
        "properties": {"id": f.id, "severity": f.severity.value, "role": f.role.value, "layer": f.layer.value,
                       "node": f.node, "component": f.component, "confidence": round(f.confidence, 2),
                       "caused_by": list(f.caused_by)},
    }
    if f.code in index:
        result["ruleIndex"] = index[f.code]
    return result


def _base(report: Report) -> tuple[dict, dict]:
    """(the artifactLocation fields every result shares, run.originalUriBaseIds): artifacts are relative to the
    folder diagnosed when the source is a folder on this machine."""
    desc = report.source.get("description") or ""
    if report.source.get("kind") in ("directory", "must-gather") and Path(desc).is_dir():
        root = Path(desc).resolve().as_uri().rstrip("/") + "/"
        return {"uriBaseId": SOURCE_BASE}, {SOURCE_BASE: {"uri": root, "description": {"text": "The folder diagnosed."}}}
    return {}, {}


def to_sarif(report: Report) -> dict:
    from gpusleuth.checks import all_checks

    checks = all_checks()
    rules = [_rule(c) for c in checks]
    index = {c.code: i for i, c in enumerate(checks)}
    base, bases = _base(report)
    gaps = sorted(report.gaps, key=lambda g: g.what != PARTIAL)
    notifications = [{"level": "warning" if g.what == PARTIAL else "note", "message": {"text": str(g)},
                      "descriptor": {"id": g.what}} for g in gaps]
    run = {
        "tool": {"driver": {"name": "gpusleuth", "version": __version__, "semanticVersion": __version__,
                            "rules": rules}},
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
        "results": [_result(f, index, base) for f in report.findings],
        "properties": {"verdict": report.verdict, "headline": report.headline, "source": report.source.get("description"),
                       "root_causes": [f.id for f in report.root_causes]},
    }
    if bases:
        run["originalUriBaseIds"] = bases
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(report: Report) -> str:
    return json.dumps(to_sarif(report), indent=2, ensure_ascii=False) + "\n"
