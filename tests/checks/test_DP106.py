"""DP106 lost-gpu-fails-every-allocation: one lost GPU and every GPU pod on the node is rejected at admission."""

from failure_fixtures import cites, facts_from, run

DESCRIBE = """\
$ kubectl describe pod embed-server-6d9c7b8f5d-24hxq -n inference
Name:             embed-server-6d9c7b8f5d-24hxq
Namespace:        inference
Node:             gpu-rtx-07/
Status:           Failed
Reason:           UnexpectedAdmissionError
Message:          Pod was rejected: Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc error: code = Unknown desc = error getting list of preferred allocation devices: unable to get device link information: error creating nvml.Device 7: nvml: GPU is lost, which is unexpected
Containers:
  server:
    Image:      registry.internal/ml/embed-server:2.4.1
    Limits:
      nvidia.com/gpu:  1
Events:
  Type     Reason                    Age   From     Message
  ----     ------                    ----  ----     -------
  Warning  UnexpectedAdmissionError  4s    kubelet  Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc error: code = Unknown desc = error getting list of preferred allocation devices: unable to get device link information: error creating nvml.Device 7: nvml: GPU is lost, which is unexpected
"""

# k8s-device-plugin#231 (2021): the older plugin's wording of the same failure.
OLD = """\
$ kubectl get events -n ml
LAST SEEN   TYPE      REASON                     OBJECT            MESSAGE
12s         Warning   UnexpectedAdmissionError   pod/train-7x2kq   Pod Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc error: code = Unknown desc = Unable to retrieve list of available devices: error creating nvml.Device 3: nvml: GPU is lost, which is unexpected
"""

# kubelet losing the plugin's socket mid-allocation: an Allocate failure, not a lost GPU.
PLUGIN_RESTART = """\
$ kubectl get events -n ml
LAST SEEN   TYPE      REASON                     OBJECT            MESSAGE
10s         Warning   UnexpectedAdmissionError   pod/train-7x2kq   Allocate failed due to rpc error: code = Unavailable desc = error reading from server: EOF, which is unexpected
"""


def test_every_allocation_on_the_node_fails_with_cordon_and_cleanup_commands():
    [f] = run("DP106", facts_from({"describe.txt": DESCRIBE}))
    assert f.node == "gpu-rtx-07" and f.layer.value == "device-plugin" and "describe.txt:16" in cites(f)
    assert f.fixes[0].commands == ("kubectl cordon gpu-rtx-07",
                                   "kubectl delete pods -n inference --field-selector=status.phase=Failed,spec.nodeName=gpu-rtx-07")
    assert "also those the remaining healthy GPUs could serve" in f.explanation
    assert run("DP105", facts_from({"describe.txt": DESCRIBE})) == []  # DP106 explains the same line


def test_the_older_plugin_wording_counts_too():
    [f] = run("DP106", facts_from({"events.txt": OLD}))
    assert cites(f) == ["events.txt:3"]


def test_silent_for_a_plugin_restart_during_allocation():
    assert run("DP106", facts_from({"events.txt": PLUGIN_RESTART})) == []
    assert len(run("DP105", facts_from({"events.txt": PLUGIN_RESTART}))) == 1
