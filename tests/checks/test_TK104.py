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
