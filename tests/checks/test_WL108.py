"""WL108 cublas-handle-not-created: cuBLAS cannot allocate its workspace."""

from failure_fixtures import cites, facts_from, run

# https://github.com/karpathy/llama2.c/issues/279
LOG = """\
$ kubectl logs -n ml llama-train-0
    return F.linear(input, self.weight, self.bias)
RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`
"""


def test_cublas_not_initialised():
    [f] = run("WL108", facts_from({"train.log": LOG}))
    assert cites(f) == ["train.log:3"] and f.layer.value == "workload"
    assert f.fixes[0].commands[0] == "kubectl exec llama-train-0 -n ml -- nvidia-smi --query-gpu=memory.used,memory.total --format=csv"


def test_silent_when_cublas_works():
    assert run("WL108", facts_from({"train.log": "$ kubectl logs -n ml llama-train-0\nstep 10 loss 2.31\n"})) == []
