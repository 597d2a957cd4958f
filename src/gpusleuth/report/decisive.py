"""The evidence line that says what broke, which the terminal, Markdown and HTML reports all put first (a module of
its own so that the Markdown and HTML reports do not import rich, ~35 ms, for one function)."""

from __future__ import annotations

import re

from gpusleuth.model.evidence import Evidence
from gpusleuth.model.finding import Finding

# The line that says what went wrong, rather than the command before it or the context after it.
_ERRORISH = re.compile(r"error|fail|invalid|cannot|can't|unable|denied|refused|not found|no such|timed? ?out|panic|fatal|"
                       r"xid|crashloop|backoff|oom|insufficient|unhealthy|not ready|mismatch|exit(?:ed)? (?:code|status)? ?[1-9]",
                       re.IGNORECASE)


def decisive(f: Finding) -> Evidence | None:
    """The evidence line that says what broke: the first that reads as an error, else the first."""
    for e in f.evidence:
        if _ERRORISH.search(e.text):
            return e
    return f.evidence[0] if f.evidence else None
