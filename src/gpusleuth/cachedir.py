"""Where gpusleuth keeps what it can reuse between runs: `$GPUSLEUTH_CACHE_DIR`, else `$XDG_CACHE_HOME/gpusleuth`,
else `~/.cache/gpusleuth`; None when `GPUSLEUTH_CACHE_DIR=` (empty) turns caching off or there is no home
directory. Standard library `os` only: the command line's compile cache asks for it while other modules are
still being imported (compilecache.py)."""

from __future__ import annotations

import os


def cache_dir() -> str | None:
    chosen = os.environ.get("GPUSLEUTH_CACHE_DIR")
    if chosen is not None:
        return chosen if chosen.strip() else None
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        home = os.path.expanduser("~")
        if home.startswith("~"):  # no home directory to be found: no cache rather than one in the current folder
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "gpusleuth")
