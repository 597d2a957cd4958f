"""One connection to the Kubernetes API: lightkube for configuration and authentication, raw JSON for data.

lightkube resolves the kubeconfig context (or the in-cluster service account), client certificates, bearer
tokens, token files and exec plugins, and builds the HTTP client. Requests are then made by path and
decoded as plain JSON, because a bundle must hold exactly what the API said (typed models drop fields
they do not know) and because pod logs need ``previous`` and ``limitBytes``, which lightkube's ``log()``
does not offer.

Every GET has a per-request timeout and is retried on 429 (honouring Retry-After), 5xx and dropped
connections, with capped exponential backoff. What still fails is an ``ApiFailure`` carrying the HTTP
status and the server's reason, which the collector turns into a gap naming the resource.
"""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, AsyncIterator

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 30.0  # seconds; a server asking for longer is treated as failing


class ApiFailure(Exception):
    """A request that failed for good: status is the HTTP status, 0 for transport errors and timeouts."""

    def __init__(self, status: int, reason: str, path: str, attempts: int = 1):
        super().__init__(f"{path}: {reason}")
        self.status = status
        self.reason = reason
        self.path = path
        self.attempts = attempts


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    attempts: int
    seconds: float
    date: str | None = None  # the server's Date header: the cluster's clock

    def server_time(self) -> datetime | None:
        try:
            return parsedate_to_datetime(self.date) if self.date else None
        except (TypeError, ValueError):
            return None


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # total tries per request
    base_delay: float = 0.25
    max_delay: float = 8.0

    def delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), MAX_RETRY_AFTER)
            except ValueError:
                pass  # an HTTP date: fall back to our own backoff
        return min(self.max_delay, self.base_delay * (2 ** (attempt - 1))) * (0.5 + random.random() / 2)


def _reason(status: int, body: bytes) -> str:
    """"HTTP 403 Forbidden: <the API's Status message>", or the first line of a non-Status body."""
    try:
        doc = json.loads(body)
        if isinstance(doc, dict) and doc.get("message"):
            return f"HTTP {status} {doc.get('reason') or ''}".rstrip() + f": {doc['message']}"
    except ValueError:
        pass
    text = body.decode("utf-8", "replace").strip().splitlines()
    return f"HTTP {status}" + (f": {text[0][:200]}" if text else "")


class Api:
    """An authenticated async HTTP client for one cluster, with retries and a concurrency bound."""

    def __init__(self, http, server: str, context: str | None, *, concurrency: int = 16, retry: RetryPolicy = RetryPolicy()):
        self._http = http
        self.server = server
        self.context = context
        self.retry = retry
        self._sem = asyncio.Semaphore(concurrency)
        self.requests = 0  # every HTTP request made, retries included

    @classmethod
    def connect(
        cls,
        *,
        kubeconfig: str | None = None,
        context: str | None = None,
        server: str | None = None,
        timeout: float = 15.0,
        concurrency: int = 16,
        retry: RetryPolicy = RetryPolicy(),
    ) -> "Api":
        """Resolve the configuration the way kubectl users expect: --server, --kubeconfig/--context,
        in-cluster service account, $KUBECONFIG, ~/.kube/config."""
        import httpx2
        from lightkube.config.client_adapter import ConnectionParams
        from lightkube.config.kubeconfig import KubeConfig
        from lightkube.core.exceptions import ConfigError

        import os

        try:
            if server:
                config = KubeConfig.from_server(server).get()
            elif kubeconfig:
                config = _kubeconfig_get(kubeconfig, context)
            elif context:
                config = _kubeconfig_get(os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0], context)
            else:
                try:
                    config = KubeConfig.from_service_account().get()
                except ConfigError:
                    config = _kubeconfig_get(os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0], None)
        except (ConfigError, OSError, KeyError, ValueError) as exc:
            raise ApiFailure(0, f"no usable Kubernetes configuration: {exc}", "kubeconfig") from None
        if config is None:
            raise ApiFailure(0, "no usable Kubernetes configuration (no current context)", "kubeconfig")
        if config.user is None:  # lightkube insists on a user; an anonymous one is what kubectl sends
            from lightkube.config.models import User

            config = config._replace(user=User())
        params = ConnectionParams(timeout=httpx2.Timeout(timeout)).httpx_params(config)
        limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        http = httpx2.AsyncClient(**params, limits=limits)
        return cls(http, config.cluster.server, config.context_name, concurrency=concurrency, retry=retry)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def request(self, method: str, path: str, params: dict | None = None, body: Any = None, retry: bool = True) -> Response:
        """One API call, retried when the failure is transient. Raises ApiFailure otherwise."""
        import httpx2

        loop = asyncio.get_running_loop()
        params = {k: v for k, v in (params or {}).items() if v is not None}
        content = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if content else None
        attempt = 0
        start = loop.time()
        while True:
            attempt += 1
            self.requests += 1
            try:
                async with self._sem:
                    resp = await self._http.request(method, path, params=params, content=content, headers=headers)
            except httpx2.TimeoutException:
                status, reason, wait_hint = 0, "timed out", None
            except httpx2.TransportError as exc:
                status, reason, wait_hint = 0, f"connection failed: {type(exc).__name__}: {exc}".rstrip(": "), None
            else:
                if resp.status_code < 400:
                    return Response(resp.status_code, resp.content, attempt, loop.time() - start, resp.headers.get("Date"))
                status, reason, wait_hint = resp.status_code, _reason(resp.status_code, resp.content), resp.headers.get("Retry-After")
                if status not in RETRY_STATUSES:
                    raise ApiFailure(status, reason, path, attempt)
            if not retry or attempt >= self.retry.attempts:
                raise ApiFailure(status, reason + (f" (after {attempt} attempts)" if attempt > 1 else ""), path, attempt)
            await asyncio.sleep(self.retry.delay(attempt, wait_hint))

    async def get_json(self, path: str, params: dict | None = None) -> tuple[dict, Response]:
        resp = await self.request("GET", path, params)
        try:
            return json.loads(resp.body), resp
        except ValueError:
            raise ApiFailure(resp.status, "response is not JSON", path, resp.attempts) from None

    async def list_pages(self, path: str, params: dict | None = None, limit: int = 500) -> AsyncIterator[tuple[list[dict], Response]]:
        """Items of a list, page by page (limit/continue). When a continue token has expired (410), the
        list is read again from the start, as client-go's pager does, skipping what was already yielded."""
        params = {**(params or {}), "limit": limit}
        token: str | None = None
        seen = skip = 0
        restarted = False
        while True:
            try:
                doc, resp = await self.get_json(path, {**params, "continue": token})
            except ApiFailure as exc:
                if exc.status != 410 or not token or restarted:
                    raise
                restarted, token, skip = True, None, seen
                continue
            items = doc.get("items") or []
            if skip:
                drop = min(skip, len(items))
                items, skip = items[drop:], skip - drop
            seen += len(items)
            yield items, resp
            token = (doc.get("metadata") or {}).get("continue")
            if not token:
                return


def _kubeconfig_get(path: str, context: str | None):
    """lightkube's SingleConfig from a kubeconfig file; anything wrong with the file is one ValueError line
    naming it (malformed YAML, binary, not a mapping, entries missing or of the wrong shape), never a parser
    traceback."""
    import yaml
    from lightkube.config.kubeconfig import KubeConfig
    from lightkube.core.exceptions import ConfigError

    from gpusleuth.parsers.yamlsafe import AliasBomb, safe_load

    p = Path(path).expanduser()
    if not p.is_file():
        raise ValueError(f"{p}: no such kubeconfig file")
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{p}: not a kubeconfig (binary, not UTF-8 text)") from None
    except OSError as exc:
        raise ValueError(f"{p}: cannot read the kubeconfig: {exc.strerror or exc}") from None
    try:
        data = safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValueError(f"{p}: not a kubeconfig: YAML error{where}: {problem}") from None
    except AliasBomb as exc:
        raise ValueError(f"{p}: not a kubeconfig: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("clusters"), list) or not isinstance(data.get("contexts"), list):
        raise ValueError(f"{p}: not a kubeconfig (a YAML mapping with `clusters` and `contexts` lists expected)")
    try:
        return KubeConfig.from_dict(data, fname=p).get(context)
    except ConfigError as exc:
        raise ValueError(f"{p}: {exc}") from None
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        what = f"missing entry {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{p}: not a usable kubeconfig ({what})") from None
