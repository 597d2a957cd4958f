"""UD011 cdmm-blocks-mig-and-gds: GB200 on 580.65.06+ with MIG wanted."""

from gpu_case import gpu_xml, nodes_table, run, smi_xml

GB200 = "NVIDIA GB200"


def test_mig_label_on_gb200():
    files = {"smi.xml": smi_xml(gpu_xml(0, name=GB200, total=189471), driver="580.82.07"),
             "nodes.txt": nodes_table("nvidia.com/gpu.product=NVIDIA-GB200,nvidia.com/mig.config=all-1g.23gb")}
    (f,) = run("UD011", files)
    assert "CDMM" in f.title and f.facts["mig_config"] == "all-1g.23gb"
    assert "incompatible with MIG and with GPUDirect Storage" in f.explanation


def test_older_driver_or_no_mig():
    files = {"smi.xml": smi_xml(gpu_xml(0, name=GB200), driver="570.133.20")}
    assert run("UD011", files) == []
    assert run("UD011", {"smi.xml": smi_xml(gpu_xml(0, name=GB200), driver="580.82.07")}) == []


def test_gds_in_cluster_policy():
    cp = ("apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  name: cluster-policy\nspec:\n  gds:\n    enabled: true\n"
          "  driver:\n    version: 580.82.07\n")
    (f,) = run("UD011", {"smi.xml": smi_xml(gpu_xml(0, name=GB200), driver="580.82.07"), "cp.yaml": cp})
    assert f.title.startswith("GPUDirect Storage requested") and any(e.artifact == "cp.yaml" and e.line == 7 for e in f.evidence)
