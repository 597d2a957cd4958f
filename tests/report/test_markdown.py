"""The Markdown RCA document: the sections of an incident write-up, in order, filled from the findings."""

import operand_seed as seed
from gpusleuth.analysis.diagnose import analyse
from gpusleuth.facts.store import Recognised
from gpusleuth.report import markdown, text


def _report():
    f = seed.facts()
    f.recognised.append(Recognised("pods.txt", 1, 10, "kubectl.get-pods", 10))
    return analyse(f, {"description": "seed model", "kind": "test"})


def test_sections_in_order():
    md = markdown.render(_report())
    order = ["# GPU root-cause analysis", "## Executive summary", "**Problem**", "**Root cause**", "**Impact**",
             "**Quick fix**", "**Permanent fix**", "## Incident window", "## Root cause", "## Evidence", "## Why it happens", "## The cascade",
             "## Solution options", "## Action items", "## Key takeaway"]
    positions = [md.index(s) for s in order]
    assert positions == sorted(positions)


def test_evidence_quotes_artifact_lines_and_solutions_carry_commands():
    md = markdown.render(_report())
    assert "**driver.log**" in md and f"Line {seed.ERROR_LINE}: modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument" in md
    assert "### Option 1: Immediate fix" in md and "### Option 2: Workaround" in md and "### Option 3: Permanent fix" in md
    assert f"kubectl delete pod {seed.DRIVER} -n {seed.NS}" in md
    assert "```bash" in md and "```yaml" in md
    assert "```mermaid\nflowchart TD" in md and "FIRST TO FAIL" in md  # both pictures of the cascade
    assert "| nvidia-container-toolkit-daemonset | - | container-toolkit | blocked |" in md


def test_problem_and_impact_count_the_components():
    md = markdown.render(_report())
    assert "**Problem**: nvidia-driver-daemonset is failing (1/4 CrashLoopBackOff (64 restarts)); 7 operand(s) are blocked behind it." in md
    assert "- 7 component(s) blocked:" in md and "- 1 component(s) running with errors: nvidia-node-status-exporter" in md


def test_terminal_report_has_verdict_counts_root_cause_cascade_and_fixes():
    out = text.render(_report())
    first = out.splitlines()[0]
    assert first.startswith(" BROKEN ") and "nvidia_peermem failed to load" in first
    assert "operands: 1 failed · 7 blocked · 1 running with errors · 2 ok" in out
    assert f"driver.log:{seed.ERROR_LINE}" in out and "modprobe: ERROR" in out
    assert "▸ immediate:" in out and f"$ kubectl delete pod {seed.DRIVER}" in out
    assert "creates .driver-ctr-ready" in out
    assert not any(line.endswith(" ") for line in out.splitlines())
