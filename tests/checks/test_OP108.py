"""OP108 nccl-rdma-device-unusable-in-pod: NCCL's IB/RoCE transport cannot use the pod's RDMA device."""

from failure_fixtures import cites, facts_from, run

# https://github.com/NVIDIA/nccl/issues/1657 (vLLM multi-node on Kubernetes)
LOG = """\
$ kubectl logs -n llm aigc-maas-instance-leader-0
aigc-maas-instance-leader-0:1639:1915 [0] NCCL INFO Call to ibv_set_ece failed with error Operation not supported errno 95
aigc-maas-instance-leader-0:1639:1915 [0] misc/ibvwrap.cc:206 NCCL WARN Call to ibv_modify_qp failed with error No such device errno 19
aigc-maas-instance-leader-0:1639:1915 [0] NCCL INFO transport/net_ib.cc:937 -> 2
"""


def test_no_such_device():
    [f] = run("OP108", facts_from({"leader.log": LOG}))
    assert cites(f) == ["leader.log:3"]
    assert "ibv_modify_qp No such device" in f.title and "NCCL_IB_HCA" in f.explanation


def test_info_lines_alone_are_silent():
    info_only = "\n".join(LOG.splitlines()[:2]) + "\n"
    assert run("OP108", facts_from({"leader.log": info_only})) == []
