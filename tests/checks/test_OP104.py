"""OP104 cuda-validation-failed: the cuda-validator's vector-add fails; the CUDA error says why."""

from failure_fixtures import cites, facts_from, pod, run

LOG = """\
$ kubectl logs nvidia-cuda-validator-qt94k -c cuda-validation -n nvidia-gpu-operator
Failed to allocate device vector A (error code initialization error)!
[Vector addition of 50000 elements]
"""
NO_DEVICE = LOG.replace("initialization error", "no CUDA-capable device is detected")


def test_initialization_error_hint():
    facts = facts_from({"cuda.log": LOG}, pod("nvidia-cuda-validator-qt94k", ns="nvidia-gpu-operator", status="Init:CrashLoopBackOff", ready="0/1", restarts=6))
    [f] = run("OP104", facts)
    assert cites(f) == ["pods.txt:2", "cuda.log:2"] and f.title.endswith("initialization error")
    assert "open vs proprietary" in f.explanation
    assert f.fixes[0].commands == ("kubectl logs nvidia-cuda-validator-qt94k -n nvidia-gpu-operator -c cuda-validation",
                                   "kubectl delete pod nvidia-cuda-validator-qt94k -n nvidia-gpu-operator")


def test_no_device_hint_points_at_injection():
    [f] = run("OP104", facts_from({"cuda.log": NO_DEVICE}))
    assert "did not inject" in f.explanation


def test_silent_when_the_validator_passes():
    ok = "$ kubectl logs nvidia-cuda-validator-qt94k -c cuda-validation -n nvidia-gpu-operator\n[Vector addition of 50000 elements]\nTest PASSED\nDone\n"
    assert run("OP104", facts_from({"cuda.log": ok})) == []


def test_a_users_own_vectoradd_pod_is_not_the_operators_validator():
    """The docs' sample pod prints the validator's line; it is the user's workload (CU101's case), not OP104's."""
    user = ("$ kubectl logs cuda-vectoradd\n"
            "Failed to allocate device vector A (error code CUDA driver version is insufficient for CUDA runtime version)!\n"
            "[Vector addition of 50000 elements]\n")
    assert run("OP104", facts_from({"cuda.log": user}, pod("cuda-vectoradd", ns="default", status="CrashLoopBackOff", ready="0/1"))) == []


def test_title_reads_without_a_pod_name():
    unnamed = "Failed to allocate device vector A (error code forward compatibility was attempted on non supported HW)!\n"
    [f] = run("OP104", facts_from({"cuda-validator.log": unnamed}))
    assert " on on " not in f.title and f.title.startswith("CUDA validation fails (")
