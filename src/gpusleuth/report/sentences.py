"""The first sentences of a finding's prose, for the places a report quotes only the start of it."""

from __future__ import annotations

import re

# a sentence ends at . ! or ? followed by a space and a capital, a bracket or a quote: "e.g. through" and "v1.2. 3" go on
_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`'\"])")


def first_sentences(text: str, n: int = 1) -> str:
    text = text.strip()
    ends = [m.start() for m in _END.finditer(text)]
    return text[: ends[n - 1]] if len(ends) >= n else text
