"""UD102 fabric-manager-not-ready: CUDA error 802 on an NVSwitch system."""

from failure_fixtures import cites, facts_from, run

VALIDATOR = """\
$ kubectl logs -n gpu-operator nvidia-cuda-validator-7qnzd -c cuda-validation
Failed to allocate device vector A (error code system not yet initialized)! [Vector addition of 5000 elements]
"""


def test_validator_802_is_the_fabric_and_not_a_generic_validator_failure():
    [f] = run("UD102", facts_from({"cuda.log": VALIDATOR}))
    assert cites(f) == ["cuda.log:2"] and "nvidia-fabricmanager" in f.fixes[1].description
    assert run("OP104", facts_from({"cuda.log": VALIDATOR})) == []  # the generic validator class yields to it


def test_silent_when_the_vector_add_passes():
    ok = "$ kubectl logs -n gpu-operator nvidia-cuda-validator-7qnzd -c cuda-validation\n[Vector addition of 50000 elements]\nTest PASSED\nDone\n"
    assert run("UD102", facts_from({"cuda.log": ok})) == []
