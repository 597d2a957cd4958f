"""FD080: a ticket that describes a feature-discovery symptom in sentences yields a low-confidence finding citing it."""

from prose_fixtures import NOTHING_WRONG, assert_stated, stated

TICKET = 'GPU Operator 24.3.0 on kubeadm.\nWe see no GPU labels on the GPU nodes after installing the operator.\n'


def test_fires_on_the_described_symptom_and_cites_the_sentence():
    found = stated("FD080", TICKET)
    assert {f.facts["symptom"] for f in found} == {'no-gpu-labels'}
    assert all(f.layer.value == "feature-discovery" for f in found)
    first = min(found, key=lambda f: f.evidence[0].line)
    assert_stated(first, 2)
    assert first.title.startswith("Stated: ")


def test_silent_when_the_ticket_states_only_facts():
    assert stated("FD080", NOTHING_WRONG) == []


def test_silent_on_another_layers_symptom():
    assert stated("FD080", 'Our training pods stay Pending forever.\n') == []
