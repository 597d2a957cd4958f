"""What diagnose makes while the collector is paused goes to its oldest generation when the pause ends: young
collections do not walk it again, and a full collection still frees the cycles made meanwhile."""

import gc
import weakref

from gpusleuth.gcpause import gc_paused


class _Node:
    pass


def test_pause_hands_its_objects_to_the_oldest_generation():
    if gc.get_freeze_count():
        gc.unfreeze()
    gc.enable()
    with gc_paused(settled=True):
        assert not gc.isenabled()
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # a cycle: only the collector frees it
        made = [[i] for i in range(10_000)]
        probe = weakref.ref(a)
        del a, b
    assert gc.isenabled()
    assert gc.get_count()[0] < 100  # the young generation does not hold the 10,000 lists
    assert id(made[0]) in {id(o) for o in gc.get_objects(generation=2)}
    assert gc.get_freeze_count() == 0
    gc.collect(0)
    gc.collect(1)
    assert probe() is not None  # young collections leave the oldest generation alone
    gc.collect()
    assert probe() is None  # the full collection frees the cycle
    del made


def test_nothing_unfrozen_when_objects_were_frozen_before():
    gc.enable()
    kept = [[i] for i in range(100)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused(settled=True):
            [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
    del kept


def test_a_plain_pause_leaves_the_generations_alone():
    gc.enable()
    gc.collect()
    with gc_paused():
        made = [[i] for i in range(10_000)]
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(made[0]) not in oldest  # still young: the next young collection walks them, as before
    del made


def test_diagnose_settles_its_pause(monkeypatch):
    from gpusleuth import gcpause
    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.sources import open_source

    calls = []
    monkeypatch.setattr(gcpause, "settle", lambda: calls.append(1))
    gc.enable()
    try:
        diagnose(open_source("example:peermem-race"))
    finally:
        gc.enable()
    assert calls == [1]
