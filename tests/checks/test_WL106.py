"""WL106 gpu-oom-on-a-slice-or-shared-gpu: out of memory on a MIG slice vs a time-sliced GPU."""

from failure_fixtures import facts_from, pod, run

# The out-of-memory line of https://github.com/pytorch/pytorch/issues/16417
OOM = """\
$ kubectl logs -n ml bert-ft-0
RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.76 GiB total capacity; 4.37 GiB already allocated; 14.75 MiB free; 4.43 GiB reserved in total by PyTorch)
"""
SHARING = """\
version: v1
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""


def test_oom_on_a_mig_slice():
    p = pod("bert-ft-0", ns="ml", resource_requests={"nvidia.com/mig-1g.10gb": 1}, gpu_request=0)
    [f] = run("WL106", facts_from({"bert.log": OOM}, p))
    assert f.facts["sharing"] == "mig" and "10 GB" in f.title and "total capacity of 14.76 GiB" in f.explanation


def test_oom_on_a_time_sliced_gpu():
    p = pod("bert-ft-0", ns="ml", resource_requests={"nvidia.com/gpu": 1}, gpu_request=1)
    [f] = run("WL106", facts_from({"bert.log": OOM, "time-slicing.yaml": SHARING}, p))
    assert f.facts["sharing"] == "time-slicing" and "4 replicas" in f.title


def test_silent_on_a_whole_gpu():
    p = pod("bert-ft-0", ns="ml", resource_requests={"nvidia.com/gpu": 1}, gpu_request=1)
    assert run("WL106", facts_from({"bert.log": OOM}, p)) == []


def test_vllm_start_on_a_time_sliced_gpu():
    # https://github.com/vllm-project/vllm/issues/20305
    log = ("$ kubectl logs -n ml bert-ft-0\n[multiproc_executor.py:492] ValueError: Free memory on device (31.44/47.38 GiB) on startup is "
           "less than desired GPU memory utilization (0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n")
    p = pod("bert-ft-0", ns="ml", resource_requests={"nvidia.com/gpu": 1}, gpu_request=1)
    [f] = run("WL106", facts_from({"vllm.log": log, "time-slicing.yaml": SHARING}, p))
    assert f.facts["sharing"] == "time-slicing" and "47.38 GiB" in f.explanation
