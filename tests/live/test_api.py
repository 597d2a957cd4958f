"""The API client against a misbehaving server: retries, Retry-After, timeouts, dropped connections, paging."""

from __future__ import annotations

import asyncio
import time

import pytest

from gpusleuth.live.api import Api, ApiFailure, RetryPolicy
from gpusleuth.live.resources import BY_KIND
from gpusleuth.serve.faults import Fault
from tests.live.helpers import FAST, serving


def _run(coro_fn, url, **kw):
    async def main():
        api = Api.connect(server=url, **kw)
        try:
            return await coro_fn(api)
        finally:
            await api.aclose()

    return asyncio.run(main())


async def _pods(api, limit=5):
    names = []
    async for items, _ in api.list_pages("/api/v1/pods", limit=limit):
        names.extend(i["metadata"]["name"] for i in items)
    return names


def test_pagination_returns_every_item_once(small_cluster):
    with serving(small_cluster) as srv:
        names = _run(_pods, srv.url, retry=FAST)
        requests = [p for m, p, s in srv.app.log if p.startswith("/api/v1/pods")]
    total = len(small_cluster.items(BY_KIND["Pod"]))
    assert len(names) == total == len(set(names))
    assert len(requests) == -(-total // 5)
    assert all("limit=5" in p for p in requests) and sum("continue=" in p for p in requests) == len(requests) - 1


def test_429_waits_for_retry_after_then_succeeds(small_cluster):
    with serving(small_cluster, [Fault(path="^/api/v1/pods$", status=429, retry_after=0.3, times=1)]) as srv:
        start = time.monotonic()
        names = _run(_pods, srv.url, retry=RetryPolicy(attempts=3, base_delay=0.01))
        elapsed = time.monotonic() - start
        statuses = [s for m, p, s in srv.app.log if p.startswith("/api/v1/pods")]
    assert names and statuses[:2] == [429, 200]
    assert elapsed >= 0.3


@pytest.mark.parametrize("fault", [Fault(path="^/api/v1/pods$", status=500, times=2), Fault(path="^/api/v1/pods$", status=503, times=2),
                                   Fault(path="^/api/v1/pods$", drop=True, times=2)])
def test_transient_failures_are_retried(small_cluster, fault):
    with serving(small_cluster, [fault]) as srv:
        names = _run(_pods, srv.url, retry=FAST)
    assert names and fault.fired == 2


def test_persistent_500_fails_after_the_attempts_with_the_reason(small_cluster):
    with serving(small_cluster, [Fault(path="^/api/v1/nodes$", status=500, message="etcdserver: leader changed")]) as srv:
        with pytest.raises(ApiFailure) as err:
            _run(lambda api: api.get_json("/api/v1/nodes"), srv.url, retry=FAST)
    assert err.value.status == 500 and err.value.attempts == FAST.attempts
    assert "etcdserver: leader changed" in err.value.reason and "after 4 attempts" in err.value.reason


def test_403_is_not_retried(small_cluster):
    with serving(small_cluster, [Fault(path="/secrets$", status=403, message='secrets is forbidden: User "alice" cannot list resource "secrets"')]) as srv:
        with pytest.raises(ApiFailure) as err:
            _run(lambda api: api.get_json("/api/v1/namespaces/gpu-operator/secrets"), srv.url, retry=FAST)
        assert sum(1 for _, p, _ in srv.app.log if p.endswith("/secrets")) == 1
    assert err.value.status == 403 and 'cannot list resource "secrets"' in err.value.reason


def test_slow_response_times_out_per_request(small_cluster):
    with serving(small_cluster, [Fault(path="^/api/v1/nodes$", delay=1.0)]) as srv:
        start = time.monotonic()
        with pytest.raises(ApiFailure) as err:
            _run(lambda api: api.get_json("/api/v1/nodes"), srv.url, retry=RetryPolicy(attempts=2, base_delay=0.01), timeout=0.2)
        elapsed = time.monotonic() - start
    assert err.value.status == 0 and "timed out" in err.value.reason
    assert elapsed < 1.5  # two attempts of 0.2 s, not the server's 1 s each


def test_expired_continue_token_relists_without_duplicates(small_cluster):
    with serving(small_cluster, [Fault(path="^/api/v1/pods$", query="continue=", status=410, times=1, skip=1)]) as srv:
        names = _run(_pods, srv.url, retry=FAST)
    assert len(names) == len(set(names)) == sum(len(b) for r, b in small_cluster.objects.items() if r == "pods")


def test_no_configuration_is_a_clear_failure(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ApiFailure) as err:
        Api.connect()
    assert "no usable Kubernetes configuration" in err.value.reason


def test_kubeconfig_context_is_honoured(small_cluster, tmp_path):
    with serving(small_cluster) as srv:
        kc = tmp_path / "config"
        kc.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: other\n"
            f"clusters:\n- name: lab\n  cluster:\n    server: {srv.url}\n- name: nowhere\n  cluster:\n    server: http://127.0.0.1:9\n"
            "contexts:\n- name: lab\n  context: {cluster: lab, user: alice}\n- name: other\n  context: {cluster: nowhere, user: alice}\n"
            "users:\n- name: alice\n  user: {token: not-a-real-token}\n"
        )
        doc, resp = _run(lambda api: api.get_json("/version"), None, kubeconfig=str(kc), context="lab", retry=FAST)
    assert resp.status == 200 and doc["gitVersion"]
