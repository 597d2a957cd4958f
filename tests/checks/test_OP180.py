"""OP180 known-issue-of-version-in-use."""

from failure_fixtures import cites, facts_from, run


def issues_of(f):
    return {i["id"]: i for i in f.facts["known_issues"]}

NODES = """\
$ kubectl get nodes -o wide
NAME        STATUS   ROLES    AGE   VERSION        INTERNAL-IP   EXTERNAL-IP   OS-IMAGE             KERNEL-VERSION      CONTAINER-RUNTIME
gpu-node-1  Ready    <none>   12d   v1.30.4+k3s1   10.0.0.11     <none>        Ubuntu 22.04.4 LTS   5.15.0-119-generic   containerd://1.7.20-k3s1
"""


def pod(toolkit: str) -> str:
    return f"""\
$ kubectl describe pod -n gpu-operator nvidia-container-toolkit-daemonset-7xk2p
Name:             nvidia-container-toolkit-daemonset-7xk2p
Namespace:        gpu-operator
Node:             gpu-node-1/10.0.0.11
Status:           Running
Containers:
  nvidia-container-toolkit-ctr:
    Image:          nvcr.io/nvidia/k8s/container-toolkit:{toolkit}
    State:          Running
    Ready:          True
"""


def test_toolkit_1_17_0_on_k3s_is_a_known_issue_with_its_fix():
    found = run("OP180", facts_from({"nodes.txt": NODES, "toolkit.txt": pod("v1.17.0-ubuntu20.04")}))
    [f] = [f for f in found if f.component == "container-toolkit"]  # one finding per component, every issue in it
    issue = issues_of(f)["container-toolkit-1.17.0-k3s-rke2-start"]
    assert f.facts["in_use"] == ["1.17.0"] and issue["fixed_in"] == "1.17.1"
    assert f.layer.value == "container-toolkit" and f.severity.value == "info"  # no printed line of it: a note
    assert any(c.startswith("toolkit.txt:") for c in cites(f))
    assert issue["conditions_held"] == ["platform k3s/rke2/microk8s"]
    assert f.fixes[0].description.startswith("Upgrade container-toolkit to 1.17.8 or later")  # the highest fix named


def test_a_platform_the_artifacts_contradict_keeps_the_row_silent():
    gke = NODES.replace("v1.30.4+k3s1", "v1.30.4-gke.1348000").replace("-k3s1", "")
    found = run("OP180", facts_from({"nodes.txt": gke, "toolkit.txt": pod("v1.17.0-ubuntu20.04")}))
    assert "container-toolkit-1.17.0-k3s-rke2-start" not in {i for f in found for i in issues_of(f)}


def test_silent_on_the_fixed_version():
    found = run("OP180", facts_from({"nodes.txt": NODES, "toolkit.txt": pod("v1.17.8-ubuntu20.04")}))
    fixed = [i for f in found for i in f.facts["known_issues"] if i["fixed_in"]]
    assert fixed == []


def test_unknown_platform_is_not_held_against_the_row_but_said():
    plain = NODES.replace("v1.30.4+k3s1", "v1.30.4").replace("-k3s1", "")
    found = run("OP180", facts_from({"nodes.txt": plain, "toolkit.txt": pod("v1.17.0-ubuntu20.04")}))
    [f] = [f for f in found if f.component == "container-toolkit"]
    assert issues_of(f)["container-toolkit-1.17.0-k3s-rke2-start"]["conditions_unknown"] == ["platform k3s/rke2/microk8s"]
    assert "Not shown by the artifacts" in f.explanation


def test_warning_when_the_artifacts_print_the_issue_s_own_line():
    log = """\
$ kubectl logs -n gpu-operator gpu-operator-6d7f9c8b5-x2k9p
fatal error: concurrent map read and map write
"""
    chart = """\
$ helm list -n gpu-operator
NAME          NAMESPACE     REVISION  UPDATED                                  STATUS    CHART                  APP VERSION
gpu-operator  gpu-operator  1         2024-02-01 10:00:00.000000 +0000 UTC     deployed  gpu-operator-v23.9.1   v23.9.1
"""
    found = run("OP180", facts_from({"helm.txt": chart, "operator.log": log}))
    [f] = [f for f in found if f.component == "gpu-operator"]
    assert f.severity.value == "warning" and issues_of(f)["gpu-operator-24.3.0-concurrent-map"]["lines_seen"] == 1
    assert "operator.log:2" in cites(f) and f.facts["known_issues"][0]["id"] == "gpu-operator-24.3.0-concurrent-map"
