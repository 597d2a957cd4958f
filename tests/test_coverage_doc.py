"""docs/coverage.md is generated from the checks: every layer has failure classes, each with its sources."""

from pathlib import Path

from gpusleuth.checks import all_checks
from gpusleuth.model.layers import Layer
from gpusleuth.report.catalogue import coverage

DOC = Path(__file__).parent.parent / "docs" / "coverage.md"


def test_coverage_doc_is_committed_and_current():
    assert DOC.is_file(), "docs/coverage.md missing: run python -m gpusleuth.report.catalogue docs/checks"
    assert DOC.read_text(encoding="utf-8") == coverage(all_checks()), "docs/coverage.md is stale: regenerate it"


def test_every_layer_has_three_documented_checks():
    checks = all_checks()
    for layer in Layer:
        mine = [c for c in checks if c.layer == layer]
        assert len(mine) >= 3, f"{layer.value} has {len(mine)} checks"
        assert all(c.what and c.why and c.fix for c in mine)
