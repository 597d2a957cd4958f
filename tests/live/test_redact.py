"""Redaction happens before anything is written: planted secrets never reach a bundle's bytes."""

from __future__ import annotations

import tarfile

from gpusleuth.live.bundle import write_bundle
from gpusleuth.live.helm import encode_release
from gpusleuth.live.redact import MASK, Redactor
from gpusleuth.live.resources import BY_KIND
from gpusleuth.serve.store import LogLine
from tests.live.helpers import run_collect, serving

PLANTED = {
    "env": "planted-env-registry-pw-7f3a9",
    "env_pattern": "planted-env-dsn-pw-55aa",
    "helm": "planted-helm-ngc-key-91c2",
    "helm_nested": "planted-helm-nested-pw-0b7e",
    "helm_env": "planted-helm-env-token-3d4e",
    "bearer": "planted0bearer0token0abcdef123456",
    "jwt": "eyJhbGciOiJSUzI1NiIsImtpZCI6InBsYW50ZWQifQ.eyJzdWIiOiJwbGFudGVkLXNhIn0.c2lnbmF0dXJlcGxhbnRlZA",
    "log_pw": "planted-log-password-66ff",
    "cm": "planted-configmap-token-1a2b",
    "annotation": "planted-annotation-pw-9e9e",
}


def _plant(store):
    pods = [p for p in store.items(BY_KIND["Pod"]) if p["metadata"]["name"].startswith("nvidia-driver-daemonset")]
    pod = pods[0]
    pod["spec"]["containers"][0]["env"] = [
        {"name": "REGISTRY_PASSWORD", "value": PLANTED["env"]},
        {"name": "DATABASE_URL", "value": f"postgres://app:{PLANTED['env_pattern']}@db:5432/x"},
        {"name": "NGC_TOKEN", "valueFrom": {"secretKeyRef": {"name": "ngc", "key": "token"}}},
        {"name": "DRIVER_VERSION", "value": "550.90.07"},
    ]
    pod["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration":
                                      '{"spec":{"containers":[{"env":[{"name":"ADMIN_PASSWORD","value":"%s"}]}]}}' % PLANTED["annotation"]}
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"], "nvidia-driver-ctr", False)
    store.logs[key] += [LogLine(f"GET /v2/ Authorization: Bearer {PLANTED['bearer']}"), LogLine(f"using token {PLANTED['jwt']}"),
                        LogLine(f"connecting with password={PLANTED['log_pw']} to registry")]
    store.add({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plugin-config", "namespace": "gpu-operator"},
               "data": {"config.yaml": f"version: v1\nsharing:\n  timeSlicing: {{}}\nauth:\n  token: {PLANTED['cm']}\n"}})
    release = {"name": "gpu-operator-1758912452", "namespace": "gpu-operator", "version": 4, "info": {"status": "deployed"},
               "chart": {"metadata": {"name": "gpu-operator", "version": "v25.3.4"}, "values": {"driver": {"repoConfig": {"configMapName": ""}}}},
               "config": {"ngcApiKey": PLANTED["helm"], "driver": {"repoConfig": {"password": PLANTED["helm_nested"]}, "imagePullSecrets": ["ngc-secret"]},
                          "toolkit": {"env": [{"name": "CONTAINERD_CONFIG", "value": "/etc/containerd/config.toml"},
                                              {"name": "REGISTRY_TOKEN", "value": PLANTED["helm_env"]}]}}}
    store.add({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
               "metadata": {"name": "sh.helm.release.v1.gpu-operator-1758912452.v4", "namespace": "gpu-operator",
                            "labels": {"owner": "helm", "name": "gpu-operator-1758912452", "status": "deployed", "version": "4"}},
               "data": {"release": encode_release(release)}})


def test_no_planted_secret_reaches_the_bundle(small_cluster, tmp_path):
    _plant(small_cluster)
    with serving(small_cluster) as srv:
        col = run_collect(srv.url)
    out = write_bundle(col, tmp_path / "b.tar.gz")
    with tarfile.open(out) as tar:
        blob = b"".join(tar.extractfile(m).read() for m in tar if m.isfile())
    # Helm values are gzip+base64 inside the Secret: check the decoded release too.
    from gpusleuth.live.helm import decode_release
    import json

    helm = next(a for a in col.artifacts if a.name.endswith(".v4.json"))
    release = decode_release(json.loads(helm.data)["items"][0]["data"]["release"])
    decoded = json.dumps(release)
    for what, secret in PLANTED.items():
        assert secret.encode() not in blob, what
        assert secret not in decoded, what
    # What was kept: references and ordinary values.
    assert release["config"]["driver"]["imagePullSecrets"] == ["ngc-secret"]
    assert release["config"]["toolkit"]["env"][0] == {"name": "CONTAINERD_CONFIG", "value": "/etc/containerd/config.toml"}
    pods = json.loads(next(a for a in col.artifacts if a.name == "namespaces/gpu-operator/pods.json").data)["items"]
    env = next(p for p in pods if p["spec"]["containers"][0].get("env"))["spec"]["containers"][0]["env"]
    assert env[0]["value"] == MASK and env[1]["value"] == f"postgres://app:{MASK}@db:5432/x"
    assert env[2]["valueFrom"]["secretKeyRef"] == {"name": "ngc", "key": "token"} and env[3]["value"] == "550.90.07"
    report = col.manifest["redaction"]
    where = {(e["artifact"].rsplit("/", 1)[-1], e["rule"]) for e in report["entries"]}
    assert ("gpu-operator-1758912452.v4.json", "secret-key") in where and ("gpu-operator-1758912452.v4.json", "secret-name") in where
    assert any(e["artifact"].endswith("nvidia-driver-ctr.log") for e in report["entries"])
    assert report["total"] >= len(PLANTED)
    assert not any(s in json.dumps(col.manifest) for s in PLANTED.values())


def test_redactor_rules():
    r = Redactor()
    out = r.obj({"kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "c2VjcmV0"}, "stringData": {"b": "x"}}, "a.json")
    assert out["data"] == {"a": MASK} and out["stringData"] == {"b": MASK}
    out = r.obj({"spec": {"imagePullSecrets": [{"name": "regcred"}], "secretName": "tls", "tokenFile": "/var/run/t",
                          "apiKey": "k", "clientKey": "ck", "rdma": {"enabled": True}, "nlsEnabled": True}}, "b.json")
    assert out["spec"]["imagePullSecrets"] == [{"name": "regcred"}] and out["spec"]["secretName"] == "tls"
    assert out["spec"]["tokenFile"] == "/var/run/t" and out["spec"]["apiKey"] == MASK and out["spec"]["clientKey"] == MASK
    assert out["spec"]["rdma"] == {"enabled": True}
    text = r.text('curl -H "Authorization: Basic dXNlcjpwYXNz" https://user:pa55@host/x?api_key=abc123 nvapi-' + "A" * 30, "c.log")
    assert "dXNlcjpwYXNz" not in text and "pa55" not in text and "abc123" not in text and "AAAAAAAAAAAAAAAAAAAA" not in text
    assert text.count(MASK) == 4
    assert r.text("I0601 12:00:00 driver loaded, 8 GPUs, token bucket size 5", "d.log").count(MASK) == 0
