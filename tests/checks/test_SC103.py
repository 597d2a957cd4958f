"""SC103 dra-claim-unallocatable: the scheduler cannot allocate a pod's DRA claim."""

from failure_fixtures import cites, event, facts_from, run

MSG = ("0/2 nodes are available: 1 cannot allocate all claims, 1 node(s) didn't match Pod's node affinity/selector. still not "
       "schedulable, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")


def test_cannot_allocate_all_claims_event():
    e = event("pod/pod-mem-big", "FailedScheduling", MSG, line=5, ns="dra-3a")
    [f] = run("SC103", facts_from({}, e))
    assert cites(f) == ["events.txt:5"] and f.facts["pod"] == "pod-mem-big"
    assert f.fixes[0].commands[0] == "kubectl get resourceclaims -n dra-3a -o wide"


def test_silent_for_other_scheduling_failures():
    e = event("pod/pod-mem-big", "FailedScheduling", "0/2 nodes are available: 2 Insufficient cpu.", line=5)
    assert run("SC103", facts_from({}, e)) == []
