"""A read-only Kubernetes API over a Store: enough REST for kubectl get/describe/logs and for lightkube.

Paths: /version, discovery (/api, /apis, /api/v1, /apis/<group>/<version>), lists and gets of every
stored resource (cluster-wide and per namespace), pod logs (container, previous, tailLines, limitBytes,
timestamps). Lists page with limit/continue and filter with labelSelector (=, ==, !=, exists, !key,
in, notin) and fieldSelector (=, ==, != on any dotted field). Writes are refused, except that a server
started with ``probe_namespace`` accepts creating and deleting pods there: it then emulates node probes
(their log is the node's files from the source), which is how tests drive the probe lifecycle.

Standard library only (http.server): a fixed pool of handler threads, idle connections dropped, bound to 127.0.0.1.
"""

from __future__ import annotations

import base64
import json
import queue
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlsplit

from gpusleuth.live.probe_format import render
from gpusleuth.live.resources import BY_KIND, Resource
from gpusleuth.serve.faults import Faults
from gpusleuth.serve.store import Store
from gpusleuth.serve.synth import rfc3339
from gpusleuth.serve.table import table

_CORE = re.compile(r"^/api/(?P<version>v1)(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+)(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?$")
_GROUP = re.compile(r"^/apis/(?P<group>[^/]+)/(?P<version>[^/]+)(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+)(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?$")
_SELECTOR_SET = re.compile(r"^\s*(?P<key>[^\s!=]+)\s+(?P<op>in|notin)\s+\((?P<values>[^)]*)\)\s*$")
_PROBE_LABEL = ("app.kubernetes.io/managed-by", "gpusleuth")
MAX_BODY = 1 << 20


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


@dataclass
class App:
    """Everything a request handler needs; `log` records (method, path?query, status) for tests."""

    store: Store
    faults: Faults = field(default_factory=Faults)
    probe_namespace: str | None = None  # writes allowed here only, and only for pods
    probe_seconds: float = 0.2  # how long an emulated probe pod runs before it Succeeds
    log: list[tuple[str, str, int]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def clock(self) -> datetime:
        """The snapshot's time now: its capture time plus how long it has been served."""
        return self.store.now.astimezone(timezone.utc) + timedelta(seconds=time.monotonic() - self.started)


# -- selectors ---------------------------------------------------------------------------------------


def _split_requirements(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def label_matcher(selector: str):
    tests = []
    for req in _split_requirements(selector):
        m = _SELECTOR_SET.match(req)
        if m:
            values = {v.strip() for v in m.group("values").split(",")}
            key, inside = m.group("key"), m.group("op") == "in"
            tests.append(lambda labels, k=key, vs=values, i=inside: (labels.get(k) in vs) if i else (labels.get(k) not in vs))
        elif "!=" in req:
            k, v = (x.strip() for x in req.split("!=", 1))
            tests.append(lambda labels, k=k, v=v: labels.get(k) != v)
        elif "=" in req:
            k, v = (x.strip() for x in req.replace("==", "=").split("=", 1))
            tests.append(lambda labels, k=k, v=v: labels.get(k) == v)
        elif req.startswith("!"):
            tests.append(lambda labels, k=req[1:].strip(): k not in labels)
        else:
            tests.append(lambda labels, k=req: k in labels)
    return lambda obj: all(t((obj.get("metadata") or {}).get("labels") or {}) for t in tests)


def _field(obj: dict, path: str):
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def field_matcher(selector: str):
    tests = []
    for req in _split_requirements(selector):
        neg = "!=" in req
        k, v = (x.strip() for x in (req.split("!=", 1) if neg else req.replace("==", "=").split("=", 1)))
        tests.append(lambda obj, k=k, v=v, neg=neg: (str(_field(obj, k) or "") != v) if neg else (str(_field(obj, k) or "") == v))
    return lambda obj: all(t(obj) for t in tests)


def _token(offset: int, revision: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"o": offset, "r": revision}).encode()).decode()


def _offset(token: str) -> int:
    try:
        return int(json.loads(base64.urlsafe_b64decode(token.encode()))["o"])
    except (ValueError, KeyError, TypeError):
        raise ApiError(400, "BadRequest", "continue key is not valid") from None


# -- the handler -------------------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "gpusleuth-serve"
    disable_nagle_algorithm = True  # headers and body go out in two writes: without this, 40 ms delayed ACKs
    timeout = 10  # seconds a connection may stay silent (before its request line, between kept-alive requests)
    app: App  # set on the subclass made per server

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet; App.log records requests
        pass

    def date_time_string(self, timestamp=None) -> str:
        """The Date header on the snapshot's clock: clients take the capture time from it."""
        return format_datetime(self.app.clock(), usegmt=True)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        record = f"{path}?{url.query}" if url.query else path
        body = self._body()
        fault = self.app.faults.match(method, path, url.query)
        if fault is not None:
            if fault.delay:
                time.sleep(fault.delay)
            if fault.drop:
                self.app.log.append((method, record, 0))
                self.close_connection = True
                return
            if fault.status:
                self.app.log.append((method, record, fault.status))
                headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
                self._status(fault.status, fault.reason, fault.message or f"injected fault: {fault.reason}", headers)
                return
        try:
            status, payload = self._route(method, path, query, body)
        except ApiError as exc:
            self.app.log.append((method, record, exc.code))
            self._status(exc.code, exc.reason, exc.message, {"Allow": "GET"} if exc.code == 405 else None)
            return
        self.app.log.append((method, record, status))
        if isinstance(payload, str):
            self._send(status, payload.encode(), "text/plain; charset=utf-8")
        else:
            self._send(status, json.dumps(payload).encode(), "application/json")

    def _body(self) -> bytes:
        """The request body, read whatever the method: kubectl's DELETE carries DeleteOptions, and a body left
        unread on a kept-alive connection is parsed as the next request (a stray 400 kubectl logs as noise).
        A body we do not read in full (too large, chunked, unparseable length) ends the connection instead."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY or "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            return self.rfile.read(MAX_BODY) if length > MAX_BODY else b""
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, data: bytes, ctype: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if self.close_connection or self.server.waiting():  # a body left unread, or others wait for a worker
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _status(self, code: int, reason: str, message: str, headers: dict | None = None) -> None:
        doc = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": reason, "code": code}
        self._send(code, json.dumps(doc).encode(), "application/json", headers)

    # -- routing ----------------------------------------------------------------------------------

    def _read_only(self) -> ApiError:
        """A write: a Kubernetes Status (405 MethodNotAllowed), which kubectl prints as one clean error line."""
        return ApiError(405, "MethodNotAllowed", "gpusleuth serve is read-only: it serves a snapshot"
                        + (f" (pods may be created in {self.app.probe_namespace} only)" if self.app.probe_namespace else ""))

    def _route(self, method: str, path: str, query: dict, body: bytes):
        store = self.app.store
        ns_pods = self.app.probe_namespace and re.fullmatch(rf"/api/v1/namespaces/{re.escape(self.app.probe_namespace)}/pods(/[^/]+)?", path)
        if method != "GET" and not ns_pods:
            raise self._read_only()  # whatever the path: a write never reads as "not found"
        if method == "GET":
            if path == "/version":
                return 200, store.version
            if path == "/api":
                host = self.headers.get("Host", "127.0.0.1")
                return 200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}]}
            if path == "/apis":
                return 200, self._groups()
            if path == "/api/v1":
                return 200, self._resource_list("", "v1")
            m = re.fullmatch(r"/apis/([^/]+)/([^/]+)", path)
            if m and any(r.group == m.group(1) and r.version == m.group(2) for r in store.resources.values()):
                return 200, self._resource_list(m.group(1), m.group(2))
        m = _CORE.match(path) or _GROUP.match(path)
        if not m:
            raise ApiError(404, "NotFound", f"the server could not find the requested resource ({path})")
        g = m.groupdict()
        res = self._resource(g.get("group") or "", g["version"], g["plural"])
        ns, name, sub = g.get("ns"), g.get("name"), g.get("sub")
        if ns and not res.namespaced:
            raise ApiError(404, "NotFound", f"the server could not find the requested resource ({path})")
        if method == "GET":
            if query.get("watch") in ("true", "1"):
                raise ApiError(405, "MethodNotAllowed", "watch is not supported by gpusleuth serve (a snapshot does not change)")
            if name is None:
                listed, page = self._list(res, ns, query)
                if "as=Table" in self.headers.get("Accept", ""):
                    return 200, table(res.kind, page, self.app.store.now, listed["metadata"])
                return 200, listed
            if sub == "log" and res.kind == "Pod":
                return 200, self._log(ns or "default", name, query)
            if sub is not None:
                raise ApiError(404, "NotFound", f"subresource {sub} is not served")
            obj = self._get(res, ns, name)
            if "as=Table" in self.headers.get("Accept", ""):
                return 200, table(res.kind, [obj], self.app.store.now, {"resourceVersion": str(self.app.store.revision)})
            return 200, obj
        if method == "POST" and name is None and res.kind == "Pod" and ns and ns == self.app.probe_namespace:
            return 201, self._create_probe(ns, body)
        if method == "DELETE" and name and res.kind == "Pod" and ns and ns == self.app.probe_namespace:
            obj = self.app.store.delete(res, ns, name)
            if obj is None:
                raise ApiError(404, "NotFound", f'pods "{name}" not found')
            return 200, obj
        raise self._read_only()

    def _resource(self, group: str, version: str, plural: str) -> Resource:
        for r in self.app.store.resources.values():
            if r.group == group and r.version == version and r.plural == plural:
                return r
        raise ApiError(404, "NotFound", f"the server could not find the requested resource ({group or 'core'}/{version} {plural})")

    def _groups(self) -> dict:
        groups: dict[str, list[str]] = {}
        for r in self.app.store.resources.values():
            if r.group:
                groups.setdefault(r.group, [])
                if r.version not in groups[r.group]:
                    groups[r.group].append(r.version)
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs],
             "preferredVersion": {"groupVersion": f"{g}/{vs[0]}", "version": vs[0]}} for g, vs in sorted(groups.items())]}

    def _resource_list(self, group: str, version: str) -> dict:
        out = []
        for r in sorted(self.app.store.resources.values(), key=lambda r: r.plural):
            if r.group != group or r.version != version:
                continue
            verbs = ["get", "list"] + (["create", "delete"] if r.kind == "Pod" and self.app.probe_namespace else [])
            out.append({"name": r.plural, "singularName": r.kind.lower(), "namespaced": r.namespaced, "kind": r.kind, "verbs": verbs, "shortNames": list(r.short)})
            if r.kind == "Pod":
                out.append({"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]})
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/{version}" if group else version, "resources": out}

    def _items(self, res: Resource, ns: str | None) -> list[dict]:
        if res.kind == "Namespace":
            return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}, "status": {"phase": "Active"}}
                    for n in self.app.store.namespaces()]
        return [self._live(o) for o in self.app.store.items(res, ns)]

    def _get(self, res: Resource, ns: str | None, name: str) -> dict:
        if res.kind == "Namespace":
            found = next((o for o in self._items(res, None) if o["metadata"]["name"] == name), None)
        else:
            found = self.app.store.get(res, ns, name)
        if found is None:
            raise ApiError(404, "NotFound", f'{res.qualified} "{name}" not found')
        return self._live(found)

    def _list(self, res: Resource, ns: str | None, query: dict) -> tuple[dict, list[dict]]:
        """(the List as the API returns it, the page's objects in full)."""
        items = self._items(res, ns)
        if query.get("labelSelector"):
            items = [o for o in items if label_matcher(query["labelSelector"])(o)]
        if query.get("fieldSelector"):
            items = [o for o in items if field_matcher(query["fieldSelector"])(o)]
        start = _offset(query["continue"]) if query.get("continue") else 0
        limit = int(query["limit"]) if (query.get("limit") or "").isdigit() and int(query["limit"]) > 0 else None
        page = items[start : start + limit] if limit else items[start:]
        meta = {"resourceVersion": str(self.app.store.revision)}
        if limit and start + limit < len(items):
            meta["continue"] = _token(start + limit, self.app.store.revision)
            meta["remainingItemCount"] = len(items) - start - limit
        # A real API server does not repeat apiVersion/kind on list items; clients must cope.
        stripped = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in page]
        return {"kind": f"{res.kind}List", "apiVersion": res.api_version, "metadata": meta, "items": stripped}, page

    # -- pods: logs and emulated probes -----------------------------------------------------------

    def _live(self, obj: dict) -> dict:
        """An emulated probe pod's phase moves with time: Pending, then Succeeded."""
        ann = (obj.get("metadata") or {}).get("annotations") or {}
        started = ann.get("serve.gpusleuth.io/created")
        if started is None:
            return obj
        done = time.monotonic() - float(started) >= self.app.probe_seconds
        out = json.loads(json.dumps(obj))
        ctr = out["spec"]["containers"][0]["name"]
        if done:
            out["status"] = {"phase": "Succeeded", "containerStatuses": [
                {"name": ctr, "ready": False, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}
        else:
            out["status"] = {"phase": "Pending", "containerStatuses": [
                {"name": ctr, "ready": False, "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]}
        return out

    def _create_probe(self, ns: str, body: bytes) -> dict:
        try:
            obj = json.loads(body)
        except ValueError:
            raise ApiError(400, "BadRequest", "request body is not JSON") from None
        meta = obj.setdefault("metadata", {})
        name = meta.get("name") or (meta.get("generateName", "pod-") + uuid.uuid4().hex[:5])
        if not (obj.get("spec") or {}).get("containers"):
            raise ApiError(422, "Invalid", "spec.containers: Required value")
        store = self.app.store
        res = BY_KIND["Pod"]
        with store.lock:
            if store.get(res, ns, name) is not None:
                raise ApiError(409, "AlreadyExists", f'pods "{name}" already exists')
            meta.update(name=name, namespace=ns, uid=str(uuid.uuid4()), creationTimestamp=rfc3339(self.app.clock()))
            meta.setdefault("annotations", {})["serve.gpusleuth.io/created"] = repr(time.monotonic())
            obj.update(apiVersion="v1", kind="Pod")
            store.add(obj)
        return self._live(obj)

    def _log(self, ns: str, name: str, query: dict) -> str:
        store = self.app.store
        pod = store.get(BY_KIND["Pod"], ns, name)
        if pod is None:
            raise ApiError(404, "NotFound", f'pods "{name}" not found')
        pod = self._live(pod)
        spec = pod.get("spec") or {}
        apps = [c.get("name") for c in spec.get("containers") or []]
        inits = [c.get("name") for c in spec.get("initContainers") or []]
        container = query.get("container")
        if not container:
            if len(apps) != 1 or inits and not apps:
                raise ApiError(400, "BadRequest", f"a container name must be specified for pod {name}, choose one of: [{' '.join(apps)}]"
                               + (f" or one of the init containers: [{' '.join(inits)}]" if inits else ""))
            container = apps[0]
        if container not in apps + inits:
            raise ApiError(400, "BadRequest", f"container {container} is not valid for pod {name}")
        previous = query.get("previous") in ("true", "1")
        labels = (pod.get("metadata") or {}).get("labels") or {}
        if labels.get(_PROBE_LABEL[0]) == _PROBE_LABEL[1]:
            if pod["status"]["phase"] == "Pending":
                raise ApiError(400, "BadRequest", f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating')
            return _limit(render(store.node_files.get(spec.get("nodeName", ""), [])), query)
        lines = store.log(ns, name, container, previous)
        if lines is None:
            if previous:
                raise ApiError(400, "BadRequest", f'previous terminated container "{container}" in pod "{name}" not found')
            waiting = _waiting(pod, container)
            if waiting:
                raise ApiError(400, "BadRequest", f'container "{container}" in pod "{name}" is waiting to start: {waiting}')
            lines = []
        tail = query.get("tailLines")
        if tail and tail.isdigit():
            lines = lines[-int(tail):] if int(tail) else []
        stamp = query.get("timestamps") in ("true", "1")
        text = "".join(
            (f"{l.time.astimezone(timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%f')}000Z {l.text}" if stamp and l.time and not _has_stamp(l.text) else l.text) + "\n"
            for l in lines
        )
        return _limit(text, query)


def _has_stamp(text: str) -> bool:
    return bool(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", text))


def _limit(text: str, query: dict) -> str:
    limit = query.get("limitBytes")
    if limit and limit.isdigit():
        data = text.encode()[: int(limit)]
        return data.decode("utf-8", "ignore")
    return text


def _waiting(pod: dict, container: str) -> str | None:
    status = pod.get("status") or {}
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        if cs.get("name") == container:
            waiting = (cs.get("state") or {}).get("waiting")
            if waiting is not None and not (cs.get("restartCount") or 0):
                return waiting.get("reason") or "ContainerCreating"
    return None


class _HTTPServer(HTTPServer):
    """A bounded pool of handler threads fed by a queue of accepted connections.

    ThreadingHTTPServer starts a thread per connection: 300 idle half-open connections held 302 threads.
    Here a connection waits in the queue (a socket, no thread) until a worker is free; a worker drops a
    connection that sends nothing for ``Handler.timeout`` seconds, and answers with `Connection: close` while
    others wait, so kept-alive clients cannot starve new ones."""

    allow_reuse_address = True
    request_queue_size = 256  # the default 5 drops SYNs of concurrent clients: 1 s retransmits
    workers = 64

    def __init__(self, address, handler):
        super().__init__(address, handler)
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._pool: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()

    def waiting(self) -> bool:
        return not self._queue.empty()

    def process_request(self, request, client_address) -> None:
        """Queue the connection (never blocks the accept loop); start a worker while all are busy, up to
        ``workers``: an idle server holds no handler thread, a flood of connections at most ``workers``."""
        with self._lock:
            self._queue.put((request, client_address))
            if self._queue.qsize() > self._idle and len(self._pool) < self.workers:
                t = threading.Thread(target=self._work, name=f"serve-worker-{len(self._pool)}", daemon=True)
                self._pool.append(t)
                t.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            item = self._queue.get()
            with self._lock:
                self._idle -= 1
            if item is None:
                return
            request, client_address = item
            try:
                self.finish_request(request, client_address)
            except Exception:  # noqa: BLE001 - one bad connection never ends a worker
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        with self._lock:
            pool = list(self._pool)
        for _ in pool:
            self._queue.put(None)
        deadline = time.monotonic() + 2  # a worker inside a silent connection leaves within Handler.timeout
        for t in pool:
            t.join(timeout=max(0.0, deadline - time.monotonic()))

    def handle_error(self, request, client_address) -> None:
        """A client that gave up (timeout, Ctrl-C) is not a server error worth a traceback."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class Server:
    """A started server: `url`, `app` (store, faults, request log), `close()`. Usable as a context manager."""

    def __init__(self, app: App, port: int = 0, host: str = "127.0.0.1"):
        handler = type("BoundHandler", (Handler,), {"app": app})
        self.httpd = _HTTPServer((host, port), handler)
        self.app = app
        self.url = f"http://{host}:{self.httpd.server_address[1]}"
        self._thread: threading.Thread | None = None

    def start(self) -> "Server":
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
