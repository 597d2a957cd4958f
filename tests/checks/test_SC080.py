"""SC080: a ticket that describes a scheduler symptom in sentences yields a low-confidence finding citing it."""

from prose_fixtures import NOTHING_WRONG, assert_stated, stated

TICKET = 'Cluster on EKS 1.29, g5.xlarge nodes.\nOur training pods stay Pending forever.\n'


def test_fires_on_the_described_symptom_and_cites_the_sentence():
    found = stated("SC080", TICKET)
    assert {f.facts["symptom"] for f in found} == {'pods-pending-insufficient'}
    assert all(f.layer.value == "scheduler" for f in found)
    first = min(found, key=lambda f: f.evidence[0].line)
    assert_stated(first, 2)
    assert first.title.startswith("Stated: ")


def test_silent_when_the_ticket_states_only_facts():
    assert stated("SC080", NOTHING_WRONG) == []


def test_silent_on_another_layers_symptom():
    assert stated("SC080", 'The nvidia-container-toolkit-daemonset pod goes into CrashLoopBackOff on every GPU node.\n') == []
