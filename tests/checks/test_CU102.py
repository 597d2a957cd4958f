"""CU102 no-cuda-device-in-container: CUDA finds no device."""

from failure_fixtures import cites, facts_from, run

LOG = """\
$ kubectl logs -n research notebook-7f9c4d-xk2lp
Traceback (most recent call last):
  File "/app/train.py", line 12, in <module>
    torch.cuda.set_device(0)
RuntimeError: No CUDA GPUs are available
"""


def test_no_cuda_gpus_fills_the_exec_command():
    [f] = run("CU102", facts_from({"nb.log": LOG}))
    assert cites(f) == ["nb.log:5"]
    assert f.fixes[0].commands[0] == "kubectl exec notebook-7f9c4d-xk2lp -n research -- sh -c 'env | grep NVIDIA_; nvidia-smi -L'"


def test_silent_when_cuda_sees_the_gpu():
    ok = LOG.replace("RuntimeError: No CUDA GPUs are available", "cuda available: True, device: NVIDIA A100-SXM4-80GB")
    assert run("CU102", facts_from({"nb.log": ok})) == []
