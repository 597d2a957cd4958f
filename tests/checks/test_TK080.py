"""TK080: a ticket that describes a container-toolkit symptom in sentences yields a low-confidence finding citing it."""

from prose_fixtures import NOTHING_WRONG, assert_stated, stated

TICKET = 'RKE2 v1.28 with GPU Operator 23.9.1.\nThe nvidia-container-toolkit-daemonset pod goes into CrashLoopBackOff on every GPU node.\n'


def test_fires_on_the_described_symptom_and_cites_the_sentence():
    found = stated("TK080", TICKET)
    assert {f.facts["symptom"] for f in found} == {'toolkit-pod-fails'}
    assert all(f.layer.value == "container-toolkit" for f in found)
    first = min(found, key=lambda f: f.evidence[0].line)
    assert_stated(first, 2)
    assert first.title.startswith("Stated: ")


def test_silent_when_the_ticket_states_only_facts():
    assert stated("TK080", NOTHING_WRONG) == []


def test_silent_on_another_layers_symptom():
    assert stated("TK080", 'kubectl describe node shows nvidia.com/gpu: 0 under Allocatable.\n') == []
