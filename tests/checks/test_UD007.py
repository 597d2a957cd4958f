"""UD007 persistence-mode-off: a note, with the GPUs."""

from gpu_case import gpu_xml, run, smi_xml


def test_persistence_off():
    (f,) = run("UD007", {"smi.xml": smi_xml(gpu_xml(0), gpu_xml(1, persistence="Disabled"))})
    assert f.severity.value == "info" and f.facts["gpus"] == [1]


def test_persistence_on():
    assert run("UD007", {"smi.xml": smi_xml(gpu_xml(0), gpu_xml(1))}) == []
