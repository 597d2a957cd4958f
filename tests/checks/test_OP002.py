"""OP002 operand-blocked: blocked operands named with their blocker, marker and root, caused_by the root."""

import operand_seed as seed

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
    assert {"gfd-init.log:3", f"pods.txt:{seed.ROW['gpu-feature-discovery-hnr8w']}"} <= {e.cite() for e in gfd.evidence}
    assert "the chain ends at nvidia-driver-daemonset" in gfd.explanation


HEALTHY = f"""\
$ oc get pods -n {seed.NS}
NAME                                                  READY   STATUS      RESTARTS   AGE
{seed.DRIVER}   4/4     Running     0          3h28m
nvidia-container-toolkit-daemonset-sxfkr              1/1     Running     0          3h28m
gpu-feature-discovery-hnr8w                           1/1     Running     0          3h28m
nvidia-device-plugin-daemonset-v46gq                  1/1     Running     0          3h28m
nvidia-cuda-validator-x9fzt                           0/1     Completed   0          3h26m
nvidia-operator-validator-6fhjb                       1/1     Running     0          3h28m
"""


def test_silent_when_nothing_waits():
    assert _run(seed.facts_from({"pods.txt": HEALTHY})) == []
