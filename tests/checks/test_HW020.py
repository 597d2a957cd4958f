"""HW020 profiling-metrics-unsupported-on-gpu: DCGM profiling (DCP) metrics need a Volta or newer GPU."""

from failure_fixtures import cites, facts_from, node, run

# https://github.com/NVIDIA/dcgm-exporter/issues/395 (two Tesla M60 on the node; T4 nodes emit the fields)
LOG = ("$ kubectl logs -n gpu-operator nvidia-dcgm-exporter-5x2kq\n"
       'time="2024-09-12T08:21:40Z" level=info msg="Not collecting DCP metrics: This request is serviced by a module of DCGM that is not '
       'currently loaded"\n')


def test_a_maxwell_gpu_named_by_gfd_explains_the_missing_profiling_fields():
    n = node("gpu-m60-1", labels={"nvidia.com/gpu.product": "Tesla-M60", "nvidia.com/gpu.count": "2"})
    [f] = run("HW020", facts_from({"exporter.log": LOG}, n))
    assert f.layer.value == "hardware" and f.node == "gpu-m60-1" and "Maxwell" in f.title and f.facts["compute_capability"] == "5.2"
    assert cites(f)[0] == "exporter.log:2"


def test_a_model_the_ticket_names_is_enough_with_less_confidence():
    words = "The exporter on our node with two M60 GPUs logs it, nodes with a single T4 are fine.\n\n" + LOG
    [f] = run("HW020", facts_from({"issue.md": words}))
    assert "M60" in f.title and f.confidence < 0.8


def test_silent_on_a_volta_or_newer_gpu_and_without_the_line():
    t4 = node("gpu-t4-1", labels={"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.count": "1"})
    assert run("HW020", facts_from({"exporter.log": LOG}, t4)) == []
    m60 = node("gpu-m60-1", labels={"nvidia.com/gpu.product": "Tesla-M60", "nvidia.com/gpu.count": "2"})
    assert run("HW020", facts_from({"exporter.log": '$ kubectl logs nvidia-dcgm-exporter-5x2kq\nlevel=info msg="Starting webserver"\n'}, m60)) == []
