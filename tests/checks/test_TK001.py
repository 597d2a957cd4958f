"""TK001: the toolkit daemonset pod fails; a symptom of a misdirected toolkit, or a cause named by its log."""

from __future__ import annotations

from runtime_samples import CONFIGS_TWO, HELM_DEFAULTS, PS_TWO, facts_from, fired

from gpusleuth.model.evidence import Evidence
from gpusleuth.model.k8s import Pod
from gpusleuth.model.logs import ContainerLog, LogLine

POD = "nvidia-container-toolkit-daemonset-bhqw6"


def _pod(status: str) -> Pod:
    return Pod(name=POD, namespace="gpu-operator", node="192-18-132-31", status=status, restarts=1,
               evidence=Evidence("pods.txt", 8, f"gpu-operator   {POD}   0/1   {status}   1 (15s ago)   22s"))


def _log(*messages: str) -> ContainerLog:
    lines = tuple(LogLine("toolkit.log", i + 2, m, m.split('msg="', 1)[-1].rstrip('"'), pod=POD) for i, m in enumerate(messages))
    return ContainerLog("toolkit.log", lines, pod=POD, namespace="gpu-operator", container="nvidia-container-toolkit-ctr")


K3S_PS = ("root@k3s-gpu:~# ps -ef | grep [c]ontainerd\n"
          "root  1003  912  1 Sep20 ?  02:40:12 containerd -c /var/lib/rancher/k3s/agent/etc/containerd/config.toml "
          "-a /run/k3s/containerd/containerd.sock --state /run/k3s/containerd --root /var/lib/rancher/k3s/agent/containerd\n"
          "root   912    1 12 Sep20 ?  17:01:33 /usr/local/bin/k3s server\n")
SOCKET_LOG = (
    'time="2023-05-04T04:43:08Z" level=warning msg="Error signaling containerd, attempt 5/6: unable to dial: dial unix /runtime/sock-dir/containerd.sock: connect: no such file or directory"',
    'time="2023-05-04T04:43:13Z" level=fatal msg="Error: unable to restart containerd: unable to signal containerd: unable to dial: dial unix /runtime/sock-dir/containerd.sock: connect: no such file or directory"',
)


def test_symptom_of_the_wrong_instance_on_the_seed003_node(tmp_path):
    facts = facts_from({"ps.txt": PS_TWO, "configs.txt": CONFIGS_TWO, "helm.txt": HELM_DEFAULTS}, tmp_path, [_pod("Error")])
    (f,) = fired(facts, "TK001")
    assert f.role.value == "symptom" and f.caused_by == ("RT002",) and f.evidence[0].cite() == "pods.txt:8"


def test_symptom_of_a_wrong_socket_on_k3s_with_the_decisive_line(tmp_path):
    helm = ("root@k3s-gpu:~# helm get values gpu-operator -n gpu-operator\nUSER-SUPPLIED VALUES:\n"
            "toolkit:\n  env:\n  - name: CONTAINERD_CONFIG\n    value: /var/lib/rancher/k3s/agent/etc/containerd/config.toml\n")
    facts = facts_from({"ps.txt": K3S_PS, "helm.txt": helm}, tmp_path, [_pod("CrashLoopBackOff"), _log(*SOCKET_LOG)])
    (f,) = fired(facts, "TK001")
    assert f.role.value == "symptom" and f.caused_by == ("RT003",)
    assert [e.cite() for e in f.evidence][:2] == ["pods.txt:8", "toolkit.log:2"]
    assert "host socket /run/containerd/containerd.sock" in f.explanation
    (cause,) = fired(facts, "RT003")
    assert "CONTAINERD_SOCKET=/run/containerd/containerd.sock (default, not set)" in cause.title
    permanent = next(x for x in cause.fixes if x.kind.value == "permanent")
    assert "value: /run/k3s/containerd/containerd.sock" in permanent.snippet
    assert "value: /var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl" in permanent.snippet


def test_root_cause_named_by_its_log_when_the_setup_is_unknown(tmp_path):
    dump = ('time="2024-12-07T03:35:20Z" level=error msg="error running nvidia-toolkit: unable to setup runtime: '
            'unable to load config: failed to get config from command: error running containerd command: exit status 1"')
    facts = facts_from({}, tmp_path, [_pod("CrashLoopBackOff"), _log(dump)])
    (f,) = fired(facts, "TK001")
    assert f.role.value == "root-cause" and f.evidence[1].cite() == "toolkit.log:2"
    assert any(x.snippet and "RUNTIME_CONFIG_SOURCE" in x.snippet for x in f.fixes)
    assert any(f"kubectl logs -n gpu-operator {POD} -c nvidia-container-toolkit-ctr --previous" in c for x in f.fixes for c in x.commands)


def test_silent_when_the_toolkit_runs(tmp_path):
    running = Pod(name=POD, namespace="gpu-operator", status="Running", evidence=Evidence("pods.txt", 8, POD))
    assert fired(facts_from({}, tmp_path, [running, _log('level=info msg="Waiting for signal"')]), "TK001") == []
