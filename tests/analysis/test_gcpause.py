"""What is made while the collector is paused goes to its oldest generation when the pause ends: young collections
do not walk it again, and a full collection still frees the cycles made meanwhile."""

import gc
import weakref

from gpusleuth.gcpause import gc_paused


class _Node:
    pass


def test_pause_hands_its_objects_to_the_oldest_generation():
    if gc.get_freeze_count():
        gc.unfreeze()
    gc.enable()
    with gc_paused():
        assert not gc.isenabled()
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # a cycle: only the collector frees it
        made = [[i] for i in range(10_000)]
        probe = weakref.ref(a)
        del a, b
    assert gc.isenabled()
    assert gc.get_count()[0] < 100  # the young generation does not hold the 10,000 lists
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
        with gc_paused():
            [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
    del kept
