"""The operand graph: classification per node from pod states, waiting lines and the marker table."""

from dataclasses import replace

import operand_seed as seed
from gpusleuth.facts import Facts, OperandGraph
from gpusleuth.facts.operands import spec_for
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import ComponentState as S
from gpusleuth.model.k8s import ContainerStatus, Event, Pod


def _graph(facts: Facts) -> OperandGraph:
    return facts.get(OperandGraph)


def test_seed_incident_one_failed_seven_blocked_one_degraded():
    g = _graph(seed.facts())
    states = {c.name: c for c in g.components}
    assert [c.name for c in g.by_state(S.FAILED)] == ["nvidia-driver-daemonset"]
    assert len(g.by_state(S.BLOCKED)) == 7
    assert [c.name for c in g.by_state(S.DEGRADED)] == ["nvidia-node-status-exporter"]
    assert states["mofed"].state == S.OK
    # every blocked component names its blocker and the marker, per the table (toolkit-ready comes from
    # the validator's toolkit-validation init container, .driver-ctr-ready from the driver's startup probe)
    for c in g.by_state(S.BLOCKED):
        assert c.blocked_by and c.waiting_on, c
        assert g.root_of(c).name == "nvidia-driver-daemonset"
    assert states["nvidia-container-toolkit-daemonset"].blocked_by == "nvidia-driver-daemonset"
    assert states["nvidia-container-toolkit-daemonset"].waiting_on == "/run/nvidia/validations/.driver-ctr-ready"
    assert states["gpu-feature-discovery"].blocked_by == "nvidia-operator-validator"
    assert states["gpu-feature-discovery"].waiting_on.endswith("toolkit-ready")
    assert [c.name for c in g.roots()] == ["nvidia-driver-daemonset"]


def test_failed_component_cites_status_line_and_the_decisive_log_line():
    g = _graph(seed.facts())
    driver = g.get("nvidia-driver-daemonset")
    cites = [e.cite() for e in driver.evidence]
    assert cites == [f"pods.txt:{seed.ROW[seed.DRIVER]}", f"driver.log:{seed.ERROR_LINE}"]
    assert "nvidia-driver-ctr" in driver.reason and "could not insert 'nvidia_peermem'" in driver.reason
    assert driver.status == "1/4 CrashLoopBackOff (64 restarts)"


def test_the_decisive_line_is_the_last_error_before_the_crash_not_the_cleanup_after_it():
    lines = _graph(seed.facts()).decisive_lines(seed.DRIVER)
    assert lines[-1].line == seed.ERROR_LINE


def test_waiting_line_in_the_log_is_cited_for_a_blocked_pod():
    g = _graph(seed.facts())
    gfd = g.get("gpu-feature-discovery")
    assert "gfd-init.log:3" in [e.cite() for e in gfd.evidence]


def test_running_and_ready_is_never_blocked_even_when_its_producer_failed():
    f = Facts()
    for p in seed.pods():
        if p.name.startswith("gpu-feature-discovery"):
            p = replace(p, status="Running", ready="1/1")
        f.add(p)
    g = _graph(f)
    assert g.get("gpu-feature-discovery").state == S.OK
    assert len(g.by_state(S.BLOCKED)) == 6


def test_blocked_by_a_component_with_no_pod_adds_it_as_unknown():
    f = Facts()
    for p in seed.pods():
        if not p.name.startswith(("nvidia-driver-daemonset", "nvidia-operator-validator")):
            f.add(p)
    g = _graph(f)
    driver = g.get("nvidia-driver-daemonset")
    assert driver.state == S.UNKNOWN and driver.pod is None
    assert "nvidia-container-toolkit-daemonset waits on" in driver.reason
    assert g.roots() == []  # nothing failed that we can see: no root is invented


WIDE = """\
$ kubectl get pods -n gpu-operator -o wide
NAME                                       READY   STATUS             RESTARTS       AGE   IP            NODE         NOMINATED NODE   READINESS GATES
nvidia-driver-daemonset-6z4kq              0/1     CrashLoopBackOff   12 (3m ago)    52m   10.128.2.14   gpu-node-1   <none>           <none>
nvidia-driver-daemonset-tq8vm              1/1     Running            0              52m   10.128.4.9    gpu-node-2   <none>           <none>
nvidia-container-toolkit-daemonset-2kx9d   0/1     Init:0/1           0              52m   10.128.2.15   gpu-node-1   <none>           <none>
nvidia-container-toolkit-daemonset-h7vcs   1/1     Running            0              52m   10.128.4.10   gpu-node-2   <none>           <none>
"""


def test_per_node_classification_keeps_nodes_apart():
    g = _graph(seed.facts_from({"pods-wide.txt": WIDE}))
    assert g.get("nvidia-driver-daemonset", "gpu-node-1").state == S.FAILED
    assert g.get("nvidia-driver-daemonset", "gpu-node-2").state == S.OK
    assert g.get("nvidia-container-toolkit-daemonset", "gpu-node-2").state == S.OK
    toolkit = g.get("nvidia-container-toolkit-daemonset", "gpu-node-1")
    assert toolkit.state == S.BLOCKED and toolkit.blocked_by == "nvidia-driver-daemonset"
    assert g.root_of(toolkit).pod == "nvidia-driver-daemonset-6z4kq"


def test_container_statuses_from_describe_name_the_crashing_container():
    f = Facts()
    f.add(Pod(seed.DRIVER, seed.NS, status="Running", ready="1/4", containers=(
        ContainerStatus("k8s-driver-manager", init=True, state="terminated", reason="Completed", exit_code=0),
        ContainerStatus("nvidia-driver-ctr", state="waiting", reason="CrashLoopBackOff", restarts=64,
                        evidence=Evidence("describe.txt", 40, "Reason:       CrashLoopBackOff")),
        ContainerStatus("nvidia-peermem-ctr", state="running", ready=False),
    )))
    driver = _graph(f).get("nvidia-driver-daemonset")
    assert driver.state == S.FAILED and "nvidia-driver-ctr" in driver.reason
    assert Evidence("describe.txt", 40, "Reason:       CrashLoopBackOff") in driver.evidence


def test_init_container_running_is_stuck_there_even_without_the_init_status_column():
    f = Facts()
    f.add(Pod("nvidia-device-plugin-daemonset-v46gq", seed.NS, status="Pending", containers=(
        ContainerStatus("toolkit-validation", init=True, state="running"),
        ContainerStatus("nvidia-device-plugin", state="waiting", reason="PodInitializing"),
    )))
    f.add(Pod("nvidia-operator-validator-6fhjb", seed.NS, status="Init:CrashLoopBackOff", ready="0/1"))
    g = _graph(f)
    dp = g.get("nvidia-device-plugin-daemonset")
    assert dp.state == S.BLOCKED and dp.blocked_by == "nvidia-operator-validator"
    assert g.get("nvidia-operator-validator").state == S.FAILED


def test_container_creating_with_a_warning_event_is_failed_and_cites_the_event():
    f = Facts()
    f.add(Pod("nvidia-dcgm-exporter-n6jqs", seed.NS, status="ContainerCreating", ready="0/1"))
    f.add(Event("FailedCreatePodSandBox", 'failed to get sandbox runtime: no runtime for "nvidia" is configured', "Warning",
                seed.NS, "pod/nvidia-dcgm-exporter-n6jqs", evidence=Evidence("events.txt", 3, "Warning FailedCreatePodSandBox ...")))
    c = _graph(f).get("nvidia-dcgm-exporter")
    assert c.state == S.FAILED and "no runtime for" in c.reason
    assert Evidence("events.txt", 3, "Warning FailedCreatePodSandBox ...") in c.evidence


def test_a_single_old_error_in_a_long_log_does_not_make_a_running_pod_degraded():
    f = Facts()
    for p in seed.pods():
        f.add(p)
    for log in seed.logs():
        if log.artifact == "nse.log":  # one validation failure at start-up, then 35 quiet lines
            lines = [log.lines[0], log.lines[1]] + [replace(log.lines[0], line=n) for n in range(5, 40)]
            log = replace(log, lines=tuple(lines))
        f.add(log)
    assert _graph(f).get("nvidia-node-status-exporter").state == S.OK


def test_pod_names_map_to_the_right_operand():
    def name(pod):
        spec = spec_for(Pod(pod))
        return spec.name if spec else None

    assert name("nvidia-dcgm-m25d9") == "nvidia-dcgm"
    assert name("nvidia-dcgm-exporter-n6jqs") == "nvidia-dcgm-exporter"
    assert name("nvidia-driver-daemonset-418.94.202510230424-0-564xm") == "nvidia-driver-daemonset"
    assert name("mofed-rhcos4.18-554bdbd7cf-ds-djxv9") == "mofed"
    assert name("coredns-5d78c9869d-abcde") is None


def test_no_operand_pods_is_not_applicable():
    import pytest

    from gpusleuth.errors import NotApplicable

    f = Facts()
    f.add(Pod("coredns-5d78c9869d-abcde", "kube-system", status="Running", ready="1/1"))
    with pytest.raises(NotApplicable):
        f.get(OperandGraph)
