"""The shipped manifests grant what the live path uses and nothing more."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpusleuth.knowledge import table
from gpusleuth.live.probes import pod_spec
from gpusleuth.live.resources import BY_KIND

DEPLOY = Path(__file__).parents[2] / "deploy"
WRITE = {"create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate", "*"}


def _docs(name):
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def test_collector_role_is_read_only_and_covers_every_resource_read():
    docs = _docs("collector-rbac.yaml")
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    granted = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    assert not any(set(rule["verbs"]) & WRITE for rule in role["rules"])
    for kind in ("Node", "Pod", "Event", "ConfigMap", "Namespace", "DaemonSet", "Deployment", "RuntimeClass", "ClusterPolicy", "NVIDIADriver", "NicClusterPolicy"):
        assert (BY_KIND[kind].group, BY_KIND[kind].plural) in granted, kind
    assert ("", "pods/log") in granted and ("", "secrets") not in granted
    helm = next(d for d in docs if d["kind"] == "Role")
    assert helm["metadata"]["namespace"] == "gpu-operator" and helm["rules"] == [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]


def test_probe_manifests_match_what_probes_do():
    docs = _docs("node-probes.yaml")
    t = table("live")["probe"]
    ns = next(d for d in docs if d["kind"] == "Namespace")
    assert ns["metadata"]["name"] == t["namespace"] and ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    sa = next(d for d in docs if d["kind"] == "ServiceAccount")
    assert sa["metadata"]["name"] == t["service_account"] and sa["automountServiceAccountToken"] is False
    role = next(d for d in docs if d["kind"] == "Role")
    assert role["metadata"]["namespace"] == t["namespace"]
    assert {r for rule in role["rules"] for r in rule["resources"]} == {"pods", "pods/log"}
    pod = pod_spec("p", t["namespace"], "n", "r", t["image"], 60)
    assert pod["spec"]["serviceAccountName"] == sa["metadata"]["name"] and pod["metadata"]["namespace"] == ns["metadata"]["name"]
