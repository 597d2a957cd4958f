"""WL104 shared-memory-too-small: NCCL and the DataLoader out of /dev/shm (the 64 MiB container default)."""

from failure_fixtures import cites, facts_from, run

# https://github.com/NVIDIA/nccl/issues/525 (Kubeflow, 4 T4 GPUs)
NCCL = """\
$ kubectl logs -n kubeflow tf-mnist-worker-0
[3] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device
[3] NCCL INFO include/shm.h:41 -> 2
[3] include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-1462445a6f01cbfc-1-2-3 (size 9637888)
"""
# https://github.com/pytorch/pytorch/issues/16979 (DataLoader on a Kubernetes pod)
DATALOADER = """\
$ kubectl logs -n ml resnet-train-0
ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
RuntimeError: DataLoader worker (pid 125) is killed by signal: Bus error.
"""


def test_nccl_shm_fills_the_commands_and_offers_the_emptydir():
    [f] = run("WL104", facts_from({"worker.log": NCCL}))
    assert "worker.log:2" in cites(f)
    assert f.fixes[0].commands[0] == "kubectl exec tf-mnist-worker-0 -n kubeflow -- df -h /dev/shm"
    assert "medium: Memory" in f.fixes[1].snippet and "mountPath: /dev/shm" in f.fixes[1].snippet


def test_dataloader_bus_error():
    [f] = run("WL104", facts_from({"train.log": DATALOADER}))
    assert cites(f)[0] == "train.log:2" and f.layer.value == "workload"


def test_silent_when_shm_works():
    ok = "$ kubectl logs -n kubeflow tf-mnist-worker-0\n[0] NCCL INFO Channel 00 : 0[100000] -> 1[200000] via direct shared memory\n"
    assert run("WL104", facts_from({"worker.log": ok})) == []
