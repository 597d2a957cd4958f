"""The words of a shell command line, as `shlex.split(cmd)` (POSIX mode, no comments) gives them, at C speed.

Every document of a bundle or a `kubectl logs` paste carries its command, and several sniffers ask for its
words. shlex reads a line character by character in Python (about 100 µs for a `kubectl logs` line); a line
with no quote, no backslash and only the whitespace shlex knows (space, tab, CR, LF) has the same words as
`str.split()`, so only the other lines go through shlex.
"""

from __future__ import annotations

import re
import shlex
from functools import lru_cache

# Only printable ASCII and shlex's own whitespace, no quote or escape: str.split() and shlex.split agree.
_PLAIN = re.compile(r"[\x20\x21\x23-\x26\x28-\x5b\x5d-\x7e\t\r\n]*")


@lru_cache(maxsize=256)
def split(cmd: str) -> tuple[str, ...]:
    """shlex.split(cmd) as a tuple; ValueError (an unclosed quote) as shlex raises it."""
    if _PLAIN.fullmatch(cmd):
        return tuple(cmd.split())
    return tuple(shlex.split(cmd))
