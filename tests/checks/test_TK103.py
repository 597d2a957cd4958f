"""TK103 container-cli-cannot-reach-driver: nvidia-container-cli initialization error."""

from failure_fixtures import cites, event, facts_from, run

MSG = ('Error: failed to start container "nvidia-driver-ctr": Error response from daemon: OCI runtime create failed: '
       'container_linux.go:370: starting container process caused: process_linux.go:459: container init caused: Running hook #0:: '
       'error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: load library failed: '
       'libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown')


def test_load_library_failed_explains_the_driver_root():
    e = event("pod/nvidia-device-plugin-daemonset-9kq2x", "Failed", MSG, line=7, node="gpu-node-2")
    [f] = run("TK103", facts_from({}, e))
    assert cites(f) == ["events.txt:7"] and f.node == "gpu-node-2"
    assert "driver root" in f.explanation and "load library failed" in f.title


def test_silent_for_a_healthy_start():
    e = event("pod/nvidia-device-plugin-daemonset-9kq2x", "Started", "Started container nvidia-device-plugin", line=7, type_="Normal")
    assert run("TK103", facts_from({}, e)) == []
