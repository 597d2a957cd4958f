"""FD160 nfd-worker-config-key-not-read: nfd-worker.conf ConfigMaps against NFD's worker config types."""

from gpu_case import run

# The GPU Operator's NFD worker ConfigMap as shown in https://github.com/NVIDIA/k8s-device-plugin/issues/729
# (gpu-operator-node-feature-discovery-worker-conf): valid, must be silent.
ISSUE_729 = """\
apiVersion: v1
data:
  nfd-worker.conf: |-
    sources:
      pci:
        deviceClassWhitelist:
        - "02"
        - "0200"
        - "0207"
        - "0300"
        - "0302"
        deviceLabelFields:
        - vendor
kind: ConfigMap
metadata:
  name: gpu-operator-node-feature-discovery-worker-conf
  namespace: gpu-operator
"""

# The same settings one level too high: written under `sources` instead of `sources.pci`.
ONE_LEVEL_UP = ISSUE_729.replace("      pci:\n", "").replace("        device", "      device").replace('        - "', '      - "').replace("        - vendor", "      - vendor")


def test_pci_settings_one_level_too_high():
    (f,) = run("FD160", {"cm.yaml": ONE_LEVEL_UP})
    got = {(p["kind"], p["path"], p["belongs"]) for p in f.facts["problems"]}
    assert got == {("misplaced-key", "sources.deviceClassWhitelist", "sources.pci.deviceClassWhitelist"),
                   ("misplaced-key", "sources.deviceLabelFields", "sources.pci.deviceLabelFields")}
    assert f.evidence[0].line == 3 and "nfd-worker.conf line 2: deviceClassWhitelist:" in f.evidence[0].text
    assert "sources:\n  pci:\n    deviceClassWhitelist:" in f.fixes[0].snippet
    assert f.severity.value == "warning"


def test_wrong_type_and_removed_setting_for_the_version_in_use():
    text = ISSUE_729.replace("        deviceLabelFields:\n        - vendor", "        deviceLabelFields: vendor\n      local:\n        hooksEnabled: true")
    pod = """\
apiVersion: v1
kind: Pod
metadata:
  name: gpu-operator-node-feature-discovery-worker-x7k2p
  namespace: gpu-operator
spec:
  containers:
  - name: worker
    image: registry.k8s.io/nfd/node-feature-discovery:v0.17.2
"""
    (f,) = run("FD160", {"cm.yaml": text, "pod.yaml": pod})
    kinds = {(p["kind"], p["path"]) for p in f.facts["problems"]}
    assert kinds == {("wrong-type", "sources.pci.deviceLabelFields"), ("removed", "sources.local.hooksEnabled")}
    assert f.facts["version"] == "v0.17.2"


def test_key_case_is_not_judged_and_valid_config_is_silent():
    assert run("FD160", {"cm.yaml": ISSUE_729}) == []
    assert run("FD160", {"cm.yaml": ISSUE_729.replace("deviceLabelFields", "DeviceLabelFields")}) == []


# OpenShift's NFD operator CR from https://github.com/NVIDIA/gpu-operator/issues/1469: valid, must be silent.
ISSUE_1469 = """\
apiVersion: nfd.openshift.io/v1
kind: NodeFeatureDiscovery
metadata:
  name: openshift-nfd
  namespace: openshift-nfd
spec:
  workerConfig:
    configData: |
      core:
        sleepInterval: 60s
      sources:
        pci:
          deviceClassWhitelist:
            - "0200"
            - "03"
            - "12"
          deviceLabelFields:
            - "vendor"
            - "device"
"""


def test_nodefeaturediscovery_cr():
    assert run("FD160", {"nfd.yaml": ISSUE_1469}) == []
    (f,) = run("FD160", {"nfd.yaml": ISSUE_1469.replace("        sleepInterval: 60s", "        sleepIntervall: 60s")})
    assert f.facts["problems"][0]["closest"] == "sleepInterval" and f.evidence[0].line == 8


# GPU Operator Helm values setting the worker config as a mapping (NFD's chart renders it into nfd-worker.conf).
VALUES = """\
$ helm get values gpu-operator -n gpu-operator
USER-SUPPLIED VALUES:
node-feature-discovery:
  worker:
    config:
      sources:
        pci:
          deviceClassWhitelist:
          - "03"
          deviceLabelFields:
          - vendor
"""


def test_helm_values_worker_config():
    assert run("FD160", {"values.txt": VALUES}) == []
    wrong = VALUES.replace("        pci:\n", "").replace("          device", "        device").replace("          - ", "        - ")
    (f,) = run("FD160", {"values.txt": wrong})
    assert {p["belongs"] for p in f.facts["problems"]} == {"sources.pci.deviceClassWhitelist", "sources.pci.deviceLabelFields"}
    assert sorted(e.line for e in f.evidence) == [7, 9]
    assert f.fixes[0].snippet.startswith("node-feature-discovery:\n  worker:\n    config:\n      sources:\n        pci:\n")


# The Network Operator's values.yaml at Mellanox/network-operator 2dcf59f1 (https://github.com/Mellanox/network-operator/issues/111):
# the worker config as text, indented unevenly but meaning sources.pci: valid, must be silent.
ISSUE_111 = """\
$ helm get values network-operator -n nvidia-network-operator
USER-SUPPLIED VALUES:
node-feature-discovery:
  worker:
    config: |
      sources:
          pci:
            deviceClassWhitelist:
              - "02"
              - "0200"
              - "0207"
            deviceLabelFields:
              - vendor
"""


def test_worker_config_as_text_in_values():
    assert run("FD160", {"values.yaml": ISSUE_111}) == []
    (f,) = run("FD160", {"values.yaml": ISSUE_111.replace("deviceLabelFields", "deviceLabelField")})
    assert f.facts["problems"][0]["closest"] == "deviceLabelFields"
    assert f.evidence[0].line == 5 and "line 7: deviceLabelField:" in f.evidence[0].text
