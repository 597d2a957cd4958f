"""DP102 sharing-config-ignored-or-invalid: keys the plugin does not read, values it refuses."""

from failure_fixtures import cites, facts_from, run

MISPLACED = """\
$ kubectl get configmap time-slicing-config -n kube-system -o yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: kube-system
data:
  any: |-
    version: v1
    flags:
      migStrategy: none
      renameByDefault: true
      failRequestsGreaterThanOne: false
    sharing:
      timeSlicing:
        resources:
          - name: nvidia.com/gpu
            replicas: 16384
"""
INVALID = """\
version: v1
sharing:
  timeSlicing:
    renameByDefault: "yes"
    resources:
    - name: nvidia.com/gpu
      replicas: 0
"""
GOOD = """\
$ cat /etc/nvidia/device-plugin/config.yaml
version: v1
flags:
  migStrategy: none
sharing:
  timeSlicing:
    renameByDefault: true
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""


def test_rename_by_default_under_flags_is_ignored():
    [f] = run("DP102", facts_from({"cm.yaml": MISPLACED}))
    assert f.severity.value == "warning" and f.facts["config"] == "any" and f.facts["configmap"] == "time-slicing-config"
    assert cites(f) == ["cm.yaml:12", "cm.yaml:13"]
    assert f.facts["belongs"] == ["sharing.timeSlicing.renameByDefault", "sharing.timeSlicing.failRequestsGreaterThanOne"]


def test_zero_replicas_and_a_string_boolean_are_refused():
    [f] = run("DP102", facts_from({"config.yaml": INVALID}))
    assert f.severity.value == "error" and cites(f) == ["config.yaml:4", "config.yaml:7"]
    assert "number of replicas must be >= 0" in f.explanation


def test_silent_on_a_valid_config():
    assert run("DP102", facts_from({"config.yaml": GOOD})) == []
