"""Collection from a served synthetic cluster of N GPU nodes, against a serial debug script's baseline.

    PYTHONPATH=src python bench/bench_collect.py [--nodes 1000] [--latency 0.01] [--concurrency 32]

`gpusleuth serve` holds a generated cluster (serve/synthetic.py: per GPU node the operator's six operand
pods with init containers, an NFD worker, GPU workloads, CPU nodes) and adds --latency seconds to every
request, as a remote API server and the kubelets behind pod logs do. Measured in the same run, one after
the other, against the same server:

* baseline: what a serial debug script does, one call at a time: list the nodes, then per
  node list its operand pods (fieldSelector spec.nodeName) and read every container's log;
* gpusleuth serial: the collector with one request in flight (the plan alone, no concurrency);
* gpusleuth: the collector with --concurrency requests in flight.

Both read the same logs; gpusleuth reads more (events, DaemonSets, ConfigMaps, Helm, previous logs).
The ratio baseline / gpusleuth is what to watch; absolute times depend on the machine (the served API is
one Python process and becomes CPU-bound first).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import time

from gpusleuth.live.api import Api
from gpusleuth.live.collect import Collector, Options
from gpusleuth.serve.faults import Fault, Faults
from gpusleuth.serve.server import App, Server
from gpusleuth.serve.synthetic import NS, build


async def baseline(url: str, timeout: float) -> tuple[int, int]:
    """A debug script's order of work, serially: (requests, logs read)."""
    api = Api.connect(server=url, concurrency=1, timeout=timeout)
    logs = 0
    try:
        nodes = []
        async for items, _ in api.list_pages("/api/v1/nodes", {"labelSelector": "nvidia.com/gpu.present=true"}):
            nodes.extend(n["metadata"]["name"] for n in items)
        for path in ("/apis/nvidia.com/v1/clusterpolicies", f"/apis/apps/v1/namespaces/{NS}/daemonsets"):
            await api.get_json(path)
        for node in nodes:
            pods, _ = await api.get_json(f"/api/v1/namespaces/{NS}/pods", {"fieldSelector": f"spec.nodeName={node}"})
            for pod in pods["items"]:
                spec = pod["spec"]
                for c in (spec.get("initContainers") or []) + spec["containers"]:
                    await api.request("GET", f"/api/v1/namespaces/{NS}/pods/{pod['metadata']['name']}/log", {"container": c["name"], "tailLines": 2000})
                    logs += 1
        return api.requests, logs
    finally:
        await api.aclose()


async def ours(url: str, concurrency: int, timeout: float) -> tuple[int, int]:
    api = Api.connect(server=url, concurrency=concurrency, timeout=timeout)
    try:
        col = await Collector(api, Options()).run()
    finally:
        await api.aclose()
    # Without --node-probes the collector always says which node files it could not read: that gap is the
    # expected one; any other (a failed request, a timeout) means the run did not read what it should.
    unexpected = [g for g in col.manifest["gaps"] if g.get("what") != "node files"]
    assert not unexpected, unexpected[:3]
    return api.requests, sum(1 for a in col.artifacts if "/logs/" in a.name)


def timed(label: str, coro) -> float:
    start = time.perf_counter()
    requests, logs = asyncio.run(coro)
    dt = time.perf_counter() - start
    print(f"{label:<34} {dt:8.2f} s  {requests:6d} requests  {logs:6d} logs  {requests / dt:7.0f} req/s")
    return dt


def _serve(nodes: int, log_lines: int, latency: float, port_out) -> None:
    """The served cluster, in its own process: client and server must not share one interpreter's GIL."""
    store = build(nodes, log_lines=log_lines)
    server = Server(App(store, Faults([Fault(path="", delay=latency)])))
    port_out.put((server.url, len(store.objects["pods"]), len(store.logs)))
    server.serve_forever()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.01, help="seconds added to every request")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--log-lines", type=int, default=20)
    ap.add_argument("--skip-serial", action="store_true", help="skip gpusleuth with one request in flight")
    args = ap.parse_args()
    start = time.perf_counter()
    ctx = multiprocessing.get_context("fork")
    port_out = ctx.Queue()
    proc = ctx.Process(target=_serve, args=(args.nodes, args.log_lines, args.latency, port_out), daemon=True)
    proc.start()
    try:
        url, pods, logs = port_out.get(timeout=300)
        print(f"synthetic cluster: {args.nodes} GPU nodes, {pods} pods, {logs} container logs (served after {time.perf_counter() - start:.1f} s); "
              f"latency {args.latency * 1000:.0f} ms per request")
        base = timed("baseline (serial script)", baseline(url, 30))
        if not args.skip_serial:
            timed("gpusleuth, 1 request in flight", ours(url, 1, 30))
        fast = timed(f"gpusleuth, {args.concurrency} requests in flight", ours(url, args.concurrency, 30))
    finally:
        proc.terminate()
        proc.join(10)
    print(f"ratio baseline / gpusleuth: {base / fast:.1f}x")


if __name__ == "__main__":
    main()
