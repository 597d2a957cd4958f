"""WL110 vllm-gpu-memory-held-by-others."""

from failure_fixtures import cites, facts_from, run

# https://github.com/vllm-project/vllm/issues/23192
LOG = """\
$ kubectl logs -n serving mixtral-fp8-0
(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712]     raise ValueError(
(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712] ValueError: Free memory on device (7.34/139.72 GiB) on startup is less than desired GPU memory utilization (0.9, 125.75 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.
"""


def test_memory_held_by_others():
    [f] = run("WL110", facts_from({"vllm.log": LOG}))
    assert cites(f) == ["vllm.log:3"]
    assert "wants 125.75 GiB but only 7.34 of 139.72 GiB are free" in f.title
    assert f.fixes[0].commands == ("kubectl exec mixtral-fp8-0 -n serving -- nvidia-smi",)


def test_silent_when_the_engine_starts():
    ok = "$ kubectl logs -n serving mixtral-fp8-0\nINFO 09-03 11:03:40 [gpu_worker.py:276] Available KV cache memory: 52.10 GiB\n"
    assert run("WL110", facts_from({"vllm.log": ok})) == []
