"""RT101 crio-hooks-dir-misses-nvidia-hook."""

from failure_fixtures import cites, facts_from, run

CRIO = """\
$ cat /etc/crio/crio.conf
[crio]
[crio.runtime]
default_runtime = "runc"
hooks_dir = [
        "/usr/share/containers/oci/hooks.d",
]
[crio.runtime.runtimes.runc]
runtime_path = "/usr/bin/runc"
"""
VALIDATOR = """\
$ kubectl logs nvidia-operator-validator-l72z2 -n gpu-operator-resources -c toolkit-validation
toolkit is not ready
time="2021-11-17T07:42:32Z" level=info msg="Error: error validating toolkit installation: exec: \\"nvidia-smi\\": executable file not found in $PATH"
"""


def test_hooks_dir_without_the_operators_directory():
    [f] = run("RT101", facts_from({"crio.conf": CRIO, "validator.log": VALIDATOR}))
    assert f.confidence == 0.8 and cites(f) == ["crio.conf:2", "validator.log:3"]
    assert '"/run/containers/oci/hooks.d"' in f.fixes[0].snippet


def test_silent_when_the_directory_is_listed():
    ok = CRIO.replace('        "/usr/share/containers/oci/hooks.d",\n', '        "/usr/share/containers/oci/hooks.d",\n        "/run/containers/oci/hooks.d",\n')
    assert run("RT101", facts_from({"crio.conf": ok})) == []
