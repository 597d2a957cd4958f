"""DP150 device-plugin-sharing-config-invalid: values the plugin refuses, keys it silently ignores."""

from gpu_case import run

CM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: gpu-operator
data:
  any: |-
    version: v1
    flags:
      migStrategy: none
    timeSlicing:
      renameByDefault: false
      resources:
      - name: nvidia.com/gpu
        replicas: 10
  a100: |-
    version: v1
    sharing:
      timeSlicing:
        renameByDefault: "false"
        resources:
        - name: nvidia.com/gpu
          replicas: 1
"""


def test_refused_and_ignored():
    hits = run("DP150", {"cm.yaml": CM})
    by_key = {h.explanation.split(",")[1].split(":")[0].strip(): h for h in hits}
    assert by_key["key any"].severity.value == "warning" and "'timeSlicing' at the top level is ignored" in by_key["key any"].title
    refused = by_key["key a100"]
    assert refused.severity.value == "error"
    assert "number of replicas must be >= 2" in refused.explanation and "renameByDefault must be true or false" in refused.explanation
    assert all(e.line == 16 for e in refused.evidence) and refused.evidence[0].text.startswith("a100 line ")


def test_standalone_file_and_valid_config():
    good = "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
    assert run("DP150", {"plugin-config.yaml": good}) == []
    bad = good.replace("replicas: 4", 'replicas: "4"')
    (f,) = run("DP150", {"plugin-config.yaml": bad})
    assert f.evidence[0].line == 6 and "must be a number" in f.title


# https://github.com/NVIDIA/k8s-device-plugin/issues/353: a per-resource `rename` to get nvidia.com/gpu.shared; the
# plugin drops it on load (api/config/v1 disableResoureRenaming, "not yet supported in the config"), and the answer
# in the thread is renameByDefault under sharing.timeSlicing
ISSUE_353 = """\
version: v1
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/gpu
      rename: nvidia.com/gpu.shared
      replicas: 2
"""


def test_per_resource_rename_is_dropped_and_renamebydefault_is_meant():
    (f,) = run("DP150", {"plugin-config.yaml": ISSUE_353})
    (problem,) = f.facts["problems"]
    assert problem.startswith("sharing.timeSlicing.resources[0].rename is ignored") and "advertises nvidia.com/gpu)" in problem
    assert "set renameByDefault: true under sharing.timeSlicing" in problem
    assert f.severity.value == "warning" and [e.line for e in f.evidence] == [6]
    assert f.fixes[0].snippet == ("version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n"
                                  "    - name: nvidia.com/gpu\n      replicas: 2\n")
    # the default shared name with renameByDefault set is what the plugin does anyway: nothing is dropped
    same = ISSUE_353.replace("  timeSlicing:\n", "  timeSlicing:\n    renameByDefault: true\n")
    assert run("DP150", {"plugin-config.yaml": same}) == []
