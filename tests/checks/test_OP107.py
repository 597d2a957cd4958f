"""OP107 operand-failing-to-start: the fallback for operands that never run (image pull, config errors),
naming component, layer and decisive line; OP001 keeps crash-looping ones (init containers included)."""

from failure_fixtures import cites, event, facts_from, pod, run, waiting

from gpusleuth.analysis.diagnose import analyse
from gpusleuth.model.finding import Role

PULL = ('Back-off pulling image "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"')


def _plugin(reason="ImagePullBackOff", message=PULL):
    return pod("nvidia-device-plugin-daemonset-m8x2q", status=reason, ready="0/1",
               containers=(waiting("nvidia-device-plugin", reason, message, line=41),))


def test_image_pull_backoff_names_component_layer_and_decisive_line():
    [f] = run("OP107", facts_from({}, _plugin()))
    assert f.component == "nvidia-device-plugin-daemonset" and f.layer.value == "device-plugin"
    assert f.role == Role.ROOT_CAUSE and f.confidence <= 0.5
    assert cites(f) == ["pods.txt:2", "describe.txt:41"]
    assert PULL in f.explanation
    assert f.fixes[0].commands[0] == "kubectl describe pod nvidia-device-plugin-daemonset-m8x2q -n gpu-operator"


def test_config_error_from_an_event_with_a_novel_message():
    p = pod("nvidia-dcgm-exporter-2lq8v", status="CreateContainerConfigError", ready="0/1")
    e = event("pod/nvidia-dcgm-exporter-2lq8v", "Failed", 'Error: configmap "custom-dcgm-metrics" not found', line=9)
    [f] = run("OP107", facts_from({}, p, e))
    assert f.layer.value == "userspace-driver" and "events.txt:9" in cites(f)
    assert 'configmap "custom-dcgm-metrics" not found' in f.title


def test_crash_loops_are_op001s_and_running_operands_are_silent():
    crash = pod("nvidia-container-toolkit-daemonset-5c8vt", status="Init:CrashLoopBackOff", ready="0/1", restarts=12,
                containers=(waiting("driver-validation", "CrashLoopBackOff", init=True),))
    ok = pod("nvidia-device-plugin-daemonset-m8x2q")
    facts = facts_from({}, crash, ok)
    assert run("OP107", facts) == []
    [f] = run("OP001", facts)
    assert f.facts["container"] == "driver-validation"


def test_fallback_report_names_failing_component_with_a_line_nobody_has_a_signature_for():
    log = ("$ kubectl logs -n gpu-operator nvidia-mig-manager-qk2vw --previous\n"
           "time=\"2026-03-02T08:43:31Z\" level=info msg=\"Updating to MIG config: all-3g.40gb\"\n"
           "time=\"2026-03-02T08:43:39Z\" level=error msg=\"frobnicator quorum lost on partition table 7\"\n"
           "time=\"2026-03-02T08:43:39Z\" level=info msg=\"Shutting down\"\n")
    p = pod("nvidia-mig-manager-qk2vw", status="CrashLoopBackOff", ready="0/1", restarts=4)
    report = analyse(facts_from({"mig.log": log}, p), {"description": "test"})
    [root] = report.root_causes
    assert root.code == "OP001" and root.component == "nvidia-mig-manager" and root.layer.value == "operator"
    assert root.role == Role.ROOT_CAUSE and root.confidence <= 0.5
    assert "mig.log:3" in cites(root) and "frobnicator quorum lost" in root.title
