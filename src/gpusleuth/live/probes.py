"""Node probes (only with --node-probes): one short-lived privileged pod per GPU node reads the host.

Each probe pod is labelled ``app.kubernetes.io/managed-by=gpusleuth`` and ``gpusleuth.io/run-id=<run>``,
pinned to its node (``nodeName``, all taints tolerated), runs busybox with hostPID and the host's root
mounted read-only at /host, prints what knowledge/live.toml [probe] lists in the probe_format sections,
and exits. At most ``--max-workers`` run at once. The collector reads its log and turns every section into
an artifact with ``cat <path>`` / command provenance, so the usual parsers get their path hints.

Probe pods are ALWAYS deleted: each one in its own ``finally`` (success, error, timeout, cancellation),
then a sweep deletes whatever still carries this run's label (a create whose response was lost). Ctrl-C
and SIGTERM cancel the run, which runs those ``finally`` blocks. ``gpusleuth cleanup`` removes probes a
killed run (SIGKILL) left behind, by label. Nothing else is ever written to the cluster.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import uuid
from functools import cache

from gpusleuth.knowledge import table
from gpusleuth.live import probe_format
from gpusleuth.live.api import Api, ApiFailure
from gpusleuth.live.plan import is_gpu_node, is_operand, requests_accelerators
from gpusleuth.live.resources import BY_KIND

MANAGED_BY = ("app.kubernetes.io/managed-by", "gpusleuth")
RUN_LABEL = "gpusleuth.io/run-id"
PROBE_SELECTOR = "app.kubernetes.io/managed-by=gpusleuth,app.kubernetes.io/name=gpusleuth-probe"
HOST = "/host"
MAX_OUTPUT = 32 * 1024 * 1024
POLL = 0.5


@cache
def settings() -> dict:
    return table("live")["probe"]


def _q(text: str) -> str:
    return shlex.quote(text)


def script(skip: tuple[str, ...] = ()) -> str:
    """The POSIX sh a probe runs (busybox): every file, listing and command of the [probe] table but the
    commands named in `skip`. It reads the host under $GPUSLEUTH_PROBE_ROOT (default /host; empty: this
    machine's own root, as `gpusleuth node` runs it)."""
    t = settings()
    m = probe_format.MARK
    out = [
        "set +e",
        f"M={_q(m)}; H=${{GPUSLEUTH_PROBE_ROOT-{HOST}}}; seen=' '",
        'emit() { case "$seen" in *" $1 "*) return;; esac; seen="$seen$1 "; '
        'if [ -f "$H$1" ]; then echo "$M begin file $1"; cat "$H$1"; r=$?; printf "\\n%s end %s\\n" "$M" "$r"; '
        'else echo "$M absent $1"; fi; }',
    ]
    for path in t["files"]:
        if "*" in path:
            out.append(f'for f in $H{path}; do [ -f "$f" ] && emit "${{f#$H}}"; done')
        else:
            out.append(f"emit {_q(path)}")
    for path in t["listings"]:
        name = "ls" + re.sub(r"[^\w.-]+", "_", path.replace("*", "")).rstrip("_") + ".txt"
        out.append(f'echo "$M begin cmd {name} ls -la {path}"; n=0; for f in $H{path}; do if [ -e "$f" ] || [ -L "$f" ]; then '
                   f'if [ -n "$H" ]; then ls -lad "$f" | sed "s#$H##g"; else ls -lad "$f"; fi; n=1; fi; done; [ $n -eq 1 ] || echo "ls: cannot access \'{path}\': No such file or directory"; '
                   f'printf "\\n%s end %s\\n" "$M" "$((1 - n))"')
    for cmd in t["commands"]:
        if cmd["name"] in skip:
            continue
        run = cmd["run"]
        if cmd.get("host"):
            out.append(_host_command(cmd))
            continue
        out.append(f'echo "$M begin cmd {cmd["name"]} {run}"')
        out.append(f'( {run} ) 2>&1; printf "\\n%s end %s\\n" "$M" "$?"')
    names = "|".join(t["processes"])
    out += [
        f'echo "$M begin cmd processes.txt pgrep -af {_q(names)}"',
        'cfgs=""; P=${GPUSLEUTH_PROBE_PROC:-/proc}',  # the process table: the host's, with hostPID
        'for d in "$P"/[0-9]*; do',
        '  c=$(cat "$d/comm" 2>/dev/null) || continue',
        f'  case "$c" in {names}) ;; *) continue;; esac',
        '  a=$(tr "\\000" " " < "$d/cmdline" 2>/dev/null); [ -n "$a" ] || continue',
        '  echo "${d#$P/} $a"',
        '  set -- $a; while [ $# -gt 0 ]; do case "$1" in --config=*) cfgs="$cfgs ${1#--config=}";; --config|-c) shift; cfgs="$cfgs $1";; esac; shift; done',
        "done",
        'printf "\\n%s end 0\\n" "$M"',
        'for f in $cfgs; do case "$f" in /*) emit "$f";; esac; done',
        'echo "$M done"',
    ]
    return "\n".join(out) + "\n"


_BIN_DIRS = "/usr/bin /usr/sbin /bin /sbin /usr/local/bin /usr/local/sbin"


def _host_command(cmd: dict) -> str:
    """A command run in the host's root: in the first root that has the program, the next when it fails. Only
    the last attempt's output is printed, under the command it really was (`chroot /run/nvidia/driver
    modinfo nvidia`); a program no root has is `absent`, not an error message. (A symlink counts as the
    program: /sbin/modinfo -> /bin/kmod points into the host, not into this container.)"""
    run, prog = cmd["run"], cmd["run"].split()[0]
    roots = " ".join(_q(r) for r in cmd.get("roots", ["/"]))
    return (f'used=; r=1; o=; for root in {roots}; do [ -d "$H$root" ] || continue; has=; '
            f'for d in {_BIN_DIRS}; do p="$H$root$d/{prog}"; {{ [ -L "$p" ] || [ -x "$p" ]; }} && has=1 && break; done; [ -n "$has" ] || continue; '
            f'if [ "$H$root" = / ]; then o=$({run} 2>&1); else o=$(chroot "$H$root" {run} 2>&1); fi; r=$?; used=$root; [ $r -eq 0 ] && break; done; '
            f'if [ -z "$used" ]; then echo "$M absent {run}"; else '
            f'if [ "$used" = / ]; then c={_q(run)}; else c="chroot $used {run}"; fi; '
            f'echo "$M begin cmd {cmd["name"]} $c"; printf "%s\\n" "$o"; printf "\\n%s end %s\\n" "$M" "$r"; fi')


def pod_spec(name: str, namespace: str, node: str, run_id: str, image: str, deadline: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {MANAGED_BY[0]: MANAGED_BY[1], "app.kubernetes.io/name": "gpusleuth-probe", RUN_LABEL: run_id},
            "annotations": {"gpusleuth.io/node": node, "gpusleuth.io/purpose": "read-only node probe; safe to delete"},
        },
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "hostPID": True,
            "serviceAccountName": settings()["service_account"],
            "automountServiceAccountToken": False,
            "activeDeadlineSeconds": deadline,
            "terminationGracePeriodSeconds": 0,
            "tolerations": [{"operator": "Exists"}],
            "containers": [{
                "name": "probe",
                "image": image,
                "command": ["sh", "-c", script()],
                "securityContext": {"privileged": True},
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "128Mi"}},
                "volumeMounts": [{"name": "host", "mountPath": HOST, "readOnly": True}],
            }],
            "volumes": [{"name": "host", "hostPath": {"path": "/"}}],
        },
    }


async def delete_pod(api: Api, namespace: str, name: str) -> bool:
    """True when the pod is gone (deleted now, or already)."""
    try:
        await api.request("DELETE", BY_KIND["Pod"].path(namespace, name), {"gracePeriodSeconds": 0})
    except ApiFailure as exc:
        return exc.status == 404
    return True


async def sweep(api: Api, namespace: str | None, selector: str) -> tuple[list[str], list[str]]:
    """Delete every pod matching the selector (in one namespace, or all); (deleted, left behind)."""
    path = BY_KIND["Pod"].path(namespace)
    found: list[tuple[str, str]] = []
    async for items, _ in api.list_pages(path, {"labelSelector": selector}):
        found.extend((p["metadata"]["namespace"], p["metadata"]["name"]) for p in items)
    results = await asyncio.gather(*(delete_pod(api, ns, n) for ns, n in found))
    return [f"{ns}/{n}" for (ns, n), ok in zip(found, results) if ok], [f"{ns}/{n}" for (ns, n), ok in zip(found, results) if not ok]


def targets(c) -> list[str]:
    """GPU nodes by their labels or capacity, and every node running an operand or a GPU pod (a node the
    API would not list, or whose labels NFD never wrote, is still where the problem is)."""
    nodes = {n for n, obj in c.nodes.items() if is_gpu_node(obj)}
    nodes.update((p.get("spec") or {}).get("nodeName") for p in c.pods.values() if is_operand(p) or requests_accelerators(p))
    return sorted(n for n in nodes if n)


async def run_probes(c) -> None:
    """Probe every GPU node of the collection `c` (a Collector); artifacts and gaps go into it."""
    t = settings()
    opts = c.options
    namespace = opts.probe_namespace or t["namespace"]
    image = opts.probe_image or t["image"]
    timeout = float(opts.probe_timeout or t["timeout_seconds"])
    run_id = uuid.uuid4().hex[:10]
    nodes = targets(c)
    record = {"run_id": run_id, "namespace": namespace, "image": image, "nodes": len(nodes), "pods": {}}
    c.probe_record = record
    c.progress.task("probes", "node probes", len(nodes))
    sem = asyncio.Semaphore(max(1, opts.max_workers))

    async def one(i: int, node: str) -> None:
        async with sem:
            name = f"gpusleuth-probe-{run_id}-{i}"
            record["pods"][name] = {"node": node, "created": False, "deleted": False}
            try:
                await probe_node(c, namespace, name, node, run_id, image, timeout, record["pods"][name])
            finally:
                record["pods"][name]["deleted"] = await delete_pod(c.api, namespace, name)
                c.progress.advance("probes")

    try:
        await asyncio.gather(*(c.guarded(f"node probe on {node}", one, i, node) for i, node in enumerate(nodes)))
    finally:
        try:
            deleted, left = await sweep(c.api, namespace, f"{RUN_LABEL}={run_id}")
        except ApiFailure as exc:
            deleted, left = [], [f"(cannot list probe pods: {exc.reason})"]
        record["swept"] = deleted
        if left or not all(p["deleted"] for p in record["pods"].values()):
            left += [f"{namespace}/{n}" for n, p in record["pods"].items() if not p["deleted"] and f"{namespace}/{n}" not in deleted]
            record["left_behind"] = left
            c.gap("node probe pods", f"could not delete {', '.join(left)}; run `gpusleuth cleanup`")


async def probe_node(c, namespace: str, name: str, node: str, run_id: str, image: str, timeout: float, rec: dict) -> None:
    api = c.api
    pods = BY_KIND["Pod"]
    try:
        await api.request("POST", pods.path(namespace), body=pod_spec(name, namespace, node, run_id, image, int(timeout) + 30))
    except ApiFailure as exc:
        if exc.status != 409:  # 409: a retried create that had worked
            raise
    rec["created"] = True
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    phase = "Pending"
    while True:
        pod, _ = await api.get_json(pods.path(namespace, name))
        status = pod.get("status") or {}
        phase = status.get("phase") or "Pending"
        if phase in ("Succeeded", "Failed"):
            break
        waiting = [(cs.get("state") or {}).get("waiting") or {} for cs in status.get("containerStatuses") or []]
        stuck = next((w for w in waiting if w.get("reason") in ("ErrImagePull", "ImagePullBackOff", "CreateContainerConfigError", "InvalidImageName")), None)
        if stuck:
            c.gap(f"node probe on {node}", f"probe pod cannot start: {stuck.get('reason')}: {stuck.get('message', '')}".rstrip(": "))
            return
        if loop.time() > deadline:
            c.gap(f"node probe on {node}", f"timed out after {timeout:.0f}s (pod {phase})")
            return
        await asyncio.sleep(POLL)
    rec["phase"] = phase
    resp = await api.request("GET", pods.path(namespace, name, "log"), {"limitBytes": MAX_OUTPUT})
    output = probe_format.parse(resp.body.decode("utf-8", "replace"))
    read_at = resp.server_time()  # the cluster's clock when the output was read, seconds after the probe read it
    if not output.complete:
        c.gap(f"node probe on {node}", f"output incomplete (pod {phase}); what was printed is kept")
    rec["absent"] = output.absent
    rec["empty"] = [s.ref for s in output.sections if not any(s.lines)]
    for artifact, text, record in artifacts(output, f"nodes/{node}/"):
        c.add_text(artifact, text, {"source": "probe", "node": node, "pod": f"{namespace}/{name}", **record,
                                    **({"server_time": read_at.isoformat()} if read_at else {})})


def artifacts(output: probe_format.ProbeOutput, prefix: str) -> list[tuple[str, str, dict]]:
    """(artifact name, text, provenance) of each section that printed something, named under `prefix`: a file
    as `cat <path>` with its host path (so parsers get their path hints), a command as the command it ran.
    An empty marker file or a grep that found nothing is no artifact (the manifest lists it as empty)."""
    out = []
    for s in output.sections:
        if not any(s.lines):
            continue
        if s.kind == "file":
            artifact, command, path = f"{prefix}files{s.ref}", f"cat {s.ref}", s.ref
        else:
            artifact, command, path = f"{prefix}{'commands' if s.kind == 'cmd' else 'other'}/{s.ref}", s.command, None
        out.append((artifact, "\n".join(s.lines) + "\n", {
            "command": command, "path": path, "status": s.rc, "truncated": s.rc is None,
            "probe": {"kind": s.kind, "ref": s.ref, "command": s.command}}))
    return out
