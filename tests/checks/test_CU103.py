"""CU103 ptx-built-with-newer-cuda."""

from failure_fixtures import cites, facts_from, run

LOG = """\
$ kubectl logs vllm-0 -n inference
INFO 05-12 10:01:22 model_runner.py:1008] Loading model weights took 14.9 GiB
RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.
"""


def test_ptx_toolchain_error():
    [f] = run("CU103", facts_from({"vllm.log": LOG}))
    assert cites(f) == ["vllm.log:3"] and f.layer.value == "cuda-runtime"


def test_silent_on_a_healthy_start():
    assert run("CU103", facts_from({"vllm.log": LOG.splitlines()[0] + "\n" + LOG.splitlines()[1] + "\n"})) == []
