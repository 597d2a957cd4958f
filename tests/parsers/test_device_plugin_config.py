"""The device plugin config: plain files and ConfigMaps of named entries, with the line of every key."""

from conftest import doc_from_text

from gpusleuth.analysis.engine import sniff
from gpusleuth.parsers import device_plugin_config as dpc

CONFIGMAP = """\
root@cp-1:~# kubectl get cm time-slicing-config -n gpu-operator -o yaml
apiVersion: v1
data:
  a100-40gb: |-
    version: v1
    flags:
      migStrategy: mixed
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/mig-1g.5gb
          replicas: 2
  tesla-t4: |-
    version: v1
    sharing:
      timeSlicing:
        renameByDefault: true
        resources:
        - name: nvidia.com/gpu
          replicas: 4
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: gpu-operator
"""
PLAIN = """\
version: v1
flags:
  migStrategy: "none"
  failOnInitError: true
  plugin:
    passDeviceSpecs: false
    deviceListStrategy: envvar
    deviceIDStrategy: uuid
"""


def test_configmap_entries_keep_their_names_and_lines():
    doc = doc_from_text(CONFIGMAP, "cm.txt")
    assert sniff(doc)[1] is dpc.parse
    a100, t4 = dpc.parse.parse(doc)
    assert (a100.name, a100.configmap, t4.name) == ("a100-40gb", "time-slicing-config", "tesla-t4")
    assert a100.key("flags.migStrategy").evidence.line == 7 and a100.key("flags.migStrategy").value == "mixed"
    assert t4.key("sharing.timeSlicing.resources.0.replicas").evidence.line == 20
    assert t4.key("sharing.timeSlicing.renameByDefault").evidence.text == "renameByDefault: true"


def test_plain_file():
    doc = doc_from_text(PLAIN, "config.yaml")
    assert sniff(doc)[1] is dpc.parse
    [cfg] = dpc.parse.parse(doc)
    assert cfg.name is None and cfg.key("flags.plugin.deviceListStrategy").value == "envvar"


def test_broken_entry_is_recorded_not_raised():
    broken = CONFIGMAP.replace("          replicas: 2", "          replicas: [2")
    a100, t4 = dpc.parse.parse(doc_from_text(broken, "cm.txt"))
    assert a100.error and "not valid YAML" in a100.error and t4.error is None


def test_helm_values_are_not_claimed():
    values = "devicePlugin:\n  config:\n    name: time-slicing-config\n    default: any\nmig:\n  strategy: single\n"
    assert dpc.sniff(doc_from_text(values, "values.yaml")) == 0
