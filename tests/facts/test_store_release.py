"""After a diagnosis the fact store is freed by reference counting: no traceback of a failed view keeps it in a
cycle that only the (slow, whole-heap) cycle collector could free."""

import gc
import weakref

from gpusleuth.analysis.diagnose import analyse, build_facts
from gpusleuth.sources import examples_root, open_source


def test_release_leaves_no_cycle_through_the_store():
    src = open_source(str(sorted(d for d in examples_root().iterdir() if d.is_dir())[0]))
    was = gc.isenabled()
    gc.disable()
    try:
        facts = build_facts(src)
        analyse(facts, {"description": "x", "kind": "dir", "files": 1, "documents": 1})
        assert facts._failed, "some view does not apply to this example: its failure is kept"
        assert any(e.__traceback__ is not None for e in facts._failed.values())
        facts.release()
        ref = weakref.ref(facts)
        del facts
        assert ref() is None
    finally:
        if was:
            gc.enable()
