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


class UnknownNode(GpusleuthError):
    """`--node NAME` names no node of the artifacts: reporting it would show the fleet's health as that node's."""

    def __init__(self, node: str, known: list[str]):
        super().__init__(node)
        self.node, self.known = node, known

    def message(self, source: str) -> str:
        import difflib

        if not self.known:
            return f"{source}: the artifacts name no node, so --node {self.node} has nothing to show"
        import re

        numbers = lambda name: re.sub(r"\d+", lambda m: str(int(m.group())), name)  # noqa: E731 - gpu-node-1 is gpu-node-00001
        same = [k for k in self.known if numbers(k) == numbers(self.node)]
        close = same or difflib.get_close_matches(self.node, self.known, n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(close)}?" if close else f"e.g. {', '.join(self.known[:3])}"
        return f"{source}: no node named {self.node} among its {len(self.known):,} node(s); {hint}"
