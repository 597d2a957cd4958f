"""HW016 pcie-link-downtrained: width always, generation only under load (GPUs drop Gen at idle)."""

from gpu_case import gpu_xml, run, smi_xml


def test_narrow_link():
    (f,) = run("HW016", {"smi.xml": smi_xml(gpu_xml(0), gpu_xml(1, width=(8, 16)))})
    assert "x8 of x16" in f.title and f.evidence[0].text == "<current_link_width>8x</current_link_width>"


def test_slow_link_under_load():
    (f,) = run("HW016", {"smi.xml": smi_xml(gpu_xml(0, gen=(3, 5), reasons=(), util=97))})
    assert "Gen3 of Gen5 while busy" in f.title


def test_gen_drop_at_idle_is_normal():
    assert run("HW016", {"smi.xml": smi_xml(gpu_xml(0, gen=(1, 5)))}) == []
