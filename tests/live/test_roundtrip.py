"""Collect once, diagnose anywhere: a source served as a cluster, collected (with node probes) and diagnosed
again, gives the same root causes as the source diagnosed directly. This exercises the whole live path:
serve's store built from the parsed source, the real client, probes, redaction, the bundle on disk, and the
same parsers and checks reading it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.live import probes
from gpusleuth.live.bundle import write_bundle
from gpusleuth.live.collect import Options
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
    assert sorted((f.code, f.node) for f in live.findings) == sorted((f.code, f.node) for f in direct.findings)
    components = lambda r: sorted((c.name, c.node, c.state.value, c.blocked_by) for c in r.components)  # noqa: E731
    assert components(live) == components(direct) == components(bundle)
