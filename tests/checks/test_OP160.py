"""OP160 clusterpolicy-field-not-in-crd: a ClusterPolicy against the CRD the operator ships."""

from pathlib import Path

from gpu_case import run

SAMPLE = (Path(__file__).parent.parent / "fixtures" / "schemas" / "clusterpolicy-sample-v26.7.0.yaml").read_text()

BAD = """\
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  operator:
    defaultRuntime: containerd
  driver:
    enabled: true
    migStrategy: mixed
    useOpenKernelModule: true
  mig:
    strategy: Mixed
  devicePlugin:
    config:
      name: time-slicing-config
      defualt: any
  toolkit:
    enabled: true
"""


def test_unknown_misplaced_and_enum():
    (f,) = run("OP160", {"cp.yaml": BAD})
    got = {p["path"]: p for p in f.facts["problems"]}
    assert got["spec.mig.strategy"]["kind"] == "bad-value" and f.severity.value == "error"
    assert got["spec.driver.migStrategy"]["belongs"] == "spec.mig.strategy"
    assert got["spec.devicePlugin.config.defualt"]["kind"] == "unknown-key" and "did you mean `default`" in f.explanation
    assert got["spec.driver.useOpenKernelModule"]["kind"] == "unknown-key" and "did you mean `useOpenKernelModules`" in f.explanation
    assert {e.line for e in f.evidence} == {10, 11, 13, 17}
    assert f.fixes[0].snippet == "spec:\n  mig:\n    strategy: mixed\n"


def test_the_operators_own_sample_is_silent():
    assert run("OP160", {"cp.yaml": SAMPLE}) == []


def test_fields_of_a_clusterpolicy_read_back_from_the_api_server_are_a_newer_crds():
    live = BAD.replace("  name: cluster-policy\n", "  name: cluster-policy\n  resourceVersion: \"123\"\n")
    (f,) = run("OP160", {"cp.yaml": live})
    assert {p["kind"] for p in f.facts["problems"]} == {"bad-value"}
