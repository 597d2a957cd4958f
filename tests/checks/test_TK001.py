"""TK001: the toolkit daemonset pod fails; a symptom of a misdirected toolkit, or a cause named by its log."""

from __future__ import annotations

from runtime_samples import CONFIGS_TWO, HELM_DEFAULTS, PS_TWO, SEED003, facts_from, fired

PODS = (SEED003 / "kubectl-get-pods.txt").read_text()
POD = "nvidia-container-toolkit-daemonset-bhqw6"

K3S_PODS = f"""\
root@k3s-gpu:~# kubectl get pods -n gpu-operator -o wide
NAME                                       READY   STATUS             RESTARTS        AGE   IP           NODE      NOMINATED NODE   READINESS GATES
gpu-operator-6b8d5c9f6d-x2lqv              1/1     Running            0               50m   10.42.0.12   k3s-gpu   <none>           <none>
{POD}   0/1     CrashLoopBackOff   14 (3m1s ago)   50m   10.42.0.17   k3s-gpu   <none>           <none>
"""
K3S_PS = ("root@k3s-gpu:~# ps -ef | grep [c]ontainerd\n"
          "root  1003  912  1 Sep20 ?  02:40:12 containerd -c /var/lib/rancher/k3s/agent/etc/containerd/config.toml "
          "-a /run/k3s/containerd/containerd.sock --state /run/k3s/containerd --root /var/lib/rancher/k3s/agent/containerd\n")
K3S_HELM = ("root@k3s-gpu:~# helm get values gpu-operator -n gpu-operator\nUSER-SUPPLIED VALUES:\n"
            "toolkit:\n  env:\n  - name: CONTAINERD_CONFIG\n    value: /var/lib/rancher/k3s/agent/etc/containerd/config.toml\n")
SOCKET_LOG = f"""\
root@k3s-gpu:~# kubectl logs -n gpu-operator {POD} -c nvidia-container-toolkit-ctr --previous
time="2023-05-04T04:42:48Z" level=info msg="Starting nvidia-toolkit"
time="2023-05-04T04:43:08Z" level=warning msg="Error signaling containerd, attempt 5/6: unable to dial: dial unix /runtime/sock-dir/containerd.sock: connect: no such file or directory"
time="2023-05-04T04:43:13Z" level=warning msg="Max retries reached 6/6, aborting"
time="2023-05-04T04:43:13Z" level=fatal msg="Error: unable to restart containerd: unable to signal containerd: unable to dial: dial unix /runtime/sock-dir/containerd.sock: connect: no such file or directory"
"""
DUMP_LOG = f"""\
$ kubectl logs -n gpu-operator {POD} -c nvidia-container-toolkit-ctr --previous
time="2024-12-07T03:35:20Z" level=info msg="Starting nvidia-toolkit"
time="2024-12-07T03:35:20Z" level=error msg="error running nvidia-toolkit: unable to setup runtime: unable to load config: failed to get config from command: error running containerd command: exit status 1"
"""


def test_symptom_of_the_wrong_instance_on_the_seed003_node(tmp_path):
    facts = facts_from({"ps.txt": PS_TWO, "configs.txt": CONFIGS_TWO, "helm.txt": HELM_DEFAULTS, "pods.txt": PODS}, tmp_path)
    (f,) = fired(facts, "TK001")
    assert f.role.value == "symptom" and f.caused_by == ("RT002",) and f.evidence[0].cite() == "pods.txt:9"
    assert f.facts["state"] == "Error"


def test_symptom_of_a_wrong_socket_on_k3s_with_the_decisive_line(tmp_path):
    facts = facts_from({"ps.txt": K3S_PS, "helm.txt": K3S_HELM, "pods.txt": K3S_PODS, "toolkit.log": SOCKET_LOG}, tmp_path)
    (f,) = fired(facts, "TK001")
    assert f.role.value == "symptom" and f.caused_by == ("RT003",)
    assert [e.cite() for e in f.evidence][:2] == ["pods.txt:4", "toolkit.log:3"]
    assert "host socket /run/containerd/containerd.sock" in f.explanation
    (cause,) = fired(facts, "RT003")
    assert "CONTAINERD_SOCKET=/run/containerd/containerd.sock (default, not set)" in cause.title
    permanent = next(x for x in cause.fixes if x.kind.value == "permanent")
    assert "value: /run/k3s/containerd/containerd.sock" in permanent.snippet
    assert "value: /var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl" in permanent.snippet


def test_root_cause_named_by_its_log_when_the_setup_is_unknown(tmp_path):
    facts = facts_from({"pods.txt": K3S_PODS, "toolkit.log": DUMP_LOG}, tmp_path)
    (f,) = fired(facts, "TK001")
    assert f.role.value == "root-cause" and f.evidence[1].cite() == "toolkit.log:3"
    assert any(x.snippet and "RUNTIME_CONFIG_SOURCE" in x.snippet for x in f.fixes)
    assert any(f"kubectl logs -n gpu-operator {POD} -c nvidia-container-toolkit-ctr --previous" in c for x in f.fixes for c in x.commands)


def test_silent_when_the_toolkit_runs(tmp_path):
    running = K3S_PODS.replace("0/1     CrashLoopBackOff   14 (3m1s ago)", "1/1     Running            0            ")
    ok_log = SOCKET_LOG.splitlines()[0] + '\ntime="2023-05-04T04:43:13Z" level=info msg="Waiting for signal"\n'
    assert fired(facts_from({"pods.txt": running, "toolkit.log": ok_log}, tmp_path), "TK001") == []
