"""Parsing spread over forked processes: how many cores there are to use, and the pool that uses them.

Only where it pays: a parser's objects come back pickled, which costs more than parsing a log line and a fifth of
parsing a JSON pod list, but little beside composing YAML; so what goes to other processes is the parts of a big
YAML List (parsers/yaml_lists.py). Only by fork (Linux): a worker starts as a copy of this process, with everything
imported, and nothing is sent but its part. Never twice deep: a worker reads what it is given on its own core.
"""

from __future__ import annotations

import os
import sys
import threading

MAX_CORES = 8
JOBS: int | None = None  # `diagnose --jobs N`: at most N processes (1: this one only)
_in_worker = [False]


def cores() -> int:
    """Processes worth running at once for parsing here: 1 inside a worker, without fork, on one core, or off the main
    thread (a server's request: a fork copies one thread of many, with whatever locks the others hold)."""
    if _in_worker[0] or sys.platform != "linux" or not hasattr(os, "fork") or threading.current_thread() is not threading.main_thread():
        return 1
    n = usable_cpus()
    return max(1, min(MAX_CORES, n) if JOBS is None else min(JOBS, n))


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, which a container's cpuset limits), else the machine's."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _as_worker() -> None:
    _in_worker[0] = True


def pool(workers: int):
    """A pool of `workers` forked processes (concurrent.futures), each marked a worker."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_as_worker)
