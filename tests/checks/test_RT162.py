"""RT162 docker-runtime-key-not-read: daemon.json runtime entries against moby's runtime type."""

from gpu_case import run

# https://github.com/NVIDIA/nvidia-container-toolkit/issues/56: a runtime entry written with "args"
ISSUE_56 = """\
{
    "runtimes": {
        "nvidia": {
            "args": [],
            "path": "nvidia-container-runtime-wrapper"
        }
    }
}
"""


def test_args_for_runtime_args():
    (f,) = run("RT162", {"daemon.json": ISSUE_56})
    assert f.facts["problems"][0]["closest"] == "runtimeArgs" and f.severity.value == "info"
    assert [e.line for e in f.evidence] == [3]
    with_args = ISSUE_56.replace('"args": []', '"args": ["--debug"]')
    (g,) = run("RT162", {"daemon.json": with_args})
    assert g.severity.value == "warning"


def test_valid_entry_is_silent():
    ok = ISSUE_56.replace('"args"', '"runtimeArgs"')
    assert run("RT162", {"daemon.json": ok}) == []
