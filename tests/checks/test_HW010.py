"""HW010 ecc-uncorrectable-errors: volatile DBEs are an error now, aggregate-only is history."""

from gpu_case import dmesg, gpu_xml, run, smi_xml


def test_volatile_dbe_is_an_error():
    (f,) = run("HW010", {"nvidia-smi.xml": smi_xml(gpu_xml(0), gpu_xml(1, vol_dbe=2, agg_dbe=2))})
    assert f.severity.value == "error" and f.role.value == "root-cause" and "GPU 1" in f.title
    assert "<dram_uncorrectable>2</dram_uncorrectable>" == f.evidence[0].text
    assert any("nvidia-smi -r -i 1" in fx.commands for fx in f.fixes)


def test_dbe_explained_by_xid48_is_a_symptom():
    files = {"nvidia-smi.xml": smi_xml(gpu_xml(0), gpu_xml(1, vol_dbe=1, agg_dbe=1)),
             "dmesg.txt": dmesg("NVRM: Xid (PCI:0000:2a:00): 48, pid=40213, name=python, Ch 00000010")}
    (f,) = run("HW010", files)
    assert f.role.value == "symptom" and f.caused_by == ("HW002",)


def test_lifetime_only_is_info_and_clean_gpus_are_silent():
    (f,) = run("HW010", {"nvidia-smi.xml": smi_xml(gpu_xml(0, agg_dbe=3))})
    assert f.severity.value == "info"
    assert run("HW010", {"nvidia-smi.xml": smi_xml(gpu_xml(0), gpu_xml(1))}) == []
