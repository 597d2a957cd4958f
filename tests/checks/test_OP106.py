"""OP106 driver-disabled-without-host-driver."""

from failure_fixtures import cites, facts_from, run

VALUES = """\
$ helm get values gpu-operator -n cozy-gpu-operator
USER-SUPPLIED VALUES:
driver:
  enabled: false
toolkit:
  enabled: true
"""
VALIDATION = """\
$ kubectl logs -n cozy-gpu-operator nvidia-container-toolkit-daemonset-4h9xn -c driver-validation
time="2025-04-24T07:21:03Z" level=info msg="version: b5479aaa-amd64, commit: b5479aa"
time="2025-04-24T07:21:03Z" level=info msg="Attempting to validate a pre-installed driver on the host"
time="2025-04-24T07:21:03Z" level=info msg="Attempting to validate a driver container installation"
time="2025-04-24T07:21:03Z" level=warning msg="failed to validate the driver, retrying after 5 seconds\\n"
time="2025-04-24T07:21:08Z" level=info msg="Attempting to validate a driver container installation"
time="2025-04-24T07:21:08Z" level=warning msg="failed to validate the driver, retrying after 5 seconds\\n"
"""


def test_driver_disabled_and_validation_keeps_failing():
    [f] = run("OP106", facts_from({"values.txt": VALUES, "validation.log": VALIDATION}))
    assert cites(f)[0] == "values.txt:4" and "validation.log:5" in cites(f)
    assert f.fixes[1].commands == ("helm upgrade gpu-operator nvidia/gpu-operator -n cozy-gpu-operator --reuse-values --set driver.enabled=true",)


def test_silent_when_the_host_driver_validates():
    ok = VALIDATION.splitlines()[:3] + ['time="2025-04-24T07:21:04Z" level=info msg="Detected a pre-installed driver on the host"']
    assert run("OP106", facts_from({"values.txt": VALUES, "validation.log": "\n".join(ok) + "\n"})) == []
