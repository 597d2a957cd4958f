"""Pausing Python's cycle collector while gpusleuth builds millions of small objects.

Log lines, documents and findings hold no reference cycles, so the cycle collector finds nothing in them; but
every 700 allocations it runs, and every so often it walks all of them again. On a 46 MB must-gather that
walking was a third of the whole run. Reference counting still frees everything as usual.

When the pause ends, what was made during it is handed to the collector's oldest generation, not left in the
youngest: there, the first collection after the pause walked every object of a diagnosis (a second at a few
thousand nodes, while the facts were about to be freed by reference counting anyway). In the oldest generation
they are looked at by the next full collection, which also catches any cycle made meanwhile.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def gc_paused() -> Iterator[None]:
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            settle()
            gc.enable()


def settle() -> None:
    """Every object the collector tracks moves to its oldest generation (gc.freeze and gc.unfreeze: two list
    splices, whatever the number of objects). Not when something froze objects already: unfreezing would undo that."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
