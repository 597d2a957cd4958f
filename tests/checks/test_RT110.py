"""RT110 rdma-memlock-limit-too-low: NCCL cannot pin memory for RDMA."""

from failure_fixtures import cites, facts_from, run

# https://github.com/NVIDIA/nccl-tests/issues/206 (ulimit -l was 8192; raising it fixed it)
LOG = """\
$ kubectl logs -n training allreduce-perf-launcher
node01:2211:2290 [0] misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory
node01:2211:2290 [0] NCCL INFO transport/net_ib.cc:1121 -> 2
"""


def test_memlock_too_low():
    [f] = run("RT110", facts_from({"nccl.log": LOG}))
    assert cites(f) == ["nccl.log:2"] and f.layer.value == "container-runtime"
    assert f.fixes[0].commands[0] == "kubectl exec allreduce-perf-launcher -n training -- sh -c 'ulimit -l'"
    assert "LimitMEMLOCK=infinity" in f.fixes[1].snippet


def test_silent_when_registration_works():
    ok = "$ kubectl logs -n training allreduce-perf-launcher\nnode01:2211:2290 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA\n"
    assert run("RT110", facts_from({"nccl.log": ok})) == []
