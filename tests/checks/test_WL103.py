"""WL103 gpu-busy-or-exclusive."""

from failure_fixtures import cites, facts_from, run

LOG = """\
$ kubectl logs -n ml embed-worker-2
torch.AcceleratorError: CUDA error: CUDA-capable device(s) is/are busy or unavailable
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
"""


def test_busy_device():
    [f] = run("WL103", facts_from({"embed.log": LOG}))
    assert cites(f) == ["embed.log:2"]
    assert f.fixes[0].commands[0] == "kubectl exec embed-worker-2 -n ml -- nvidia-smi --query-gpu=compute_mode --format=csv"


def test_silent_when_the_context_is_created():
    assert run("WL103", facts_from({"embed.log": "$ kubectl logs -n ml embed-worker-2\nModel loaded on cuda:0\n"})) == []
