"""Combined views over everything the parsers produced. Checks read these, never raw documents."""

from gpusleuth.facts.store import COMBINERS, Facts, Recognised, combiner

__all__ = ["COMBINERS", "Facts", "Recognised", "combiner"]
