"""Redaction as a component: a corpus of planted secrets (every kind issue 15 found leaking, and every rule's
examples of the shapes secret scanners know) goes through `serve` -> `collect` -> bundle, and none of it is
left in the bundle's bytes; GPU evidence planted beside it comes through unchanged."""

from __future__ import annotations

import base64
import json
import tarfile

import pytest

from gpusleuth.live.bundle import write_bundle
from gpusleuth.live.helm import decode_release, encode_release
from gpusleuth.live.redact import MASK, Redactor
from gpusleuth.live.resources import BY_KIND
from gpusleuth.live.secrets import FAMILIES, RULES, secret_span
from gpusleuth.serve.store import LogLine
from tests.live.helpers import run_collect, serving

PEM_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAplantedRsaKeyBody0123\nplantedSecondLine4567\n-----END RSA PRIVATE KEY-----\n"
PEM_CERT = "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEpublicCertificate\n-----END CERTIFICATE-----\n"
B64_KEY = base64.b64encode(b"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIplantedEcKey89ab\n-----END EC PRIVATE KEY-----\n").decode()
B64_CERT = base64.b64encode(PEM_CERT.encode()).decode()
PGP = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGplantedPgpKeyMaterial0123\n=plAn\n-----END PGP PRIVATE KEY BLOCK-----\n"

# The kinds issue 15 found in a bundle, each with the secret that must not be in it.
LEAKED_BEFORE = {
    "env password": "plantedEnvDbPass01",
    "env github token": "ghp_plantedPLANTEDplantedPLANTED01234567",
    "env slack webhook": "T0PLANTED/B0PLANTED/plantedSlackHookSecret99",
    "env azure account key": "pLaNtEdAzUrEkEy0123456789abcdefABCDEF+/xyz==",
    "kubeconfig client-key-data": B64_KEY,
    "pgp private key": "lQOYBGplantedPgpKeyMaterial0123",
    "tls.key in a ConfigMap": "MIIEpAIBAAKCAQEAplantedRsaKeyBody0123",
    "tls.key in Helm values": "plantedHelmTlsKeyOpaque0123",
    "tls.key (PEM) in Helm values": "plantedSecondLine4567",
    "AWS_SECRET_ACCESS_KEY in a log": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYPLANTEDKEY",
    "--registry-password X (two args)": "plantedRegistryPwArg",
    "--registry-password=X (one arg)": "plantedRegistryPwEq",
    "curl -u admin:X (shell)": "plantedCurlShellPw",
    "curl -u admin:X (args)": "plantedCurlArgsPw",
}

IN_A_GAP = "plantedApiErrorPw"  # an API error message the manifest lists as a gap

# GPU evidence planted next to the secrets: it must come through as it was.
GPU_LINES = [
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=24371, name=python3, GPU has fallen off the bus.",
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024",
    "NVIDIA_VISIBLE_DEVICES=GPU-5f2e8c9a-1b2c-4d3e-8f90-0123456789ab",
    "ldconfig: /run/nvidia/driver/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.90.07",
    "0000:3b:00.0 3D controller [0302]: NVIDIA Corporation GA100 [A100 SXM4 80GB] [10de:20b2] (rev a1)",
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver",
    'level=info msg="token bucket size 5, --token-file=/var/run/secrets/token, secretName ngc-secret"',
]


def _rule_secrets() -> list[tuple[str, str, str]]:
    """(rule, example, the part that must go) for every example of every catalogue rule."""
    out = []
    for rule in RULES:
        for example in rule.examples:
            m = rule.pattern.search(example)
            assert m is not None, f"{rule.name}: its own example does not match: {example!r}"
            start, end = secret_span(m)
            out.append((rule.name, example, example[start:end]))
    return out


def test_every_rule_redacts_its_examples_as_text_and_inside_objects():
    for name, example, secret in _rule_secrets():
        r = Redactor()
        assert secret not in r.text(example, "x.log"), (name, example)
        obj = r.obj({"kind": "ConfigMap", "data": {"note": example}, "spec": {"containers": [{"args": [example]}]}}, "x.json")
        assert secret not in json.dumps(obj), (name, example)
        assert any(e["rule"] == name for e in r.entries), (name, [e["rule"] for e in r.entries])


def test_gpu_evidence_is_left_alone():
    r = Redactor()
    text = "\n".join(GPU_LINES)
    assert r.text(text, "dmesg.log") == text and not r.entries
    obj = {"metadata": {"labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/cuda.driver.major": "550"}},
           "spec": {"containers": [{"env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}, {"name": "PWD", "value": "/workspace"}],
                                    "args": ["--fail-on-init-error=true", "--device-list-strategy", "envvar", "--token-file", "/var/run/t"]}]}}
    assert r.obj(obj, "pod.json") == obj and not r.entries


def test_families_cover_what_scanners_look_for():
    assert {"private key", "cloud key", "token", "webhook", "password", "kubeconfig credential"} <= set(FAMILIES)


def _plant(store) -> None:
    pod = next(p for p in store.items(BY_KIND["Pod"]) if p["metadata"]["name"].startswith("nvidia-driver-daemonset"))
    ctr = pod["spec"]["containers"][0]
    ctr["env"] = [
        {"name": "DB_PASS", "value": LEAKED_BEFORE["env password"]},
        {"name": "GH", "value": LEAKED_BEFORE["env github token"]},
        {"name": "ALERTS", "value": "https://hooks.slack.com/services/" + LEAKED_BEFORE["env slack webhook"]},
        {"name": "STORAGE", "value": "DefaultEndpointsProtocol=https;AccountName=gpudata;AccountKey="
                                     + LEAKED_BEFORE["env azure account key"] + ";EndpointSuffix=core.windows.net"},
        {"name": "DRIVER_VERSION", "value": "550.90.07"},
        {"name": "NVIDIA_VISIBLE_DEVICES", "value": "GPU-5f2e8c9a-1b2c-4d3e-8f90-0123456789ab"},
    ] + [{"name": f"RULE_{i}", "value": example} for i, (_, example, _) in enumerate(_rule_secrets())]
    ctr["args"] = ["--registry-password", LEAKED_BEFORE["--registry-password X (two args)"],
                   "--registry-password=" + LEAKED_BEFORE["--registry-password=X (one arg)"],
                   "curl", "-u", "admin:" + LEAKED_BEFORE["curl -u admin:X (args)"], "--driver-root=/run/nvidia/driver"]
    ctr["command"] = ["sh", "-c", f"curl -sf -u admin:{LEAKED_BEFORE['curl -u admin:X (shell)']} https://registry.local/v2/ && nvidia-smi"]

    key = (pod["metadata"]["namespace"], pod["metadata"]["name"], ctr["name"], False)
    store.logs[key] += [LogLine(f"+ export AWS_SECRET_ACCESS_KEY={LEAKED_BEFORE['AWS_SECRET_ACCESS_KEY in a log']}"),
                        LogLine(f"AWS_SECRET_ACCESS_KEY {LEAKED_BEFORE['AWS_SECRET_ACCESS_KEY in a log']}")]
    store.logs[key] += [LogLine(f"rule example: {example}") for _, example, _ in _rule_secrets()]
    store.logs[key] += [LogLine(line) for line in GPU_LINES]

    kubeconfig = ("apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n"
                  f"    client-certificate-data: {B64_CERT}\n    client-key-data: {B64_KEY}\n")
    store.add({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gpu-tools", "namespace": "gpu-operator"},
               "data": {"kubeconfig": kubeconfig, "signing.asc": PGP, "tls.key": PEM_KEY, "tls.crt": PEM_CERT,
                        "dmesg.txt": "\n".join(GPU_LINES),
                        "examples": "\n".join(example for _, example, _ in _rule_secrets())}})
    release = {"name": "gpu-operator-1758912452", "namespace": "gpu-operator", "version": 4, "info": {"status": "deployed"},
               "chart": {"metadata": {"name": "gpu-operator", "version": "v25.3.4"}, "values": {}},
               "config": {"driver": {"version": "550.90.07"},
                          "tls": {"key": LEAKED_BEFORE["tls.key in Helm values"], "crt": "public-cert-kept"},
                          "webhook": {"tls.key": PEM_KEY}}}
    store.add({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
               "metadata": {"name": "sh.helm.release.v1.gpu-operator-1758912452.v4", "namespace": "gpu-operator",
                            "labels": {"owner": "helm", "name": "gpu-operator-1758912452", "status": "deployed", "version": "4"}},
               "data": {"release": encode_release(release)}})


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    from gpusleuth.serve.synthetic import build

    store = build(4, log_lines=8, restart_every=5)
    _plant(store)
    from gpusleuth.serve.faults import Fault

    fault = Fault(path="/nicclusterpolicies$", status=500, message=f"upstream said: password={IN_A_GAP}")
    with serving(store, [fault]) as srv:
        col = run_collect(srv.url)
    out = write_bundle(col, tmp_path_factory.mktemp("b") / "b.tar.gz")
    with tarfile.open(out) as tar:
        blob = b"".join(tar.extractfile(m).read() for m in tar if m.isfile()).decode("utf-8", "replace")
    helm = next(a for a in col.artifacts if a.name.endswith(".v4.json"))
    release = decode_release(json.loads(helm.data)["items"][0]["data"]["release"])
    return col, blob, blob + json.dumps(release)


@pytest.mark.parametrize("kind", sorted(LEAKED_BEFORE))
def test_what_leaked_before_is_not_in_the_bundle(bundle, kind):
    _, _, everything = bundle
    assert LEAKED_BEFORE[kind] not in everything, kind


@pytest.mark.parametrize("rule, example, secret", _rule_secrets(), ids=lambda v: v if len(v) < 30 else v[:30])
def test_no_rule_example_is_in_the_bundle(bundle, rule, example, secret):
    _, _, everything = bundle
    assert secret not in everything


def test_gpu_evidence_is_readable_in_the_bundle(bundle):
    col, blob, everything = bundle
    for line in GPU_LINES:
        assert line in blob or json.dumps(line)[1:-1] in blob, line
    pods = json.loads(next(a for a in col.artifacts if a.name == "namespaces/gpu-operator/pods.json").data)["items"]
    ctr = next(p for p in pods if p["metadata"]["name"].startswith("nvidia-driver-daemonset") and p["spec"]["containers"][0].get("args"))["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in ctr["env"]}
    assert env["DRIVER_VERSION"] == "550.90.07" and env["NVIDIA_VISIBLE_DEVICES"] == "GPU-5f2e8c9a-1b2c-4d3e-8f90-0123456789ab"
    assert env["DB_PASS"] == MASK and env["GH"] == "ghp_" + MASK
    assert ctr["args"][0] == "--registry-password" and ctr["args"][1] == MASK and ctr["args"][-1] == "--driver-root=/run/nvidia/driver"
    assert ctr["args"][5] == "admin:" + MASK
    assert PEM_CERT.strip().splitlines()[1] in blob  # a certificate is not a secret
    assert "public-cert-kept" in everything


def test_the_manifest_says_where_and_by_which_rule_never_what(bundle):
    col, _, _ = bundle
    report = col.manifest["redaction"]
    rules = set(report["by_rule"])
    assert {"private-key-block", "private-key-base64", "github-token", "slack-webhook", "azure-storage-key", "curl-user",
            "secret-flag-argument", "aws-secret-access-key"} <= rules, rules
    manifest = json.dumps(col.manifest)
    assert not any(s in manifest for s in LEAKED_BEFORE.values())
    assert any("nicclusterpolicies" in json.dumps(g) for g in col.manifest["gaps"]) and IN_A_GAP not in manifest
