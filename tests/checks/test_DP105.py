"""DP105 unhealthy-gpu-breaks-allocation: a GPU marked unhealthy after an Xid, or kubelet's Allocate failure."""

from failure_fixtures import cites, event, facts_from, run

PLUGIN = """\
$ kubectl logs -n gpu-operator nvidia-device-plugin-daemonset-lz8k2
2020/08/10 19:09:42 XidCriticalError: Xid=79 on Device=GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8, the device will go unhealthy.
2020/08/10 19:09:42 'nvidia.com/gpu' device marked unhealthy: GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8
"""


def test_xid_79_marks_the_gpu_unhealthy_and_points_at_hardware():
    [f] = run("DP105", facts_from({"plugin.log": PLUGIN}))
    assert cites(f) == ["plugin.log:2", "plugin.log:3"] and "points at the hardware" in f.explanation
    assert f.fixes[0].commands == ("kubectl delete pod nvidia-device-plugin-daemonset-lz8k2 -n gpu-operator",)


def test_allocate_failure_event():
    e = event("pod/train-7c9", "UnexpectedAdmissionError",
              "Allocate failed due to rpc error: code = Unknown desc = unknown device: GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8, which is unexpected",
              line=3, ns="ml")
    [f] = run("DP105", facts_from({}, e))
    assert cites(f) == ["events.txt:3"]


def test_silent_on_healthy_registration():
    ok = "$ kubectl logs -n gpu-operator nvidia-device-plugin-daemonset-lz8k2\nI0812 09:14:03.011552       1 server.go:146] Registered device plugin for 'nvidia.com/gpu' with Kubelet\n"
    assert run("DP105", facts_from({"plugin.log": ok})) == []
