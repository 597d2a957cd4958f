"""The check docs are generated from the code; a drift means someone forgot to regenerate them."""

from pathlib import Path

from gpusleuth.checks import all_checks
from gpusleuth.report.catalogue import generate

DOCS = Path(__file__).parent.parent / "docs" / "checks"


def test_generated_check_docs_are_committed_and_current():
    files = generate()
    for name, text in files.items():
        path = DOCS / name
        assert path.is_file(), f"docs/checks/{name} missing: run python -m gpusleuth.report.catalogue docs/checks"
        assert path.read_text(encoding="utf-8") == text, f"docs/checks/{name} is stale: regenerate it"


def test_every_check_has_docs_and_fixtures():
    tests = Path(__file__).parent / "checks"
    for c in all_checks():
        assert c.what and c.why and c.fix, c.code
        assert list(tests.glob(f"test_{c.code}*.py")) or c.code in _covered(tests), f"{c.code} has no pass/fail fixture test in tests/checks/"


def _covered(tests: Path) -> set[str]:
    """Codes a shared fixture module declares it covers (`COVERS = (...)`: one mechanism, one code per layer)."""
    import re

    out: set[str] = set()
    for path in tests.glob("test_*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("COVERS = "):
                out |= set(re.findall(r'"([A-Z]{2}\d{3})"', line))
    return out
