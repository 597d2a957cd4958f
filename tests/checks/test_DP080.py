"""DP080: a ticket that describes a device-plugin symptom in sentences yields a low-confidence finding citing it."""

from prose_fixtures import NOTHING_WRONG, assert_stated, stated

TICKET = 'Installed the device plugin DaemonSet v0.14.1.\nkubectl describe node shows nvidia.com/gpu: 0 under Allocatable.\n'


def test_fires_on_the_described_symptom_and_cites_the_sentence():
    found = stated("DP080", TICKET)
    assert {f.facts["symptom"] for f in found} == {'no-gpu-capacity'}
    assert all(f.layer.value == "device-plugin" for f in found)
    first = min(found, key=lambda f: f.evidence[0].line)
    assert_stated(first, 2)
    assert first.title.startswith("Stated: ")


def test_silent_when_the_ticket_states_only_facts():
    assert stated("DP080", NOTHING_WRONG) == []


def test_silent_on_another_layers_symptom():
    assert stated("DP080", 'nvidia-smi works fine on the host, but inside the pod it fails.\n') == []
