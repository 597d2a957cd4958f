"""RT112 container-lost-gpu-access (UD101 before it moved to the runtime layer): NVML `Unknown Error` inside a container that had its GPU."""

from failure_fixtures import cites, facts_from, pod, run

TRAINER = """\
$ kubectl logs -n ml trainer-0 --timestamps
2025-08-07T09:12:41.002Z epoch 41 step 1200 loss=0.731
2025-08-07T11:02:13.417Z Failed to initialize NVML: Unknown Error
2025-08-07T11:02:13.418Z RuntimeError: CUDA error: unspecified launch failure
"""


def test_unknown_error_in_a_workload_container_recreates_that_pod():
    [f] = run("RT112", facts_from({"trainer.log": TRAINER}, pod("trainer-0", ns="ml", node="gpu-node-4")))
    assert cites(f) == ["trainer.log:3"] and f.node == "gpu-node-4"  # a Running pod: its status is no evidence
    assert f.fixes[0].commands == ("kubectl delete pod trainer-0 -n ml",)


def test_nvml_unknown_error_in_the_kernel_log_is_not_this_class():
    journal = "$ journalctl -b | grep -i nvml\nAug 07 11:02:13 gpu-node-4 nv-hostengine[2231]: Failed to initialize NVML: Unknown Error\n"
    assert run("RT112", facts_from({"journal.txt": journal})) == []


def test_the_old_code_still_selects_ignores_and_explains_it():
    from click.testing import CliRunner

    from gpusleuth.analysis.engine import Selection
    from gpusleuth.checks import get_check
    from gpusleuth.cli import cli

    rt112 = get_check("UD101")
    assert rt112 is not None and rt112.code == "RT112" and rt112.layer.value == "container-runtime"
    assert Selection(("UD101",)).wants(rt112) and not Selection(ignore=("ud101",)).wants(rt112)
    assert not Selection(("UD1",)).wants(rt112)  # a prefix is not redirected: UD1 means the userspace-driver codes
    out = CliRunner().invoke(cli, ["explain", "UD101"]).output
    assert out.startswith("UD101 is now RT112: ") and "RT112 container-lost-gpu-access (layer: container-runtime)" in out
