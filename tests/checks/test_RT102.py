"""RT102 docker-default-runtime-not-nvidia."""

from failure_fixtures import cites, facts_from, node, run

DAEMON = """\
$ cat /etc/docker/daemon.json
{
    "bip": "192.168.99.1/24",
    "default-shm-size": "1G",
    "runtimes": {
        "nvidia": {
            "path": "/usr/bin/nvidia-container-runtime",
            "runtimeArgs": []
        }
    }
}
"""


def test_docker_backed_node_without_nvidia_default():
    n = node("dgx2-01", runtime="docker://20.10.21")
    [f] = run("RT102", facts_from({"daemon.json": DAEMON}, n))
    assert f.severity.value == "error" and f.facts["kubelet_uses_docker"] is True
    assert cites(f)[:2] == ["daemon.json:2", "daemon.json:6"] and '"default-runtime": "nvidia"' in f.fixes[0].snippet


def test_silent_when_nvidia_is_default_or_kubelet_uses_containerd():
    ok = DAEMON.replace('"default-shm-size": "1G",', '"default-runtime": "nvidia",\n    "default-shm-size": "1G",')
    assert run("RT102", facts_from({"daemon.json": ok}, node("dgx2-01", runtime="docker://20.10.21"))) == []
    assert run("RT102", facts_from({"daemon.json": DAEMON}, node("dgx2-01", runtime="containerd://1.7.27"))) == []
