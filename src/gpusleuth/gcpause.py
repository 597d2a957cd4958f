"""Pausing Python's cycle collector while gpusleuth builds millions of small objects.

Log lines, documents and findings hold no reference cycles, so the cycle collector finds nothing in them; but
every 700 allocations it runs, and every so often it walks all of them again. On a 46 MB must-gather that
walking was a third of the whole run. Reference counting still frees everything as usual.

diagnose's pause ends by handing what was made during it to the collector's oldest generation (`settle`), not
leaving it in the youngest: there, the first collection after the pause walked every object of the diagnosis (a
second and more at a few thousand nodes, while the facts were about to be freed by reference counting anyway). In
the oldest generation they are looked at by the next full collection, which also catches any cycle made meanwhile.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def gc_paused(settled: bool = False) -> Iterator[None]:
    """settled: when the pause ends, what it made goes to the oldest generation (see above)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            if settled:
                settle()
            gc.enable()


def settle() -> None:
    """Every object the collector tracks moves to its oldest generation (gc.freeze and gc.unfreeze: two list
    splices, whatever the number of objects). Not when something froze objects already: unfreezing would undo that."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
