"""OP110 service-account-forbidden: RBAC refuses a GPU component's service account."""

from failure_fixtures import cites, facts_from, run

# https://github.com/NVIDIA/gpu-operator/issues/123 (the operator's account in `default` may not list ClusterPolicies)
LOG = ('$ kubectl logs gpu-operator-7d8f6bd7c5-x2v9k\n'
       'E1229 04:20:20.848290       1 reflector.go:153] pkg/mod/k8s.io/client-go@v0.17.4/tools/cache/reflector.go:105: Failed to list '
       '*v1.ClusterPolicy: clusterpolicies.nvidia.com is forbidden: User "system:serviceaccount:default:gpu-operator" cannot list resource '
       '"clusterpolicies" in API group "nvidia.com" at the cluster scope\n')


def test_the_refused_account_verb_and_resource_fill_the_commands():
    [f] = run("OP110", facts_from({"operator.log": LOG}))
    assert cites(f) == ["operator.log:2"] and f.layer.value == "operator" and f.title.startswith("default/gpu-operator may not list clusterpolicies")
    assert f.fixes[0].commands == ("kubectl auth can-i list clusterpolicies --as=system:serviceaccount:default:gpu-operator",
                                   "kubectl get clusterrolebindings,rolebindings -A -o wide | grep gpu-operator")


def test_silent_when_the_operator_lists_its_policies():
    ok = '$ kubectl logs gpu-operator-7d8f6bd7c5-x2v9k\n{"level":"info","ts":1609192433.96,"logger":"controller_clusterpolicy","msg":"Found Resource","DaemonSet":"nvidia-driver-daemonset"}\n'
    assert run("OP110", facts_from({"operator.log": ok})) == []
