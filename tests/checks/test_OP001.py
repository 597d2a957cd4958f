"""OP001 operand-crashlooping: any crash-looping operand, named with its layer and decisive log line."""

from dataclasses import replace

import operand_seed as seed
from loglines import container_log, facts_with

from gpusleuth.analysis.engine import run_checks
from gpusleuth.checks import get_check
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.k8s import ContainerStatus, Pod

DCGM_LOG = """\
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
    assert [e.cite() for e in f.evidence] == ["pods.txt:2", "driver.log:3224"]
    assert f.facts["container"] == "nvidia-driver-ctr" and f.facts["restarts"] == 64
    assert len(f.facts["blocked"]) == 7
    assert "could not insert 'nvidia_peermem'" in f.title
    assert f.fixes[0].commands[0] == f"kubectl logs --previous {seed.DRIVER} -n {seed.NS} -c nvidia-driver-ctr"


def test_any_operand_crash_uses_its_own_layer_and_the_last_error_before_the_crash():
    pod = Pod("nvidia-dcgm-exporter-n6jqs", "gpu-operator", node="gpu-node-7", status="Running", ready="0/1", restarts=12,
              containers=(ContainerStatus("nvidia-dcgm-exporter", state="waiting", reason="CrashLoopBackOff", restarts=12,
                                          evidence=Evidence("describe.txt", 31, "Reason:       CrashLoopBackOff")),),
              evidence=Evidence("describe.txt", 1, "Name:         nvidia-dcgm-exporter-n6jqs"))
    log = container_log("dcgm-exporter.log", DCGM_LOG.replace("level=fatal", "level=error"), pod=pod.name,
                        container="nvidia-dcgm-exporter", previous=True)
    [f] = _run(facts_with(pod, log))
    assert f.layer.value == "userspace-driver" and f.node == "gpu-node-7"
    assert f.evidence[-1].cite() == "dcgm-exporter.log:4"  # the fatal line, not the cleanup after it
    assert "describe.txt:31" in [e.cite() for e in f.evidence]


def test_without_a_log_it_still_names_the_failing_component_and_how_to_get_the_log():
    pods = [p for p in seed.pods() if p.name == seed.DRIVER]
    [f] = _run(facts_with(*pods))
    assert f.title.startswith("nvidia-driver-daemonset is crash-looping")
    assert "kubectl logs --previous" in f.explanation


def test_silent_for_running_and_waiting_operands():
    pods = [replace(p, status="Running", ready="1/1", restarts=0) if p.name == seed.DRIVER else p for p in seed.pods()]
    assert _run(facts_with(*pods)) == []
