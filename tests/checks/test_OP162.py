"""OP162 nicclusterpolicy-field-not-in-crd: a NicClusterPolicy against the Network Operator's CRD schema."""

from gpu_case import run

# The Network Operator's own example CR (Mellanox/network-operator v26.4.1,
# example/crs/mellanox.com_v1alpha1_nicclusterpolicy_cr.yaml), shortened: valid, must be silent.
EXAMPLE = """\
apiVersion: mellanox.com/v1alpha1
kind: NicClusterPolicy
metadata:
  name: nic-cluster-policy
spec:
  ofedDriver:
    image: doca-driver
    repository: nvcr.io/nvidia/mellanox
    version: doca3.4.1-26.04-1.1.0.0-1
    upgradePolicy:
      autoUpgrade: true
      drain:
        deleteEmptyDir: true
        enable: true
        force: true
        timeoutSeconds: 300
      maxParallelUpgrades: 1
    startupProbe:
      initialDelaySeconds: 10
      periodSeconds: 10
  rdmaSharedDevicePlugin:
    image: k8s-rdma-shared-dev-plugin
    repository: nvcr.io/nvidia/mellanox
    version: network-operator-v26.4.1
    config: |
      {
        "configList": [
          {
            "resourceName": "rdma_shared_device_a",
            "rdmaHcaMax": 63,
            "selectors": {"vendors": ["15b3"], "deviceIDs": ["101b"]}
          }
        ]
      }
"""

# The spec of the first NicClusterPolicy example (https://github.com/Mellanox/network-operator/pull/2, 2020):
# the RDMA shared device plugin under `devicePlugin`, a key today's CRD does not have (it is rdmaSharedDevicePlugin).
PR_2 = """\
apiVersion: mellanox.com/v1alpha1
kind: NicClusterPolicy
metadata:
  name: nic-cluster-policy
  namespace: mlnx-network-operator
spec:
  ofedDriver:
    image: ofed-driver
    repository: adriancdockerhub
    version: 5.0-2.1.8.1
  devicePlugin:
    image: k8s-rdma-shared-dev-plugin
    repository: rdma
    version: latest
"""


def test_old_device_plugin_key_is_pruned():
    (f,) = run("OP162", {"ncp.yaml": PR_2})
    assert [(p["kind"], p["path"]) for p in f.facts["problems"]] == [("unknown-key", "spec.devicePlugin")]
    assert "one of `rdmaSharedDevicePlugin`, `sriovDevicePlugin`" in f.title
    assert [e.line for e in f.evidence] == [11]
    assert f.severity.value == "warning"


def test_upgrade_setting_one_level_too_high():
    text = EXAMPLE.replace("    upgradePolicy:\n      autoUpgrade: true\n", "    autoUpgrade: true\n    upgradePolicy:\n")
    (f,) = run("OP162", {"ncp.yaml": text})
    (p,) = f.facts["problems"]
    assert p["kind"] == "misplaced-key" and p["path"] == "spec.ofedDriver.autoUpgrade"
    assert p["belongs"] == "spec.ofedDriver.upgradePolicy.autoUpgrade"
    assert "upgradePolicy:\n      autoUpgrade: true" in f.fixes[0].snippet


def test_wrong_type_is_refused():
    (f,) = run("OP162", {"ncp.yaml": EXAMPLE.replace("maxParallelUpgrades: 1", 'maxParallelUpgrades: "one"')})
    assert f.facts["problems"][0]["kind"] == "wrong-type" and f.severity.value == "error"


def test_valid_example_is_silent():
    assert run("OP162", {"ncp.yaml": EXAMPLE}) == []
