"""OP109 helm-object-owned-elsewhere: Helm will not adopt an object of the operator chart that is not this release's."""

from failure_fixtures import cites, facts_from, run

# https://github.com/helm/helm/issues/12635 (a second --generate-name install of the GPU Operator)
OWNED = ('$ sudo helm install --wait --generate-name -n gpu-operator --create-namespace --set driver.enabled=false nvidia/gpu-operator\n'
         'Error: INSTALLATION FAILED: Unable to continue with install: ClusterRoleBinding "gpu-operator" in namespace "" exists and cannot be '
         'imported into the current release: invalid ownership metadata; annotation validation error: key "meta.helm.sh/release-name" must '
         'equal "gpu-operator-1702439910": current value is "gpu-operator-1702434888"\n')
# https://github.com/NVIDIA/gpu-operator/issues/530 (objects no release owns)
UNOWNED = ('Error: INSTALLATION FAILED: rendered manifests contain a resource that already exists. Unable to continue with install: ClusterRole '
           '"gpu-operator" in namespace "" exists and cannot be imported into the current release: invalid ownership metadata; label validation '
           'error: missing key "app.kubernetes.io/managed-by": must be set to "Helm"; annotation validation error: missing key '
           '"meta.helm.sh/release-name": must be set to "gpu-operator"\n')


def test_an_object_of_an_old_release_names_it_and_how_to_look():
    [f] = run("OP109", facts_from({"install.txt": OWNED}))
    assert cites(f) == ["install.txt:2"] and f.layer.value == "operator" and "ClusterRoleBinding gpu-operator" in f.title
    assert "Another release owns it" in f.explanation and "No release owns it" not in f.explanation
    assert f.fixes[0].commands == ("helm list -A", "kubectl get ClusterRoleBinding gpu-operator -o yaml")


def test_an_object_no_release_owns_gets_the_other_reading():
    [f] = run("OP109", facts_from({"install.txt": UNOWNED}))
    assert "No release owns it" in f.explanation and "Another release owns it" not in f.explanation


def test_silent_on_a_clean_install():
    ok = "NAME: gpu-operator-1702439910\nLAST DEPLOYED: Wed Dec 13 12:58:30 2023\nNAMESPACE: gpu-operator\nSTATUS: deployed\nREVISION: 1\n"
    assert run("OP109", facts_from({"install.txt": ok})) == []
