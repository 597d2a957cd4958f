"""Collect once, diagnose anywhere: a source served as a cluster, collected (with node probes) and diagnosed
again, gives the same root causes as the source diagnosed directly. This exercises the whole live path:
serve's store built from the parsed source, the real client, probes, redaction, the bundle on disk, and the
same parsers and checks reading it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.live import probes
from gpusleuth.live.bundle import write_bundle
from gpusleuth.live.collect import Options
from gpusleuth.serve.faults import Fault
from gpusleuth.serve.store import Store
from gpusleuth.sources import example_names, open_source
from gpusleuth.sources.live import source_from_collection
from tests.live.helpers import run_collect, serving

SEED003 = Path(__file__).parents[1] / "fixtures" / "seed003"
SOURCES = [str(SEED003)] + [f"example:{n}" for n in example_names()]


def _roots(report) -> list[tuple]:
    return sorted((f.code, f.node, f.component) for f in report.root_causes)


@pytest.mark.parametrize("spec", SOURCES)
def test_serve_collect_diagnose_gives_the_same_root_causes(spec, tmp_path, monkeypatch):
    monkeypatch.setattr(probes, "POLL", 0.01)
    direct = diagnose(open_source(spec))
    assert direct.root_causes, f"{spec}: nothing to compare (no root cause found directly)"
    store = Store.from_source(open_source(spec))
    with serving(store, probe_namespace="gpusleuth") as srv:
        col = run_collect(srv.url, Options(node_probes=True, max_workers=4))
    # The only thing a served source may lack is a previous instance's log its pod status mentions.
    assert all("(previous)" in g["what"] and "not found" in g["why"] for g in col.manifest["gaps"]), col.manifest["gaps"]
    live = diagnose(source_from_collection(col, "live:served"))
    bundle = diagnose(open_source(str(write_bundle(col, tmp_path / "bundle.tar.gz"))))
    assert _roots(live) == _roots(direct), (spec, _roots(live), _roots(direct))
    assert _roots(bundle) == _roots(live)
    assert sorted((f.code, f.node or "") for f in live.findings) == sorted((f.code, f.node or "") for f in direct.findings)
    components = lambda r: sorted((c.name, c.node, c.state.value, c.blocked_by) for c in r.components)  # noqa: E731
    assert components(live) == components(direct) == components(bundle)


def test_forbidden_secrets_and_failing_logs_leave_the_diagnosis_and_name_exactly_what_is_missing(monkeypatch):
    monkeypatch.setattr(probes, "POLL", 0.01)
    spec = "example:peermem-race"
    if spec.split(":", 1)[1] not in example_names():
        pytest.skip("example peermem-race is not bundled")
    faulted = r"/pods/(nvidia-dcgm-exporter|gpu-feature-discovery)-[^/]+/log$"
    faults = [
        Fault(path=r"/secrets$", status=403, message='secrets is forbidden: User "viewer" cannot list resource "secrets" in API group ""'),
        Fault(path=faulted, status=500, message="proxy error from 127.0.0.1:6443 while dialing 10.0.0.7:10250, code 502"),
    ]
    store = Store.from_source(open_source(spec))
    with serving(store, probe_namespace="gpusleuth") as srv:
        clean = run_collect(srv.url, Options(node_probes=True))
    with serving(store, faults, probe_namespace="gpusleuth") as srv:
        col = run_collect(srv.url, Options(node_probes=True))
    report = diagnose(source_from_collection(col, "live:faulted"))
    assert _roots(report) == _roots(diagnose(open_source(spec)))
    reads = [a.record for a in clean.artifacts] + clean.manifest["requests"]  # logs with text, and empty ones
    lost_logs = [r for r in reads if r.get("container") and re.search(faulted, r["api"].split("?")[0])]
    assert lost_logs
    expected = {str(g) for g in clean.gaps}
    expected |= {f"Helm release secrets in {ns} (GET /api/v1/namespaces/{ns}/secrets?labelSelector=owner%3Dhelm): forbidden (HTTP 403): "
                 'secrets is forbidden: User "viewer" cannot list resource "secrets" in API group ""' for ns in col.manifest["operator_namespaces"]}
    expected |= {f"logs of {r['namespace']}/{r['pod']} container {r['container']}{' (previous)' if r['previous'] else ''}: HTTP 500 InternalError: "
                 "proxy error from 127.0.0.1:6443 while dialing 10.0.0.7:10250, code 502 (after 4 attempts)" for r in lost_logs}
    assert {str(g) for g in col.gaps} == expected  # the collection names exactly what it could not read, and why
    assert expected <= {str(g) for g in report.gaps}  # and the report says so (beside what analysis could not see)
