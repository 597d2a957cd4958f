"""How does a diagnosis grow with the number of nodes? Time and peak memory from 100 to 5,000 GPU nodes.

    PYTHONPATH=src python bench/bench_scale.py [--sizes 100,200,500,1000,2000,5000] [--failing 0.8] [--lines 200]
                                              [--pods-yaml] [--src OTHER_CHECKOUT/src]   (the same inputs through other code)

Generates, per size, a gpusleuth bundle (docs/bundle.md: nodes.json, pods.json in pages of 500, or with --pods-yaml
one pods.yaml, one log per container, a manifest) of a GPU Operator fleet: every node runs the operator's six operands with their init containers;
a share of the nodes (--failing, default 0.8) fails in three distinct ways, the rest are healthy:

  driver    the driver container crash-loops: `modprobe` cannot insert nvidia_peermem (Invalid argument),
            the other operands wait in their init containers for the driver (the peermem-race example)
  toolkit   the container toolkit crash-loops: it cannot restart containerd after writing its config
  plugin    the device plugin crash-loops: it cannot load the NVML library

Failing nodes share labels that tell them apart (kernel, node pool, instance type), as in real fleets. Log
volumes follow a collection with `--tail 2000`: the driver container writes --lines lines (default 200),
the other containers a quarter of that, init containers a few waiting or done lines. Each size is diagnosed
in a fresh subprocess (imports + `gpusleuth.analysis.diagnose` + the JSON report), which reports its wall time,
its CPU time (what other processes on a shared machine take from the wall time shows there less) and its peak RSS (resource.getrusage, ru_maxrss); the script then fits time = a * nodes^k by least squares on
the logarithms and prints k (1 is linear).

Two baselines are measured in the same run, on the same input, each in a fresh subprocess after the diagnosis:
`read`, every file's bytes read once in the order the reader lists them; and `floor`, the least any Python
reader of this input does: read, decoded, the JSON files loaded with the json module, and one (line number,
text) tuple made for every line of the others. The diagnosis is printed as a multiple of the floor (`x floor`).

A bundle holds ~12.6 files per node (63,060 at 5,000 nodes), within the reader's cap on files per input
(sources/loose.py MAX_FILES, 200,000); a size whose input was cut all the same is marked. Timings on shared
machines vary: compare sizes within one run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from gpusleuth.serve.synthetic import NS, OPERANDS

KINDS = ("driver", "toolkit", "plugin")
NOW = datetime(2025, 6, 1, 12, 0, tzinfo=timezone.utc)
DRIVER_VERSION = "570.158.01"

# What each failing container prints last (its decisive lines), and which operand it is.
FAILURE_LINES = {
    "driver": ("nvidia-driver-daemonset", "nvidia-driver-ctr", [
        "Loading NVIDIA driver kernel modules...",
        "+ modprobe nvidia",
        "+ modprobe nvidia-uvm",
        "+ modprobe nvidia-modeset",
        "+ modprobe -a nvidia-peermem",
        "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument",
        "Unloading NVIDIA driver kernel modules...",
        "Unmounting NVIDIA driver rootfs...",
    ]),
    "toolkit": ("nvidia-container-toolkit-daemonset", "nvidia-container-toolkit-ctr", [
        'time="{t}" level=info msg="Loading config from /runtime/config-dir/config.toml"',
        'time="{t}" level=info msg="Sending SIGHUP signal to containerd"',
        'time="{t}" level=error msg="unable to setup runtime: unable to restart containerd: unable to signal process: no such process"',
        'time="{t}" level=fatal msg="error running nvidia-toolkit: unable to setup runtime: unable to restart containerd: unable to signal process: no such process"',
    ]),
    "plugin": ("nvidia-device-plugin-daemonset", "nvidia-device-plugin", [
        "I0601 11:59:58.000000       1 main.go:235] Starting NVIDIA Device Plugin",
        "I0601 11:59:58.000000       1 factory.go:107] Detected non-NVML platform: could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
        "E0601 11:59:58.000000       1 factory.go:115] Incompatible platform detected",
        "E0601 11:59:58.000000       1 main.go:132] error starting plugins: error creating plugin manager: unable to create plugin manager: platform detection failed",
    ]),
}

# Healthy output of each main container: realistic, repetitive, error-free.
HEALTHY = {
    "nvidia-driver-ctr": ["+ echo 'Starting NVIDIA driver {v}'".replace("{v}", DRIVER_VERSION), "Loading NVIDIA driver kernel modules...",
                          "+ modprobe nvidia", "+ modprobe nvidia-uvm", "+ modprobe nvidia-modeset", "+ set +o xtrace -o nounset",
                          "Starting NVIDIA persistence daemon...", "Mounting NVIDIA driver rootfs...", "Done, now waiting for signal"],
    "nvidia-container-toolkit-ctr": ['time="{t}" level=info msg="Parsing arguments"', 'time="{t}" level=info msg="Installing toolkit"',
                                     'time="{t}" level=info msg="Setting up runtime"', 'time="{t}" level=info msg="Successfully setup runtime"',
                                     'time="{t}" level=info msg="Waiting for signal"'],
    "nvidia-device-plugin": ["I0601 11:00:00.000000       1 main.go:235] Starting NVIDIA Device Plugin",
                             "I0601 11:00:00.000000       1 server.go:165] Starting GRPC server for 'nvidia.com/gpu'",
                             "I0601 11:00:00.000000       1 server.go:117] Starting to serve 'nvidia.com/gpu' on /var/lib/kubelet/device-plugins/nvidia-gpu.sock",
                             "I0601 11:00:00.000000       1 server.go:125] Registered device plugin for 'nvidia.com/gpu' with Kubelet"],
    "gpu-feature-discovery": ["I0601 11:00:00.000000       1 main.go:163] Start running",
                              "I0601 11:00:00.000000       1 main.go:227] Creating Labels",
                              "I0601 11:00:00.000000       1 main.go:238] Sleeping for 60000000000"],
    "nvidia-dcgm-exporter": ['time="{t}" level=info msg="Starting dcgm-exporter"', 'time="{t}" level=info msg="DCGM successfully initialized!"',
                             'time="{t}" level=info msg="Pipeline starting"', 'time="{t}" level=info msg="Starting webserver"'],
    "nvidia-operator-validator": ["all validations are successful"],
}
WAITING = {"driver-validation": "waiting for nvidia drivers to be loaded", "toolkit-validation": "waiting for nvidia container stack to be setup",
           "cuda-validation": "waiting for nvidia drivers to be loaded", "plugin-validation": "waiting for nvidia drivers to be loaded",
           "k8s-driver-manager": "Waiting for the driver to be ready"}

# Labels by which a fleet is grouped. Each failure shows on nodes that share one label value.
POOLS = ("pool-a", "pool-b", "pool-c")
INSTANCE = ("p5.48xlarge", "p4d.24xlarge")
KERNELS = ("5.15.0-1063-nvidia", "5.15.0-1071-nvidia")
PRODUCTS = ("NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-40GB")


def plan(nodes: int, failing: float, kinds: tuple[str, ...] = KINDS) -> list[str | None]:
    """Per node: the failure it shows (round robin over kinds), or None for a healthy node."""
    bad = round(nodes * failing)
    return [kinds[i % len(kinds)] if i < bad else None for i in range(nodes)]


def labels(i: int, kind: str | None, node: str) -> dict:
    """The driver failure shows on the newer kernel, the toolkit one on pool-b, the plugin one on p4d nodes."""
    kernel = KERNELS[1] if kind == "driver" else KERNELS[0] if kind else KERNELS[i % 2]
    pool = "pool-b" if kind == "toolkit" else ("pool-a" if kind else POOLS[i % 3])
    instance = INSTANCE[1] if kind == "plugin" else INSTANCE[0] if kind else INSTANCE[i % 2]
    product = PRODUCTS[1] if instance == INSTANCE[1] else PRODUCTS[0]
    return {"kubernetes.io/hostname": node, "nvidia.com/gpu.present": "true", "feature.node.kubernetes.io/pci-10de.present": "true",
            "node.kubernetes.io/instance-type": instance, "cloud.google.com/gke-nodepool": pool, "nvidia.com/gpu.product": product,
            "nvidia.com/gpu.count": "8", "nvidia.com/cuda.driver-version.full": DRIVER_VERSION,
            "feature.node.kubernetes.io/kernel-version.full": kernel}, kernel


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f000Z")


def _log(lines: list[str], n: int, start: datetime, tail: list[str] = ()) -> str:
    """n lines cycling through `lines`, then `tail`, one second apart, as `kubectl logs --timestamps` prints them."""
    out = []
    body = [lines[i % len(lines)] for i in range(n)] + list(tail)
    for i, text in enumerate(body):
        t = start + timedelta(seconds=i)
        out.append(f"{_stamp(t)} {text.replace('{t}', t.strftime('%Y-%m-%dT%H:%M:%SZ'))}")
    return "\n".join(out) + "\n"


def _status(name: str, *, ready: bool = True, waiting: str | None = None, restarts: int = 0, init_done: bool = True, running: bool = False) -> dict:
    if waiting:
        state = {"waiting": {"reason": waiting}}
    elif running or ready:
        state = {"running": {"startedAt": "2025-06-01T11:00:00Z"}}
    else:
        state = {"terminated": {"exitCode": 0, "reason": "Completed"}} if init_done else {"running": {"startedAt": "2025-06-01T11:00:00Z"}}
    out = {"name": name, "ready": ready, "restartCount": restarts, "state": state, "image": f"nvcr.io/nvidia/{name}:v25.3.4", "imageID": ""}
    if restarts:
        out["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": "2025-06-01T11:58:00Z", "finishedAt": "2025-06-01T11:58:10Z"}}
    return out


class _Bundle:
    def __init__(self, root: Path):
        self.root, self.artifacts, self.size = root, [], 0

    def write(self, name: str, text: str, **meta) -> None:
        p = self.root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        self.size += len(text)
        self.artifacts.append({"name": name, "source": "api", "status": 200, "size": len(text), **meta})

    def write_list(self, name: str, items: list, command: str, kind: str) -> None:
        value = {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}
        if name.endswith(".yaml"):  # as `kubectl -o yaml` writes it: keys sorted, items at the left margin
            import yaml
            text = yaml.dump(value, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), default_flow_style=False, sort_keys=True, width=1 << 16)
        else:
            text = json.dumps(value, indent=4) + "\n"
        self.write(name, text, command=command, kind=kind)


def generate(root: Path, nodes: int, failing: float = 0.8, lines: int = 200, salt: int = 0, kinds: tuple[str, ...] = KINDS,
             pods_yaml: bool = False) -> int:
    """Write a bundle of `nodes` GPU nodes under root (the failing ones round robin over `kinds`); returns its size in bytes.
    pods_yaml: every pod in one YAML List (as the GPU Operator's must-gather writes its operand pods), not JSON pages."""
    b = _Bundle(Path(root))
    kinds = plan(nodes, failing, kinds)
    node_items, pods = [], []
    short = max(2, lines // 4)
    for i, kind in enumerate(kinds):
        node = f"gpu-node-{i:05d}"
        lab, kernel = labels(i, kind, node)
        node_items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": lab}, "spec": {},
                           "status": {"capacity": {"nvidia.com/gpu": "8", "cpu": "192"}, "allocatable": {"nvidia.com/gpu": "8", "cpu": "190"},
                                      "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
                                      "nodeInfo": {"kernelVersion": kernel, "osImage": "Ubuntu 22.04.4 LTS", "containerRuntimeVersion": "containerd://1.7.27",
                                                   "kubeletVersion": "v1.31.2", "operatingSystem": "linux", "architecture": "amd64"}}})
        broken_ds = FAILURE_LINES[kind][0] if kind else None
        for o, (ds, inits, main) in enumerate(OPERANDS):
            pod = f"{ds}-{(i * 7 + o * 131 + salt) % 100000:05d}x"
            blocked = kind == "driver" and ds != "nvidia-driver-daemonset" or kind == "toolkit" and ds not in ("nvidia-driver-daemonset", "nvidia-container-toolkit-daemonset")
            crashed = ds == broken_ds
            init_st = [_status(c, ready=False, waiting=None, init_done=True) for c in inits]
            if blocked:  # stuck in its first init container, waiting for what the broken operand never writes
                init_st = [_status(inits[0], ready=False, running=True)] + [_status(c, ready=False, waiting="PodInitializing") for c in inits[1:]]
                main_st = _status(main, ready=False, waiting="PodInitializing")
                phase, ready = "Pending", False
            elif crashed:
                main_st = _status(main, ready=False, waiting="CrashLoopBackOff", restarts=17)
                phase, ready = "Running", False
            else:
                main_st = _status(main)
                phase, ready = "Running", True
            meta = {"name": pod, "namespace": NS, "labels": {"app": ds}, "uid": f"uid-{pod}", "creationTimestamp": "2025-06-01T10:00:00Z",
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds, "uid": f"uid-ds-{ds}", "controller": True}]}
            pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                         "spec": {"nodeName": node, "containers": [{"name": main, "image": f"nvcr.io/nvidia/{main}:v25.3.4"}],
                                  "initContainers": [{"name": c, "image": f"nvcr.io/nvidia/{c}:v25.3.4"} for c in inits]},
                         "status": {"phase": phase, "conditions": [{"type": "Ready", "status": str(ready)}],
                                    "initContainerStatuses": init_st, "containerStatuses": [main_st]}})
            start = NOW - timedelta(hours=1)
            for c in inits:
                text = WAITING.get(c, "waiting") if blocked and c == inits[0] else f"{c} validation is successful"
                body = _log([text], short if blocked and c == inits[0] else 1, start)
                b.write(f"namespaces/{NS}/logs/{pod}/{c}.log", body, kind="container-log", namespace=NS, pod=pod, container=c, init=True,
                        node=node, command=f"kubectl logs -n {NS} {pod} -c {c} --timestamps --tail=2000")
            if blocked:
                continue
            n = lines if main == "nvidia-driver-ctr" else short
            tail = FAILURE_LINES[kind][2] if crashed else ()
            body = _log(HEALTHY[main], n, start, tail)
            b.write(f"namespaces/{NS}/logs/{pod}/{main}.log", body, kind="container-log", namespace=NS, pod=pod, container=main, init=False,
                    node=node, command=f"kubectl logs -n {NS} {pod} -c {main} --timestamps --tail=2000")
    b.write_list("cluster/nodes.json", node_items, "kubectl get nodes -o json", "list")
    if pods_yaml:
        b.write_list(f"namespaces/{NS}/pods.yaml", pods, f"kubectl get pods -n {NS} -o yaml", "list")
    for part in range(0, len(pods) if not pods_yaml else 0, 500):
        name = f"namespaces/{NS}/pods.json" if part == 0 else f"namespaces/{NS}/pods-{part // 500 + 1}.json"
        b.write_list(name, pods[part:part + 500], f"kubectl get pods -n {NS} -o json", "list")
    manifest = {"schema": "gpusleuth/bundle/v1", "tool": {"name": "gpusleuth", "version": "bench"}, "captured_at": _stamp(NOW),
                "options": {"tail_lines": 2000}, "operator_namespaces": {NS: "generated"}, "counts": {"nodes": nodes, "pods": len(pods)},
                "artifacts": b.artifacts, "gaps": []}
    (Path(root) / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return b.size


_CHILD = """
import json, resource, sys, time
t, cpu = time.perf_counter(), time.process_time()
from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.report.json_report import render
from gpusleuth.sources import open_source
report = diagnose(open_source(sys.argv[1]))
out = render(report)
elapsed = time.perf_counter() - t
cut = any(g.what == "partial-input" for g in report.gaps)
print(json.dumps({"seconds": elapsed, "cpu": time.process_time() - cpu, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "findings": len(report.findings), "root_causes": len(report.root_causes), "json_bytes": len(out), "cut": cut}))
"""


_BASELINE = """
import gc, json, os, sys, time
gc.disable()  # as a diagnosis pauses the cycle collector (gcpause.py), so that neither pays for collections
def files(root):  # depth first, sorted, as sources/loose.py lists a folder
    stack = [root]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        stack.extend(reversed([e.path for e in entries if e.is_dir(follow_symlinks=False)]))
        yield from (e.path for e in entries if e.is_file(follow_symlinks=False))
floor = sys.argv[2] == "floor"
t, cpu = time.perf_counter(), time.process_time()
kept = []
for path in files(sys.argv[1]):
    with open(path, "rb") as fh:
        data = fh.read()
    if floor:
        text = data.decode("utf-8", "replace")
        kept.append(json.loads(text) if path.endswith(".json") else [(i, ln) for i, ln in enumerate(text.splitlines(), 1)])
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - cpu}))
"""


def baseline(root: Path, what: str, timeout: float) -> dict:
    """`read` or `floor` (see the module's doc) over the input, in a fresh interpreter."""
    r = subprocess.run([sys.executable, "-c", _BASELINE, str(root), what], capture_output=True, text=True, timeout=timeout, check=False)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure(root: Path, timeout: float, src: str | None = None) -> dict:
    src = src or str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", _CHILD, str(root)], capture_output=True, text=True, timeout=timeout, env=env, check=False)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def fit(points: list[tuple[int, float]]) -> float | None:
    """k in time = a * n^k, least squares on log-log."""
    pts = [(math.log(n), math.log(t)) for n, t in points if t > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,200,500,1000,2000,5000", help="node counts, comma-separated")
    ap.add_argument("--failing", type=float, default=0.8, help="share of nodes that fail (in three ways)")
    ap.add_argument("--lines", type=int, default=200, help="lines of the driver container's log per node")
    ap.add_argument("--timeout", type=float, default=900, help="seconds allowed per size")
    ap.add_argument("--src", help="diagnose with the gpusleuth under this src/ (another checkout, for a before/after curve)")
    ap.add_argument("--pods-yaml", action="store_true",
                    help="every pod in one YAML List (`kubectl get pods -o yaml`, as the GPU Operator's must-gather writes its operand "
                         "pods) instead of JSON pages of 500")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    points = []
    print(f"{'nodes':>6} {'input MB':>9} {'files':>7} {'diagnose s':>11} {'CPU s':>7} {'peak RSS MiB':>13} {'causes':>7} {'findings':>9} {'JSON MB':>8}"
          f" {'read s':>7} {'floor s':>8} {'x floor':>8}")
    for n in sizes:
        root = Path(tempfile.mkdtemp(prefix="gpusleuth-scale-"))
        try:
            size = generate(root, n, args.failing, args.lines, pods_yaml=args.pods_yaml)
            files = sum(1 for _ in root.rglob("*") if _.is_file())
            try:
                m = measure(root, args.timeout, args.src)
            except subprocess.TimeoutExpired:
                print(f"{n:>6} {size / 1e6:>9.1f} {files:>7} {'> ' + str(int(args.timeout)):>11}   (stopped)")
                break
            points.append((n, m["seconds"]))
            read, floor = (baseline(root, what, args.timeout)["seconds"] for what in ("read", "floor"))
            cut = "  (input cut: more files than the reader's cap)" if m["cut"] else ""
            print(f"{n:>6} {size / 1e6:>9.1f} {files:>7} {m['seconds']:>11.2f} {m.get('cpu', 0):>7.2f} {m['rss_mib']:>13.0f} {m['root_causes']:>7} {m['findings']:>9} "
                  f"{m['json_bytes'] / 1e6:>8.2f} {read:>7.2f} {floor:>8.2f} {m['seconds'] / floor:>7.1f}x{cut}", flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    k = fit(points)
    if k is not None:
        print(f"fitted exponent: time ~ nodes^{k:.2f} over {points[0][0]}..{points[-1][0]} nodes")


if __name__ == "__main__":
    main()
