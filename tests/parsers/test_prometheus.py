"""dcgm-exporter scrapes through prometheus_client's parser: values, labels, evidence lines, cut scrapes."""

from pathlib import Path

import pytest

from gpusleuth.analysis.engine import sniff
from gpusleuth.errors import UnusableData
from gpusleuth.model.finding import Gap
from gpusleuth.model.gpu import GpuMetricSample
from gpusleuth.parsers import prometheus
from tests.conftest import doc_from_text

SCRAPE = (Path(__file__).parent.parent / "fixtures" / "dcgm" / "h100_scrape.txt").read_text()


def parse(text: str, name: str = "metrics.txt"):
    doc = doc_from_text(text, name)
    score, p = sniff(doc)
    assert p is prometheus.parse
    return list(p.parse(doc))


def test_two_gpus_with_labels_values_and_lines():
    out = parse(SCRAPE)
    g0, g1 = out
    assert isinstance(g0, GpuMetricSample) and (g0.gpu, g0.node, g0.pod, g0.namespace) == ("0", "gpu-node-07", "llama-ft-0", "ml-team")
    assert g0.pci_bus_id == "00000000:18:00.0" and g0.driver_version == "535.183.01"
    assert g0.values["DCGM_FI_DEV_GPU_UTIL"] == 96 and g0.values["DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"] == pytest.approx(0.081527)
    assert g1.values["DCGM_FI_DEV_XID_ERRORS"] == 48 and g1.values["DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"] == 2  # a counter keeps its name
    ev = g1.evidence["DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"]
    assert ev.line == 52 and ev.text.endswith("} 96")
    assert g0.pod and not g1.pod  # empty labels are dropped


def test_cut_scrape_keeps_the_complete_lines_and_says_so():
    cut = SCRAPE[: SCRAPE.index('DCGM_FI_DEV_FB_USED{gpu="1"') + 40]
    out = parse(cut)
    gaps = [o for o in out if isinstance(o, Gap)]
    assert len(gaps) == 1 and "1 malformed line(s)" in gaps[0].why
    g1 = next(o for o in out if isinstance(o, GpuMetricSample) and o.gpu == "1")
    assert "DCGM_FI_DEV_FB_USED" not in g1.values and "DCGM_FI_DEV_FB_FREE" in g1.values


def test_mig_instances_are_separate_samples():
    text = ('# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n'
            'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",Hostname="n1"} 0.5\n'
            'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="3g.40gb",GPU_I_ID="2",Hostname="n1"} 0.1\n')
    a, b = parse(text)
    assert (a.mig_profile, a.gpu_instance_id, b.gpu_instance_id) == ("3g.40gb", "1", "2")


def test_scrape_without_dcgm_fields_is_unusable():
    doc = doc_from_text("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nnode_load1 0.5\n")
    with pytest.raises(UnusableData, match="no DCGM_FI_"):
        list(prometheus.parse.parse(doc))


def test_other_exporters_are_not_claimed():
    doc = doc_from_text("# HELP node_load1 1m load average.\n# TYPE node_load1 gauge\nnode_load1 0.52\n")
    assert prometheus.parse.sniff(doc) == 0
