"""Today's date: the one clock a check may read (driver end of life). GPUSLEUTH_TODAY=YYYY-MM-DD pins it, so
that a report of an old bundle can be made as of a chosen day and golden reports do not age."""

from __future__ import annotations

import os
from datetime import date

from gpusleuth.errors import UnusableData
from gpusleuth.facts.store import Facts, combiner

ENV = "GPUSLEUTH_TODAY"


@combiner(date)
def today(facts: Facts) -> date:
    pinned = os.environ.get(ENV)
    if not pinned:
        return date.today()
    try:
        return date.fromisoformat(pinned)
    except ValueError:
        raise UnusableData(f"{ENV}={pinned!r} is not a date (YYYY-MM-DD)") from None
