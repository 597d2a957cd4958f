"""OP002 operand-blocked: blocked operands named with their blocker, marker and root, caused_by the root."""

from dataclasses import replace

import operand_seed as seed
from loglines import facts_with

from gpusleuth.analysis.engine import run_checks
from gpusleuth.checks import get_check
from gpusleuth.model.finding import Role


def _run(facts):
    findings, _ = run_checks(facts, checks=[get_check("OP002")])
    return findings


def test_seven_blocked_operands_each_name_blocker_marker_and_root():
    found = _run(seed.facts())
    assert len(found) == 7
    assert all(f.role == Role.BLOCKED and f.caused_by == ("OP001",) for f in found)
    by = {f.component: f for f in found}
    toolkit = by["nvidia-container-toolkit-daemonset"]
    assert toolkit.facts["blocked_by"] == "nvidia-driver-daemonset"
    assert toolkit.facts["waiting_on"] == "/run/nvidia/validations/.driver-ctr-ready"
    assert toolkit.layer.value == "container-toolkit"
    gfd = by["gpu-feature-discovery"]
    assert gfd.facts["chain"] == ["gpu-feature-discovery", "nvidia-operator-validator", "nvidia-driver-daemonset"]
    assert "gfd-init.log:2" in [e.cite() for e in gfd.evidence] and "pods.txt:4" in [e.cite() for e in gfd.evidence]
    assert "the chain ends at nvidia-driver-daemonset" in gfd.explanation


def test_silent_when_nothing_waits():
    pods = [replace(p, status="Running", ready="1/1", restarts=0) for p in seed.pods()]
    assert _run(facts_with(*pods)) == []
