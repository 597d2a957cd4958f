"""CRI-O crio.conf / crio.conf.d and Docker daemon.json."""

from __future__ import annotations

import pytest

from conftest import doc_from_text
from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.parsers.base import NO, SURE
from gpusleuth.parsers.engine_config import parse_crio, parse_docker, sniff_crio, sniff_docker

CRIO_DROP_IN = """\
[root@ocp-gpu-0 ~]# cat /etc/crio/crio.conf.d/99-nvidia.toml

[crio]

  [crio.runtime]
    default_runtime = "nvidia"

    [crio.runtime.runtimes]

      [crio.runtime.runtimes.nvidia]
        runtime_path = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
        runtime_root = "/run/nvidia"
        runtime_type = "oci"
        monitor_path = "/usr/libexec/crio/conmon"
"""


def test_crio_drop_in_written_by_the_toolkit():
    doc = doc_from_text(CRIO_DROP_IN)
    assert sniff_crio(doc) == SURE
    cfg = next(iter(parse_crio.parse(doc)))
    assert cfg.path == "/etc/crio/crio.conf.d/99-nvidia.toml" and cfg.engine == "crio"
    assert cfg.default_runtime == "nvidia" and cfg.default_runtime_evidence.line == 6
    nv = cfg.runtimes["nvidia"]
    assert nv.binary == "/usr/local/nvidia/toolkit/nvidia-container-runtime" and nv.binary_key == "runtime_path"
    assert nv.evidence.line == 10 and nv.binary_evidence.line == 11
    assert nv.runtime_type == "oci"


def test_crio_main_conf_with_hooks_dir_and_a_broken_line():
    text = """\
# /etc/crio/crio.conf
[crio.runtime]
default_runtime = "crun"
hooks_dir = [
    "/usr/share/containers/oci/hooks.d",
    "/run/containers/oci/hooks.d",
]
conmon_cgroup = "pod
[crio.runtime.runtimes.crun]
runtime_path = "/usr/bin/crun"
"""
    cfg = next(iter(parse_crio.parse(doc_from_text(text, "crio.conf"))))
    assert cfg.path == "/etc/crio/crio.conf" and cfg.default_runtime == "crun"
    assert cfg.hooks_dirs == ("/usr/share/containers/oci/hooks.d", "/run/containers/oci/hooks.d")
    assert "crun" in cfg.runtimes
    assert cfg.problems and cfg.problems[0].kind == "syntax" and "line 8" in cfg.problems[0].message


def test_crio_sniff_ignores_containerd():
    assert sniff_crio(Document("c.toml", ('[plugins."io.containerd.grpc.v1.cri"]',))) == NO


DAEMON_JSON = """\
root@dgx-01:~# cat /etc/docker/daemon.json
{
    "default-runtime": "nvidia",
    "exec-opts": ["native.cgroupdriver=systemd"],
    "runtimes": {
        "nvidia": {
            "args": [],
            "path": "nvidia-container-runtime"
        }
    }
}
"""


def test_docker_daemon_json():
    doc = doc_from_text(DAEMON_JSON)
    assert sniff_docker(doc) == SURE
    cfg = next(iter(parse_docker.parse(doc)))
    assert cfg.path == "/etc/docker/daemon.json" and cfg.default_runtime == "nvidia"
    assert cfg.default_runtime_evidence.line == 3
    nv = cfg.runtimes["nvidia"]
    assert nv.binary == "nvidia-container-runtime" and nv.evidence.line == 6 and nv.binary_evidence.line == 8


def test_docker_truncated_json_is_unusable_with_line():
    doc = doc_from_text("\n".join(DAEMON_JSON.splitlines()[:6]))
    with pytest.raises(UnusableData, match="line"):
        list(parse_docker.parse(doc))


def test_docker_sniff_leaves_kubernetes_json_alone():
    k8s = Document("pod.json", ("{", '  "apiVersion": "v1",', '  "kind": "Pod",', '  "runtimes": {}', "}"))
    assert sniff_docker(k8s) == NO


def test_docker_sniff_leaves_crictl_info_alone():
    crictl = doc_from_text('$ crictl info\n{\n  "config": {\n    "containerd": {\n      "defaultRuntimeName": "runc",\n'
                           '      "runtimes": {"runc": {"runtimeType": "io.containerd.runc.v2"}}\n    }\n  }\n}\n')
    assert sniff_docker(crictl) == NO
