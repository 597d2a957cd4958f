"""RT080: a ticket that describes a container-runtime symptom in sentences yields a low-confidence finding citing it."""

from prose_fixtures import NOTHING_WRONG, assert_stated, stated

TICKET = 'Single-node k3s v1.28.5+k3s1 cluster with one L4.\nnvidia-smi works fine on the host, but inside the pod it\nfails with an error.\n'


def test_fires_on_the_described_symptom_and_cites_the_sentence():
    found = stated("RT080", TICKET)
    assert {f.facts["symptom"] for f in found} == {'host-works-pod-does-not'}
    assert all(f.layer.value == "container-runtime" for f in found)
    first = min(found, key=lambda f: f.evidence[0].line)
    assert_stated(first, 2)
    assert first.title.startswith("Stated: ")


def test_silent_when_the_ticket_states_only_facts():
    assert stated("RT080", NOTHING_WRONG) == []


def test_silent_on_another_layers_symptom():
    assert stated("RT080", 'The nvidia-driver-daemonset pod keeps restarting in CrashLoopBackOff.\n') == []


def test_names_the_platforms_real_paths():
    [f] = stated("RT080", TICKET)
    # k3s from the kubelet version suffix the ticket quotes, only as a sentence: stated
    assert "K3s (stated in the ticket" in f.explanation and "/var/lib/rancher/k3s/agent/etc/containerd/config.toml" in f.explanation
    snippet = next(fx.snippet for fx in f.fixes if fx.snippet)
    assert "config.toml.tmpl" in snippet and "/run/k3s/containerd/containerd.sock" in snippet
    assert any("config.toml.tmpl" in fx.description and "not /var/lib/rancher/k3s/agent/etc/containerd/config.toml" in fx.description
               for fx in f.fixes)
