"""OP001 operand-crashlooping: any crash-looping operand, named with its layer and decisive log line."""

import operand_seed as seed

from gpusleuth.analysis.engine import run_checks
from gpusleuth.checks import get_check

DCGM_DESCRIBE = """\
$ kubectl describe pod nvidia-dcgm-exporter-n6jqs -n gpu-operator
Name:             nvidia-dcgm-exporter-n6jqs
Namespace:        gpu-operator
Node:             gpu-node-7/10.0.12.7
Status:           Running
Containers:
  nvidia-dcgm-exporter:
    Image:          nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.1-ubuntu22.04
    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       Error
      Exit Code:    1
    Ready:          False
    Restart Count:  12
"""
DCGM_LOG = """\
$ kubectl logs --previous nvidia-dcgm-exporter-n6jqs -n gpu-operator
time="2025-11-20T08:14:02Z" level=info msg="Starting dcgm-exporter" Version=3.3.5-3.4.1
time="2025-11-20T08:14:02Z" level=info msg="DCGM successfully initialized!"
time="2025-11-20T08:14:03Z" level=error msg="Failed to watch metrics: Error watching fields: Feature not supported"
time="2025-11-20T08:14:03Z" level=fatal msg="Failed to start the exporter: Error watching fields: Feature not supported"
time="2025-11-20T08:14:03Z" level=info msg="Cleaning up"
"""


def _run(facts):
    findings, _ = run_checks(facts, checks=[get_check("OP001")])
    return findings


def test_the_seed_driver_crash_names_component_layer_container_and_decisive_line():
    [f] = _run(seed.facts())
    assert f.component == "nvidia-driver-daemonset" and f.layer.value == "kernel-driver"
    assert f.confidence <= 0.5
    assert [e.cite() for e in f.evidence] == [f"pods.txt:{seed.ROW[seed.DRIVER]}", f"driver.log:{seed.ERROR_LINE}"]
    assert f.facts["container"] == "nvidia-driver-ctr" and f.facts["restarts"] == 64
    assert len(f.facts["blocked"]) == 7
    assert "could not insert 'nvidia_peermem'" in f.title
    assert f.fixes[0].commands[0] == f"kubectl logs --previous {seed.DRIVER} -n {seed.NS} -c nvidia-driver-ctr"


def test_any_operand_crash_uses_its_own_layer_and_the_last_error_before_the_crash():
    [f] = _run(seed.facts_from({"describe.txt": DCGM_DESCRIBE, "dcgm-exporter.log": DCGM_LOG}))
    assert f.layer.value == "userspace-driver" and f.node == "gpu-node-7"
    assert f.evidence[1].cite() == "dcgm-exporter.log:5"  # the fatal line, not the cleanup after it, next to the pod
    assert "Failed to start the exporter" in f.title
    assert {"describe.txt:2", "describe.txt:9"} <= {e.cite() for e in f.evidence}  # the pod and its container state


def test_without_a_log_it_still_names_the_failing_component_and_how_to_get_the_log():
    [f] = _run(seed.facts_from({"pods.txt": seed.PODS}))
    assert f.title.startswith("nvidia-driver-daemonset is crash-looping")
    assert "kubectl logs --previous" in f.explanation


def test_silent_for_running_and_waiting_operands():
    healthy = seed.PODS.replace("1/4     CrashLoopBackOff   64 (4m7s ago)", "4/4     Running            0            ")
    assert _run(seed.facts_from({"pods.txt": healthy})) == []


def test_a_driver_log_quoting_dmesg_gives_the_installers_error_not_just_the_status(facts_of):
    """nouveau-blocks-driver: the installer prints the kernel messages it saw; its log is still the pod's, so
    OP001 reads the error the installer printed instead of stopping at 'CrashLoopBackOff'."""
    from pathlib import Path

    incident = Path(__file__).parent.parent / "cases" / "incidents" / "nouveau-blocks-driver" / "full"
    (hit,) = _run(facts_of(incident))
    decisive = hit.evidence[1]  # next to the pod: a symptom shows its first three citations
    assert decisive.artifact == "driver.log" and decisive.line == 40
    assert hit.title == ("nvidia-driver-daemonset is crash-looping: NVRM: This can occur when a driver such as: nouveau, "
                         "rivafb, nvidiafb or rivatv was loaded and obtained ownership of…")  # cut at a word, marked
    assert ("driver.log", 25) in {(e.artifact, e.line) for e in hit.evidence}  # ERROR: Installation has failed.
