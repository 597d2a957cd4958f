"""TK104 cdi-device-unresolvable: the engine finds no CDI spec defining the requested device."""

from failure_fixtures import cites, facts_from, run

JOURNAL = """\
$ journalctl -u containerd --since -10m | grep -i cdi
Mar 02 08:44:10 gpu-node-6 containerd[1187]: time="2026-03-02T08:44:10.112Z" level=error msg="RunPodSandbox for &PodSandboxMetadata{Name:cuda-vectoradd,Uid:8a0c,Namespace:default,} failed" error="failed to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=all"
"""


def test_unresolvable_cdi_device_names_the_device_and_node():
    [f] = run("TK104", facts_from({"containerd.log": JOURNAL}))
    assert cites(f) == ["containerd.log:2"] and f.node == "gpu-node-6"
    assert "nvidia.com/gpu=all" in f.title and f.fixes[0].commands[0].startswith("kubectl debug node/gpu-node-6")


def test_silent_when_cdi_injection_works():
    ok = JOURNAL.replace('level=error msg="RunPodSandbox for &PodSandboxMetadata{Name:cuda-vectoradd,Uid:8a0c,Namespace:default,} failed" error="failed to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=all"',
                         'level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:cuda-vectoradd,Uid:8a0c,Namespace:default,} returns sandbox id \\"4f1c\\""')
    assert run("TK104", facts_from({"containerd.log": ok})) == []


def test_the_device_name_stops_where_the_name_ends():
    """Go wraps the error (`...=all: unknown`), kubelet lists several names, pastes add quotes and backticks."""
    lines = {
        'error="failed to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=all"': "nvidia.com/gpu=all",
        "failed to inject CDI devices: unresolvable CDI devices management.nvidia.com/gpu=all: unknown": "management.nvidia.com/gpu=all",
        "`failed to inject CDI devices: unresolvable CDI devices management.nvidia.com/gpu=all` (~729 restarts)": "management.nvidia.com/gpu=all",
        "unresolvable CDI devices management.nvidia.com/gpu=0, management.nvidia.com/gpu=1": "management.nvidia.com/gpu=0",
        "(unresolvable CDI devices k8s.gpu.nvidia.com/device=gpu-1)": "k8s.gpu.nvidia.com/device=gpu-1",
    }
    for line, device in lines.items():
        [f] = run("TK104", facts_from({"events.txt": f"Warning  Failed  10s  kubelet  Error: {line}\n"}))
        assert f"CDI device {device} cannot be resolved" in f.title, (line, f.title)
