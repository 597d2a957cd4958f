"""WL101 gpu-out-of-memory: CUDA out of memory in a workload."""

from failure_fixtures import cites, facts_from, run

LOG = """\
$ kubectl logs -n qa haystack-qa-6b7f9c-2xkqz --previous
INFO:haystack.nodes.reader:Loading reader model deepset/roberta-base-squad2
Traceback (most recent call last):
  File "/app/server.py", line 88, in predict
RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.76 GiB total capacity; 4.37 GiB already allocated; 14.75 MiB free; 4.43 GiB reserved in total by PyTorch)
"""


def test_oom_with_exec_command_for_the_pod():
    [f] = run("WL101", facts_from({"qa.log": LOG}))
    assert cites(f) == ["qa.log:5"] and f.layer.value == "workload"
    assert f.fixes[0].commands == ("kubectl exec haystack-qa-6b7f9c-2xkqz -n qa -- nvidia-smi --query-gpu=memory.used,memory.total --format=csv",)


def test_fragmentation_hint():
    frag = LOG.replace("4.43 GiB reserved in total by PyTorch)", "4.43 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")
    [f] = run("WL101", facts_from({"qa.log": frag}))
    assert "expandable_segments" in f.explanation


def test_silent_without_oom():
    assert run("WL101", facts_from({"qa.log": LOG.splitlines()[0] + "\n" + LOG.splitlines()[1] + "\n"})) == []
