"""The exception model (after insights-core): unusable data, not applicable, and bugs are different things.

* ``UnusableData``: a parser recognised its input but cannot use it (malformed TOML, a truncated JSON).
  The artifact is listed under gaps with the one-line reason; everything else goes on.
* ``NotApplicable``: a check (or combiner) has nothing to look at. It is reported as skipped, not passed.
* Any other exception inside a parser, combiner or check is a bug in gpusleuth: it is recorded against
  that unit alone, shown under gaps, and never stops the analysis.
"""


class GpusleuthError(Exception):
    """Base for errors that carry a message fit to show a user as is."""


class UnusableData(GpusleuthError):
    pass


class NotApplicable(GpusleuthError):
    pass
