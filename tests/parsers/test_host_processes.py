"""Processes, units, kubelet args, crictl info, containerd --version, ls probes."""

from __future__ import annotations

import pytest

from conftest import doc_from_text, docs_from_text
from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.model.runtime import ContainerdConfig, ContainerdInstance, KubeletRuntime
from gpusleuth.parsers.base import NO, SURE
from gpusleuth.parsers.host_processes import (
    parse_crictl,
    parse_probe,
    parse_processes,
    parse_version,
    sniff_crictl,
    sniff_processes,
    sniff_version,
)

PS_EF_SNAP = """\
root@192-18-132-31:~# ps -ef | grep -E 'containerd|kubelet'
root        1187       1  0 Sep26 ?        00:03:41 /usr/bin/containerd
root      242547       1  2 Sep27 ?        00:41:07 /snap/k8s/3421/bin/containerd --address /var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock --config /var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml --root /var/lib/k8s-containerd/k8s-containerd/var/lib/containerd
root      242711       1  4 Sep27 ?        01:10:52 /snap/k8s/3421/bin/kubelet --container-runtime-endpoint=/var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock --node-ip=192.18.132.31
root      243102  242547  0 Sep27 ?        00:00:12 /snap/k8s/3421/bin/containerd-shim-runc-v2 -namespace k8s.io -id 5f4c0d9e -address /var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock
root     1520331 1519870  0 09:02 pts/0    00:00:00 grep --color=auto -E containerd|kubelet
"""


def test_ps_ef_two_containerds_and_kubelet():
    doc = doc_from_text(PS_EF_SNAP)
    assert sniff_processes(doc) == SURE
    objs = list(parse_processes.parse(doc))
    inst = [o for o in objs if isinstance(o, ContainerdInstance)]
    kub = [o for o in objs if isinstance(o, KubeletRuntime)]
    assert len(inst) == 2 and len(kub) == 1
    std, snap = inst
    assert (std.config_path, std.socket, std.config_flag, std.pid) == ("/etc/containerd/config.toml", "/run/containerd/containerd.sock", False, 1187)
    assert snap.config_path == "/var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml" and snap.config_flag
    assert snap.socket == "/var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock" and snap.evidence.line == 3
    assert kub[0].socket == "/var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock" and kub[0].evidence.line == 4


def test_ps_aux_k3s_embedded_containerd():
    text = """\
USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND
root         912 12.1  3.2 1634840 528112 ?     Ssl  Sep20 1021:33 /usr/local/bin/k3s server
root        1003  1.9  0.5 1486064 88340 ?      Sl   Sep20 160:12 containerd -c /var/lib/rancher/k3s/agent/etc/containerd/config.toml -a /run/k3s/containerd/containerd.sock --state /run/k3s/containerd --root /var/lib/rancher/k3s/agent/containerd
"""
    doc = doc_from_text(text)
    assert sniff_processes(doc) == SURE
    (inst,) = parse_processes.parse(doc)
    assert inst.config_path == "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"
    assert inst.socket == "/run/k3s/containerd/containerd.sock" and inst.binary == "containerd" and inst.pid == 1003


def test_pgrep_microk8s_and_k0s_equals_flags():
    text = """\
$ pgrep -a containerd
2231 /snap/microk8s/7229/bin/containerd --config /var/snap/microk8s/7229/args/containerd.toml --root /var/snap/microk8s/common/var/lib/containerd --state /var/snap/microk8s/common/run/containerd --address /var/snap/microk8s/common/run/containerd.sock
3310 /var/lib/k0s/bin/containerd --root=/var/lib/k0s/containerd --state=/run/k0s/containerd --address=/run/k0s/containerd.sock --log-level=info --config=/etc/k0s/containerd.toml
"""
    micro, k0s = parse_processes.parse(doc_from_text(text))
    assert micro.socket == "/var/snap/microk8s/common/run/containerd.sock" and micro.pid == 2231
    assert (k0s.config_path, k0s.socket) == ("/etc/k0s/containerd.toml", "/run/k0s/containerd.sock")


def test_systemctl_status_tree_gives_the_unit():
    text = """\
root@192-18-132-31:~# systemctl status snap.k8s.containerd.service
● snap.k8s.containerd.service - Service for snap application k8s.containerd
     Loaded: loaded (/etc/systemd/system/snap.k8s.containerd.service; enabled; vendor preset: enabled)
     Active: active (running) since Sat 2025-09-27 04:12:19 UTC; 1 day 4h ago
   Main PID: 242547 (containerd)
      Tasks: 187
     Memory: 1.2G
     CGroup: /system.slice/snap.k8s.containerd.service
             ├─242547 /snap/k8s/3421/bin/containerd --address /var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock --config /var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml
             └─243102 /snap/k8s/3421/bin/containerd-shim-runc-v2 -namespace k8s.io -id 5f4c0d9e
"""
    (inst,) = parse_processes.parse(doc_from_text(text))
    assert inst.service == "snap.k8s.containerd.service" and inst.pid == 242547
    assert inst.config_path.startswith("/var/lib/k8s-containerd/")


def test_systemctl_list_units():
    text = """\
root@node:~# systemctl list-units --type=service | grep containerd
  containerd.service                  loaded active running containerd container runtime
  snap.k8s.containerd.service         loaded active running Service for snap application k8s.containerd
"""
    a, b = parse_processes.parse(doc_from_text(text))
    assert (a.service, b.service) == ("containerd.service", "snap.k8s.containerd.service")
    assert a.config_path is None and a.socket is None


def test_kubelet_args_file():
    text = """\
root@node:~# cat /var/snap/k8s/common/args/kubelet
--anonymous-auth=false
--authentication-token-webhook=true
--container-runtime-endpoint=/var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock
--fail-swap-on=false
"""
    doc = doc_from_text(text)
    assert sniff_processes(doc) == SURE
    (kub,) = parse_processes.parse(doc)
    assert kub.endpoint.endswith("containerd.sock") and kub.evidence.line == 4


def test_kubeadm_flags_env():
    text = 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock --pod-infra-container-image=registry.k8s.io/pause:3.9"\n'
    doc = Document("var/lib/kubelet/kubeadm-flags.env", (text.rstrip(),))
    (kub,) = parse_processes.parse(doc)
    assert kub.socket == "/var/run/containerd/containerd.sock"


def test_ps_without_daemons_is_unusable():
    doc = doc_from_text("root@n:~# ps -ef | grep containerd\nroot 99 98 0 09:02 pts/0 00:00:00 grep --color=auto containerd\n")
    with pytest.raises(UnusableData):
        list(parse_processes.parse(doc))


CRICTL_17 = """\
root@gpu-node-2:~# crictl info
{
  "status": {
    "conditions": [
      {"type": "RuntimeReady", "status": true, "reason": "", "message": ""},
      {"type": "NetworkReady", "status": true, "reason": "", "message": ""}
    ]
  },
  "config": {
    "containerd": {
      "snapshotter": "overlayfs",
      "defaultRuntimeName": "runc",
      "runtimes": {
        "nvidia": {
          "runtimeType": "io.containerd.runc.v2",
          "runtimePath": "",
          "options": {
            "BinaryName": "/usr/local/nvidia/toolkit/nvidia-container-runtime"
          },
          "privileged_without_host_devices": false
        },
        "runc": {
          "runtimeType": "io.containerd.runc.v2",
          "options": {"SystemdCgroup": true}
        }
      }
    },
    "enableCDI": true,
    "cdiSpecDirs": ["/etc/cdi", "/var/run/cdi"],
    "containerdRootDir": "/var/lib/containerd",
    "containerdEndpoint": "/run/containerd/containerd.sock",
    "rootDir": "/var/lib/containerd/io.containerd.grpc.v1.cri"
  },
  "golang": "go1.22.8",
  "lastCNILoadStatus": "OK"
}
"""


def test_crictl_info_is_the_live_runtime_set():
    doc = doc_from_text(CRICTL_17)
    assert sniff_crictl(doc) == SURE
    cfg, inst = parse_crictl.parse(doc)
    assert isinstance(cfg, ContainerdConfig) and cfg.live and cfg.socket == "/run/containerd/containerd.sock"
    assert cfg.runtimes["nvidia"].binary.endswith("nvidia-container-runtime") and cfg.runtimes["nvidia"].evidence.line == 14
    assert cfg.default_runtime == "runc" and cfg.enable_cdi is True
    assert inst.socket == "/run/containerd/containerd.sock" and inst.evidence.line == 31


def test_crictl_info_with_runtime_endpoint_flag_and_no_endpoint_field():
    text = CRICTL_17.replace("crictl info", "crictl --runtime-endpoint unix:///run/k3s/containerd/containerd.sock info").replace(
        '    "containerdEndpoint": "/run/containerd/containerd.sock",\n', "")
    cfg, inst = parse_crictl.parse(doc_from_text(text))
    assert cfg.socket == inst.socket == "/run/k3s/containerd/containerd.sock"


def test_crictl_info_grepped_for_the_default_runtime_knows_only_that():
    """`crictl info | grep defaultRuntimeName`, run with RKE2's own crictl: the default is known, the
    runtimes are not (absent from a grep is not absent from containerd)."""
    text = ("root@gpu-worker-1:~# /var/lib/rancher/rke2/bin/crictl --runtime-endpoint unix:///run/k3s/containerd/containerd.sock "
            "info | grep -i defaultRuntimeName\n"
            '      "defaultRuntimeName": "runc",\n')
    doc = doc_from_text(text)
    assert sniff_crictl(doc) == SURE
    cfg, inst = parse_crictl.parse(doc)
    assert cfg.live and cfg.fragment and cfg.runtimes == {}
    assert cfg.default_runtime == "runc" and cfg.default_runtime_evidence.line == 2
    assert cfg.socket == inst.socket == "/run/k3s/containerd/containerd.sock"


def test_crictl_truncated_is_unusable():
    with pytest.raises(UnusableData, match="truncated"):
        list(parse_crictl.parse(doc_from_text("\n".join(CRICTL_17.splitlines()[:20]))))


@pytest.mark.parametrize("line,version", [
    ("containerd containerd.io 1.6.21 3dce8eb055cbb6872793272b4f20ed16117344f8", (1, 6)),
    ("containerd github.com/containerd/containerd v1.7.27 05044ec0a9a75232cad458027ca83437aae3f4da", (1, 7)),
    ("containerd github.com/containerd/containerd/v2 v2.0.4 1a43cb6a1035441f9aca8f5666a9b3ef9e70ab20", (2, 0)),
])
def test_containerd_version(line, version):
    doc = doc_from_text(f"root@n:~# containerd --version\n{line}\n")
    assert sniff_version(doc) == SURE
    (v,) = parse_version.parse(doc)
    assert v.major_minor == version and v.evidence.line == 2


def test_ls_probe_missing_and_present():
    text = """\
root@n:~# ls -l /usr/local/nvidia/toolkit/nvidia-container-runtime /usr/bin/nvidia-container-runtime
ls: cannot access '/usr/local/nvidia/toolkit/nvidia-container-runtime': No such file or directory
-rwxr-xr-x 1 root root 3155232 Sep 27 10:00 /usr/bin/nvidia-container-runtime
"""
    gone, there = parse_probe.parse(doc_from_text(text))
    assert (gone.path, gone.exists) == ("/usr/local/nvidia/toolkit/nvidia-container-runtime", False)
    assert (there.path, there.exists, there.evidence.line) == ("/usr/bin/nvidia-container-runtime", True, 3)


def test_sniffers_stay_quiet_on_other_text():
    doc = Document("notes.txt", ("containerd is great", "so is kubelet"))
    assert sniff_processes(doc) == NO and sniff_crictl(doc) == NO and sniff_version(doc) == NO
    assert len(docs_from_text(PS_EF_SNAP)) == 1


def test_ls_la_without_its_prompt_starts_with_total():
    from gpusleuth.parsers.host_processes import parse_probe as probe

    doc = Document("listing.txt", ("total 8", "drwxr-xr-x 2 root root 4096 Mar 12 09:20 .",
                                   "-rw-r--r-- 1 root root  120 Mar 12 09:20 /etc/containerd/conf.d/99-nvidia.toml"))
    assert probe.sniff(doc) > 0
    [p] = list(probe.parse(doc))
    assert p.path == "/etc/containerd/conf.d/99-nvidia.toml" and p.exists


def test_a_failed_unit_gives_its_log_lines_as_the_hosts_journal():
    from gpusleuth.model.logs import ContainerLog
    from gpusleuth.parsers.host_processes import parse_processes

    text = ("$ systemctl status containerd\n"
            "× containerd.service - containerd container runtime\n"
            "     Loaded: loaded (/lib/systemd/system/containerd.service; enabled; vendor preset: enabled)\n"
            "     Active: failed (Result: exit-code) since Tue 2025-06-03 10:02:11 UTC; 2min ago\n"
            "    Process: 4121 ExecStart=/usr/bin/containerd (code=exited, status=1/FAILURE)\n"
            "\n"
            "Jun 03 10:02:11 gpu-node-1 containerd[4121]: containerd: failed to load TOML from /etc/containerd/config.toml: unsupported config version `2`\n"
            "Jun 03 10:02:11 gpu-node-1 systemd[1]: containerd.service: Failed with result 'exit-code'.\n")
    [doc] = [d for d in docs_from_text(text) if d.command]
    [log] = [o for o in parse_processes.parse(doc) if isinstance(o, ContainerLog)]
    assert [ln.line for ln in log.lines] == [7, 8] and log.node == "gpu-node-1"
    assert "unsupported config version" in log.lines[0].message
