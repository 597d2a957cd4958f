"""OP080: a ticket that describes a operator symptom in sentences yields a low-confidence finding citing it."""

from prose_fixtures import NOTHING_WRONG, assert_stated, stated

TICKET = 'OpenShift 4.14 cluster.\nIt worked until we upgraded the GPU operator to 24.3.0.\nNow the validator pods are stuck in Init:0/4.\n'


def test_fires_on_the_described_symptom_and_cites_the_sentence():
    found = stated("OP080", TICKET)
    assert {f.facts["symptom"] for f in found} == {'operands-stuck-init', 'regression-after-change'}
    assert all(f.layer.value == "operator" for f in found)
    first = min(found, key=lambda f: f.evidence[0].line)
    assert_stated(first, 2)
    assert first.title.startswith("Stated: ")


def test_silent_when_the_ticket_states_only_facts():
    assert stated("OP080", NOTHING_WRONG) == []


def test_silent_on_another_layers_symptom():
    assert stated("OP080", 'nvidia-smi works fine on the host, but inside the pod it fails.\n') == []
