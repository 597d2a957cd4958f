"""KD080: a ticket that describes a kernel-driver symptom in sentences yields a low-confidence finding citing it."""

from prose_fixtures import NOTHING_WRONG, assert_stated, stated

TICKET = 'Two nodes on bare metal, GPU Operator from the Helm chart.\nAfter the reboot the nvidia-driver-daemonset pod keeps restarting in CrashLoopBackOff.\nSecure Boot is enabled on these machines.\n'


def test_fires_on_the_described_symptom_and_cites_the_sentence():
    found = stated("KD080", TICKET)
    assert {f.facts["symptom"] for f in found} == {'secure-boot-on', 'driver-pod-fails'}
    assert all(f.layer.value == "kernel-driver" for f in found)
    first = min(found, key=lambda f: f.evidence[0].line)
    assert_stated(first, 2)
    assert first.title.startswith("Stated: ")


def test_silent_when_the_ticket_states_only_facts():
    assert stated("KD080", NOTHING_WRONG) == []


def test_silent_on_another_layers_symptom():
    assert stated("KD080", 'nvidia-smi works fine on the host, but inside the pod it fails.\n') == []
