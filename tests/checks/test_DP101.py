"""DP101 allocatable-fewer-than-gpus: capacity 8, allocatable 7 after an Xid; or fewer than nvidia-smi sees."""

from failure_fixtures import cites, facts_from, node, run

PLUGIN = """\
$ kubectl logs -n gpu-operator nvidia-device-plugin-daemonset-wq8tt
I0810 15:36:05.551169       1 health.go:146] XidCriticalError: Xid=48 on Device=GPU-455e672a-5ca7-8a63-2a51-0dd46e3fa9c1; marking device as unhealthy.
I0810 15:36:05.552532       1 server.go:278] 'nvidia.com/gpu' device marked unhealthy: GPU-455e672a-5ca7-8a63-2a51-0dd46e3fa9c1
"""
SMI_L = """\
$ nvidia-smi -L
GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1d2c0e12-7d0e-4e2a-93a4-5f1e4a2b1001)
GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-1d2c0e12-7d0e-4e2a-93a4-5f1e4a2b1002)
GPU 2: NVIDIA A100-SXM4-80GB (UUID: GPU-1d2c0e12-7d0e-4e2a-93a4-5f1e4a2b1003)
GPU 3: NVIDIA A100-SXM4-80GB (UUID: GPU-1d2c0e12-7d0e-4e2a-93a4-5f1e4a2b1004)
"""


def test_capacity_above_allocatable_with_the_unhealthy_line():
    n = node("dgx-a100-07", capacity={"nvidia.com/gpu": "8"}, allocatable={"nvidia.com/gpu": "7"})
    [f] = run("DP101", facts_from({"plugin.log": PLUGIN}, n))
    assert f.facts["missing"] == 1 and f.node == "dgx-a100-07"
    assert cites(f) == ["nodes.txt:7", "nodes.txt:5", "plugin.log:2", "plugin.log:3"]
    assert "--field-selector spec.nodeName=dgx-a100-07" in f.fixes[1].commands[0]


def test_fewer_than_nvidia_smi_on_the_only_node():
    n = node("gpu-node-3", capacity={"nvidia.com/gpu": "3"}, allocatable={"nvidia.com/gpu": "3"})
    [f] = run("DP101", facts_from({"smi.txt": SMI_L}, n))
    assert f.facts == {"allocatable": 3, "capacity": 3, "visible": 4, "missing": 1}


def test_silent_when_all_gpus_are_offered_or_time_sliced():
    full = node("dgx-a100-07", capacity={"nvidia.com/gpu": "8"}, allocatable={"nvidia.com/gpu": "8"})
    assert run("DP101", facts_from({}, full)) == []
    sliced = node("gpu-node-3", labels={"nvidia.com/gpu.replicas": "4"}, capacity={"nvidia.com/gpu": "16"}, allocatable={"nvidia.com/gpu": "16"})
    assert run("DP101", facts_from({"smi.txt": SMI_L}, sliced)) == []


DESCRIBE_CUT = """\
$ kubectl describe node | grep -A 20 Capacity
Capacity:
  cpu:                104
  memory:             791635548Ki
  nvidia.com/gpu:     8
  pods:               110
Allocatable:
  cpu:                104
  memory:             791533148Ki
  nvidia.com/gpu:     6
  pods:               110
"""


def test_a_describe_cut_above_the_node_name_still_counts(tmp_path):
    """The paste shows no node name: the finding says so and gives only commands that need none."""
    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.sources.loose import read_file

    path = tmp_path / "paste.txt"
    path.write_text(DESCRIBE_CUT, encoding="utf-8")
    report = diagnose(read_file(path))
    f = next(f for f in report.findings if f.code == "DP101")
    assert f.node is None and "name is not in the paste" in f.title and f.facts["missing"] == 2
    assert report.verdict == "broken" and all("<node>" not in c and "None" not in c for x in f.fixes for c in x.commands)
