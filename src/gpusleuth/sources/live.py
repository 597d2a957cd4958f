"""A live cluster as a Source: collect (gpusleuth.live), then read the collection exactly as a bundle.

The artifacts and manifest a live run produces go through the same reader as a bundle written by
`gpusleuth collect` (manifest-driven Documents, the same caps), so `diagnose` live and `diagnose BUNDLE`
give the same answer. lightkube is imported only when this runs.
"""

from __future__ import annotations

import asyncio
import json
import signal
from dataclasses import dataclass

from gpusleuth.sources.loose import Source, SourceError, read_artifacts


@dataclass(frozen=True)
class Target:
    """Which cluster: --kubeconfig / --context, or a --server URL (serve, kubectl proxy)."""

    kubeconfig: str | None = None
    context: str | None = None
    server: str | None = None
    request_timeout: float = 15.0
    concurrency: int = 16


def collect(target: Target, options, progress=None):
    """Run a collection to the end (or until Ctrl-C / SIGTERM, which cancel it and run its cleanups)."""
    from gpusleuth.live.api import Api, ApiFailure
    from gpusleuth.live.collect import Collector, NullProgress

    async def main():
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
        except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
            pass
        try:
            api = Api.connect(kubeconfig=target.kubeconfig, context=target.context, server=target.server,
                              timeout=target.request_timeout, concurrency=target.concurrency)
        except ApiFailure as exc:
            raise SourceError(exc.reason) from None
        try:
            return await Collector(api, options, progress or NullProgress()).run()
        finally:
            await api.aclose()

    return asyncio.run(main())


def source_from_collection(collection, description: str, budgets=None) -> Source:
    files = ((a.name, a.data) for a in collection.artifacts)
    return read_artifacts(description, "live", files, {"manifest.json": json.dumps(collection.manifest).encode()}, budgets)
