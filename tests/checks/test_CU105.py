"""CU105 image-requires-newer-cuda: nvidia-container-cli refuses the image's NVIDIA_REQUIRE_CUDA."""

from failure_fixtures import cites, event, facts_from, run

MSG = ('Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: '
       'unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, '
       'stdout: , stderr: Auto-detected mode as \'legacy\' nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, '
       'please update your driver to a newer version, or use an earlier cuda container: unknown')


def test_requirement_error_in_an_event_names_the_cuda_condition():
    e = event("pod/llm-server-5d8f9-abcde", "Failed", MSG, line=14, ns="serving")
    [f] = run("CU105", facts_from({}, e))
    assert cites(f) == ["events.txt:14"] and "cuda>=12.8" in f.title


def test_silent_for_other_start_errors():
    e = event("pod/llm-server-5d8f9-abcde", "Failed", "Error: container create failed: executable file not found in $PATH", line=14)
    assert run("CU105", facts_from({}, e)) == []
