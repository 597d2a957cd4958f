"""The live path's test double: `serve` on 127.0.0.1 with a synthetic or example cluster, faults injected.

Every test talks real HTTP through the same lightkube-configured client the live path uses; nothing
leaves the loopback interface and every server stops at the end of its test.
"""

from __future__ import annotations

import asyncio
from contextlib import contextmanager

from gpusleuth.live.api import Api, RetryPolicy
from gpusleuth.live.collect import Collector, Options
from gpusleuth.serve.faults import Fault, Faults
from gpusleuth.serve.server import App, Server

FAST = RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.05)


@contextmanager
def serving(store, faults: list[Fault] | None = None, probe_namespace: str | None = None, probe_seconds: float = 0.05):
    with Server(App(store, Faults(faults), probe_namespace=probe_namespace, probe_seconds=probe_seconds)) as srv:
        yield srv


def run_collect(url: str, options: Options | None = None, retry: RetryPolicy = FAST, timeout: float = 5.0, concurrency: int = 8):
    async def main():
        api = Api.connect(server=url, timeout=timeout, concurrency=concurrency, retry=retry)
        try:
            return await Collector(api, options or Options()).run()
        finally:
            await api.aclose()

    return asyncio.run(main())
