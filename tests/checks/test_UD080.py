"""UD080: a ticket that describes a userspace-driver symptom in sentences yields a low-confidence finding citing it."""

from prose_fixtures import NOTHING_WRONG, assert_stated, stated

TICKET = 'Ubuntu 22.04 nodes.\nSince last night nvidia-smi fails on the host with an error.\n'


def test_fires_on_the_described_symptom_and_cites_the_sentence():
    found = stated("UD080", TICKET)
    assert {f.facts["symptom"] for f in found} == {'nvml-fails'}
    assert all(f.layer.value == "userspace-driver" for f in found)
    first = min(found, key=lambda f: f.evidence[0].line)
    assert_stated(first, 2)
    assert first.title.startswith("Stated: ")


def test_silent_when_the_ticket_states_only_facts():
    assert stated("UD080", NOTHING_WRONG) == []


def test_silent_on_another_layers_symptom():
    assert stated("UD080", 'GPU pods stay Pending forever.\n') == []
