"""OP105 helm-values-ignored-or-rejected: unknown/misplaced top-level keys and non-string env values."""

from failure_fixtures import cites, facts_from, run

VALUES = """\
$ helm get values gpu-operator-1758912452 -n gpu-operator
USER-SUPPLIED VALUES:
driver:
  enabled: true
  env:
  - name: DRIVER_DEBUG
    value: true
migStrategy: mixed
devicePlugins:
  config:
    name: time-slicing-config
toolkit:
  env:
  - name: CONTAINERD_SET_AS_DEFAULT
    value: "true"
"""


def _findings():
    return {f.facts.get("key") or f.facts.get("path"): f for f in run("OP105", facts_from({"values.txt": VALUES}))}


def test_misplaced_typo_and_non_string_env():
    found = _findings()
    assert set(found) == {"migStrategy", "devicePlugins", "driver.env"}
    assert found["migStrategy"].facts["expected"] == "mig.strategy" and cites(found["migStrategy"]) == ["values.txt:8"]
    assert "did you mean `devicePlugin`" in found["devicePlugins"].title
    assert cites(found["driver.env"]) == ["values.txt:7"] and 'value: "true"' in found["driver.env"].fixes[0].snippet


def test_silent_on_valid_values():
    ok = VALUES.replace("    value: true\n", '    value: "true"\n').replace("migStrategy: mixed\n", "mig:\n  strategy: mixed\n").replace("devicePlugins:", "devicePlugin:")
    assert run("OP105", facts_from({"values.txt": ok})) == []
