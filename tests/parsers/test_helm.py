"""Helm values (user-supplied, computed, grep'd, plain files), helm list, release Secrets/ConfigMaps."""

from __future__ import annotations

import base64
import gzip
import json

import pytest

from conftest import doc_from_text
from gpusleuth.errors import UnusableData
from gpusleuth.model.document import Document
from gpusleuth.parsers.base import LIKELY, NO, SURE
from gpusleuth.parsers.helm import (
    deep_merge,
    parse_list,
    parse_release_secret,
    parse_values,
    sniff_list,
    sniff_release_secret,
    sniff_values,
)

USER_SUPPLIED = """\
root@192-18-132-31:~# helm get values gpu-operator-1758912452 -n gpu-operator
USER-SUPPLIED VALUES:
driver:
  enabled: false
toolkit:
  env:
  - name: CONTAINERD_CONFIG
    value: /var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml
  - name: CONTAINERD_SOCKET
    value: /var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock
  - name: CONTAINERD_SET_AS_DEFAULT
    value: true
"""


def test_user_supplied_values_with_release_from_the_command():
    doc = doc_from_text(USER_SUPPLIED)
    assert sniff_values(doc) == SURE
    (rel,) = parse_values.parse(doc)
    assert (rel.name, rel.namespace, rel.computed, rel.partial) == ("gpu-operator-1758912452", "gpu-operator", False, False)
    assert rel.values is None and rel.user_values["driver"] == {"enabled": False}
    assert rel.key_lines["toolkit.env"] == 6
    assert rel.key_lines["toolkit.env.0.value"] == 8 and rel.key_lines["toolkit.env.2.value"] == 12
    assert rel.cite("toolkit.env.1.value").line == 10
    assert rel.get("toolkit.env")[2]["value"] is True  # unquoted: YAML bool, which TK002 reports


def test_computed_values_grep_cut_is_read_from_the_first_top_level_key():
    text = """\
root@192-18-132-31:~# helm get values gpu-operator-1758912452 -n gpu-operator --all -o yaml | grep -A20 -i "toolkit:"
  use_ocp_driver_toolkit: false
platform:
  openshift: false
--
toolkit:
  enabled: true
  env: []
  installDir: /usr/local/nvidia
  version: v1.17.5-ubuntu20.04
"""
    (rel,) = parse_values.parse(doc_from_text(text))
    assert rel.computed and rel.partial and rel.source == "helm get values --all"
    assert rel.get("toolkit.env") == [] and rel.key_lines["toolkit.env"] == 8
    assert rel.key_lines["platform.openshift"] == 4


def test_computed_header_and_json_output():
    text = 'COMPUTED VALUES:\n{"toolkit": {"enabled": true, "env": []}, "driver": {"enabled": true}}\n'
    (rel,) = parse_values.parse(Document("helm-all.txt", tuple(text.splitlines())))
    assert rel.computed and rel.values["driver"]["enabled"] is True


def test_null_user_values():
    (rel,) = parse_values.parse(doc_from_text("$ helm get values gpu-operator -n gpu-operator\nUSER-SUPPLIED VALUES:\nnull\n"))
    assert rel.user_values == {} and rel.name == "gpu-operator"


def test_values_file_recognised_by_content_not_name():
    text = """\
operator:
  defaultRuntime: containerd
driver:
  enabled: true
  rdma:
    enabled: true
    useHostMofed: true
devicePlugin:
  config:
    name: time-slicing-config
    default: any
cdi:
  enabled: true
"""
    doc = Document("whatever.txt", tuple(text.splitlines()))
    assert sniff_values(doc) >= LIKELY
    (rel,) = parse_values.parse(doc)
    assert rel.source == "values file" and rel.name is None
    assert rel.key_lines["driver.rdma.useHostMofed"] == 7 and rel.get("devicePlugin.config.name") == "time-slicing-config"


def test_sniff_values_leaves_other_yaml_alone():
    k8s = Document("values.yaml", ("apiVersion: v1", "kind: ConfigMap", "data:", "  driver: x", "  toolkit: y"))
    assert sniff_values(k8s) == NO
    assert sniff_values(Document("values.yaml", ("replicaCount: 1", "image:", "  tag: x"))) == NO


def test_broken_yaml_is_unusable():
    with pytest.raises(UnusableData):
        list(parse_values.parse(doc_from_text("USER-SUPPLIED VALUES:\ntoolkit: [\n  env: {\n")))


HELM_LIST = """\
root@192-18-132-31:~# helm list -A
NAME                   \tNAMESPACE   \tREVISION\tUPDATED                                \tSTATUS  \tCHART               \tAPP VERSION
gpu-operator-1758912452\tgpu-operator\t3       \t2025-09-28 03:31:09.512853 +0000 UTC\tdeployed\tgpu-operator-v25.3.4\tv25.3.4
network-operator       \tnvidia-network-operator\t1 \t2025-09-20 11:02:44.10 +0000 UTC   \tfailed  \tnetwork-operator-25.4.0\tv25.4.0
"""


def test_helm_list_table():
    doc = doc_from_text(HELM_LIST)
    assert sniff_list(doc) == SURE
    gpu, net = parse_list.parse(doc)
    assert (gpu.name, gpu.namespace, gpu.chart, gpu.chart_version, gpu.revision, gpu.status) == (
        "gpu-operator-1758912452", "gpu-operator", "gpu-operator", "v25.3.4", 3, "deployed")
    assert gpu.evidence.line == 3
    assert (net.chart, net.chart_version, net.status) == ("network-operator", "25.4.0", "failed")


def _release(name="gpu-operator-1758912452", rev=4, config=None) -> dict:
    return {
        "name": name, "namespace": "gpu-operator", "version": rev,
        "info": {"status": "deployed", "first_deployed": "2025-09-26T18:47:47Z", "last_deployed": "2025-09-29T09:09:04Z"},
        "chart": {"metadata": {"name": "gpu-operator", "version": "v25.3.4", "appVersion": "v25.3.4"},
                  "values": {"toolkit": {"enabled": True, "env": [], "installDir": "/usr/local/nvidia"}, "cdi": {"enabled": True}}},
        "config": config if config is not None else {"toolkit": {"env": [{"name": "CONTAINERD_SOCKET", "value": "/run/k3s/containerd/containerd.sock"}]}, "cdi": None},
        "manifest": "---\n# Source: gpu-operator/templates/clusterpolicy.yaml\n",
    }


def _helm_layer(rel: dict) -> str:
    return base64.b64encode(gzip.compress(json.dumps(rel).encode())).decode()


def _secret(name: str, payload: str, labels: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": name, "namespace": "gpu-operator", "labels": labels},
            "data": {"release": base64.b64encode(payload.encode()).decode()}}


def test_release_secret_two_layers_of_base64_and_gzip_and_other_secrets_never_kept():
    other = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {"name": "registry-creds"},
             "data": {"password": base64.b64encode(b"hunter2-very-secret").decode()}}
    old = _secret("sh.helm.release.v1.gpu-operator-1758912452.v3", _helm_layer(_release(rev=3)), {"owner": "helm", "version": "3"})
    new = _secret("sh.helm.release.v1.gpu-operator-1758912452.v4", _helm_layer(_release(rev=4)), {"owner": "helm", "version": "4"})
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [other, old, new]}, indent=2)
    doc = Document("secrets.json", tuple(text.splitlines()))
    assert sniff_release_secret(doc) > SURE
    (rel,) = parse_release_secret.parse(doc)
    assert (rel.name, rel.revision, rel.chart, rel.chart_version) == ("gpu-operator-1758912452", 4, "gpu-operator", "v25.3.4")
    assert rel.values["toolkit"]["installDir"] == "/usr/local/nvidia"  # chart default kept
    assert rel.values["toolkit"]["env"][0]["value"] == "/run/k3s/containerd/containerd.sock"  # user override wins
    assert "cdi" not in rel.values  # a null in the user's values removes the key
    assert "hunter2" not in repr(rel) and "registry-creds" not in repr(rel)
    assert rel.evidence.text.startswith("sh.helm.release.v1.gpu-operator-1758912452.v4")


def test_configmap_driver_has_only_helms_base64():
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "sh.helm.release.v1.gpu-operator.v1", "namespace": "kube-system", "labels": {"OWNER": "TILLER", "owner": "helm"}},
          "data": {"release": _helm_layer(_release(name="gpu-operator", rev=1))}}
    import yaml
    doc = Document("cm.yaml", tuple(yaml.safe_dump(cm).splitlines()))
    assert sniff_release_secret(doc) > SURE
    (rel,) = parse_release_secret.parse(doc)
    assert rel.name == "gpu-operator" and rel.status == "deployed"


def test_chunked_release_is_joined_in_order():
    text = _helm_layer(_release())
    half = len(text) // 2
    parts = [
        _secret("sh.helm.release.v1.gpu-operator-1758912452.v4.2", text[half:], {"owner": "helm", "chunk": "2", "chunks": "2"}),
        _secret("sh.helm.release.v1.gpu-operator-1758912452.v4", text[:half], {"owner": "helm", "chunk": "1", "chunks": "2"}),
    ]
    doc = Document("s.json", tuple(json.dumps({"kind": "List", "items": parts}, indent=1).splitlines()))
    (rel,) = parse_release_secret.parse(doc)
    assert rel.revision == 4
    missing = Document("s.json", tuple(json.dumps({"kind": "List", "items": parts[:1]}, indent=1).splitlines()))
    with pytest.raises(UnusableData, match="1 of 2 chunks"):
        list(parse_release_secret.parse(missing))


def test_deep_merge_is_helm_coalescing():
    assert deep_merge({"a": {"b": 1, "c": 2}, "l": [1, 2]}, {"a": {"b": 3}, "l": [9]}) == {"a": {"b": 3, "c": 2}, "l": [9]}
    assert deep_merge({"a": 1, "b": 2}, {"a": None}) == {"b": 2}


# nvidia-device-plugin chart values (deployments/helm/nvidia-device-plugin/values.yaml keys)
PLUGIN_VALUES = """\
config:
  name: time-slicing-config
  default: any
migStrategy: mixed
failOnInitError: false
nfd:
  enabled: true
  worker:
    tolerations:
    - key: nvidia.com/gpu
      operator: Exists
      effect: NoSchedule
gfd:
  enabled: true
"""


def test_device_plugin_chart_values_by_content():
    doc = doc_from_text(PLUGIN_VALUES, "values.yaml")
    assert sniff_values(doc) >= LIKELY
    [rel] = parse_values.parse(doc)
    assert rel.chart == "nvidia-device-plugin" and rel.get("migStrategy") == "mixed"
    assert rel.key_lines["config.name"] == 2 and rel.cite("nfd.worker.tolerations").line == 9


def test_device_plugin_values_with_only_shared_keys_need_the_install_comment():
    text = "# helm upgrade -i nvidia-device-plugin nvdp/nvidia-device-plugin -n kube-system --version 0.19.1 -f values.yaml\ngfd:\n  enabled: true\n"
    [rel] = parse_values.parse(doc_from_text(text, "values.yaml"))
    assert (rel.chart, rel.name, rel.namespace) == ("nvidia-device-plugin", "nvidia-device-plugin", "kube-system")
    assert sniff_values(doc_from_text("gfd:\n  enabled: true\n", "values.yaml")) == NO


def test_config_name_default_is_the_plugin_chart_but_operator_keys_are_not():
    [rel] = parse_values.parse(doc_from_text("config:\n  default: device-plugin-config\n", "v.yaml"))
    assert rel.chart == "nvidia-device-plugin"
    [op] = parse_values.parse(doc_from_text("driver:\n  enabled: false\ndevicePlugin:\n  config:\n    name: x\n", "v.yaml"))
    assert op.chart is None


def test_helm_upgrade_output_after_an_install_comment_is_not_values():
    text = ("# helm upgrade -i nvdp nvdp/nvidia-device-plugin --namespace nvidia-device-plugin --version 0.16.2\n"
            "Release \"nvdp\" has been upgraded. Happy Helming!\nNAME: nvdp\nNAMESPACE: nvidia-device-plugin\nSTATUS: deployed\n")
    assert sniff_values(doc_from_text(text, "helm.txt")) == NO


# --- --set flags and indented fragments (a command line or a values block pasted into a ticket) -------------

SET_FLAGS = """\
helm install --wait gpu-operator -n gpu-operator --create-namespace \\
  nvidia/gpu-operator --version v23.9.1 \\
    --set 'toolkit.env[0].name=CONTAINERD_CONFIG' \\
    --set 'toolkit.env[0].value=/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl' \\
    --set 'toolkit.env[1].name=CONTAINERD_SET_AS_DEFAULT' \\
    --set 'toolkit.env[1].value=true' \\
    --set-string 'toolkit.env[2].name=CONTAINERD_RUNTIME_CLASS,toolkit.env[2].value=nvidia' \\
    --set driver.enabled=false,devicePlugin.config.name=time-slicing \\
    --set-json 'daemonsets.tolerations=[{"key":"gpu","operator":"Exists"}]'
"""


def test_set_flags_become_the_charts_value_paths_typed_as_helm_types_them():
    from gpusleuth.parsers.helm import parse_set_flags

    doc = Document("install.sh", tuple(SET_FLAGS.splitlines()))
    assert parse_set_flags.sniff(doc) >= 90
    [rel] = list(parse_set_flags.parse(doc))
    assert (rel.name, rel.namespace, rel.chart, rel.chart_version) == ("gpu-operator", "gpu-operator", "gpu-operator", "v23.9.1")
    env = rel.user_values["toolkit"]["env"]
    assert env[0] == {"name": "CONTAINERD_CONFIG", "value": "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl"}
    assert env[1]["value"] is True and env[2]["value"] == "nvidia"  # --set guesses a bool; --set-string keeps a string
    assert rel.user_values["driver"]["enabled"] is False and rel.user_values["devicePlugin"]["config"]["name"] == "time-slicing"
    assert rel.user_values["daemonsets"]["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
    assert rel.key_lines["toolkit.env.1.value"] == 6 and rel.key_lines["driver.enabled"] == 8 and rel.source == "helm --set flags"


def test_set_flags_after_a_prompt_cite_the_prompt_line():
    from gpusleuth.parsers.helm import parse_set_flags

    doc = Document("paste.txt", ("  --set cdi.enabled=true",), first_line=3,
                   command="helm upgrade -i gpu-operator nvidia/gpu-operator -n gpu-operator --reuse-values \\")
    [rel] = list(parse_set_flags.parse(doc))
    assert rel.user_values == {"cdi": {"enabled": True}} and rel.key_lines["cdi.enabled"] == 3 and rel.evidence.line == 2


def test_a_values_fragment_at_any_indentation():
    text = "    toolkit:\n      env:\n      - name: CONTAINERD_SOCKET\n        value: /run/k3s/containerd/containerd.sock\n    driver:\n      enabled: false\n"
    doc = Document("ticket.md", tuple(text.splitlines()))
    assert parse_values.sniff(doc) >= 60
    [rel] = list(parse_values.parse(doc))
    assert rel.user_values["toolkit"]["env"][0]["value"] == "/run/k3s/containerd/containerd.sock"
    assert rel.key_lines["toolkit.env.0.value"] == 4


def test_what_a_helm_install_printed_after_its_command_is_read_too():
    """The error helm printed under the prompt line was taken for a continuation of the command and never read."""
    from gpusleuth.model.runtime import HelmRelease
    from gpusleuth.model.logs import ContainerLog
    from gpusleuth.parsers.helm import parse_set_flags

    doc = Document("install.txt", ('Error: INSTALLATION FAILED: Unable to continue with install: ClusterRoleBinding "gpu-operator" in namespace "" '
                                   "exists and cannot be imported into the current release: invalid ownership metadata",), first_line=2,
                   command="sudo helm install --wait --generate-name -n gpu-operator --set driver.enabled=false nvidia/gpu-operator")
    release, = [o for o in parse_set_flags.parse(doc) if isinstance(o, HelmRelease)]
    body, = [o for o in parse_set_flags.parse(doc) if isinstance(o, ContainerLog)]
    assert release.user_values == {"driver": {"enabled": False}} and release.namespace == "gpu-operator"
    assert [(ln.line, ln.message[:25]) for ln in body.lines] == [(2, "Error: INSTALLATION FAILE")]
