"""OP101 ordering-violation: fires on the seed-001/002 race with the gap and both sides cited; silent when
MOFED was ready first; an info note, not a pass, when the rules cannot be evaluated."""

from pathlib import Path

from gpusleuth.analysis.engine import Selection, run_checks
from gpusleuth.model.finding import Role, Severity
from gpusleuth.model.layers import Layer

FIXTURE = Path(__file__).parent.parent / "fixtures" / "peermem_race"
POD = "nvidia-driver-daemonset-7x2kq"
MOFED = "mofed-ubuntu22.04-6f8d7c9b5-ds-q4w2n"

MOFED_READY_EARLY = f"""\
[pod/{MOFED}/mofed-container] [21-Nov-25_11:40:02] NVIDIA driver container exec start
[pod/{MOFED}/mofed-container] [21-Nov-25_11:40:02] Unsetting driver ready state
[pod/{MOFED}/mofed-container] Loading HCA driver and Access Layer:[  OK  ]
[pod/{MOFED}/mofed-container] [21-Nov-25_11:44:10] Current mlx5_core driver version: 25.07-0.9.7
[pod/{MOFED}/mofed-container] [21-Nov-25_11:44:10] Setting driver ready state
"""
DRIVER_AFTER = f"""\
[pod/{POD}/k8s-driver-manager] time="2025-11-21T11:45:00Z" level=info msg="Starting driver uninstallation process"
[pod/{POD}/k8s-driver-manager] time="2025-11-21T11:45:01Z" level=info msg="Waiting for MOFED to be installed"
[pod/{POD}/nvidia-driver-ctr] Fri Nov 21 11:47:30 UTC 2025
[pod/{POD}/nvidia-driver-ctr] Loading NVIDIA Peer Memory kernel module...
[pod/{POD}/nvidia-driver-ctr] + modprobe -a nvidia-peermem
[pod/{POD}/nvidia-driver-ctr] Done, now waiting for signal
"""


def op101(facts):
    findings, outcomes = run_checks(facts, Selection(("OP101",)))
    return findings, next(o for o in outcomes if o.code == "OP101")


def test_fires_on_the_race_with_gap_and_both_sides(facts_of):
    findings, outcome = op101(facts_of(FIXTURE))
    assert outcome.status == "fired"
    (f,) = findings
    assert f.layer == Layer.KERNEL_DRIVER and f.role == Role.CONTRIBUTING and f.severity == Severity.CRITICAL
    assert f.confidence >= 0.9 and f.node == "gpu-node-1" and f.component == "nvidia-driver-daemonset"
    assert "nvidia-peermem load attempted 1m58s before MOFED set .driver-ready at 11:58:39" in f.explanation
    cites = [e.cite() for e in f.evidence]
    assert "network_operand_pod_mofed-rhcos4.18-554bdbd7cf-ds-x7k2p.log:28" in cites  # .driver-ready set
    assert "gpu_operand_pod_nvidia-driver-daemonset-418.94.202510230424-0-564xm.log:37" in cites  # modprobe failure
    assert f.facts["gap_seconds"] == [118.0, 118.0] and f.facts["certain"] is True
    fix = f.fixes[0]
    assert "nvidia-driver-daemonset-418.94.202510230424-0-564xm" in fix.description and not fix.commands  # namespace unknown


def test_silent_when_mofed_was_ready_first(facts_of):
    findings, outcome = op101(facts_of({
        f"network_operand_pod_{MOFED}.log": MOFED_READY_EARLY,
        f"gpu_operand_pod_{POD}.log": DRIVER_AFTER,
    }))
    assert findings == [] and outcome.status == "passed"


def test_unevaluable_rules_are_reported_not_passed(facts_of):
    findings, outcome = op101(facts_of({f"gpu_operand_pod_{POD}.log": DRIVER_AFTER}))
    assert outcome.status == "fired"
    (f,) = findings
    assert f.role == Role.INFO and "could not be evaluated" in f.title and "peermem-after-mofed-ready" in f.explanation


def test_fix_names_the_pod_and_namespace_when_known(facts_of):
    files = {p.name: p.read_text() for p in FIXTURE.iterdir()}
    driver = files.pop("gpu_operand_pod_nvidia-driver-daemonset-418.94.202510230424-0-564xm.log")
    files["paste.md"] = ("$ kubectl logs -n nvidia-gpu-operator nvidia-driver-daemonset-418.94.202510230424-0-564xm --all-containers --prefix\n"
                         + driver)
    (f,) = op101(facts_of(files))[0]
    assert f.fixes[0].commands == ("kubectl delete pod nvidia-driver-daemonset-418.94.202510230424-0-564xm -n nvidia-gpu-operator",)
