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


def _links(markdown: str) -> list[str]:
    """Every link target in Markdown: [label](target) and bare http(s) URLs outside link syntax."""
    import re

    targets = re.findall(r"\]\(([^)\s]*(?:\s[^)]*)?)\)", markdown)
    bare = re.sub(r"\[[^\]]*\]\([^)]*\)", "", markdown)
    return targets + re.findall(r"https?://\S+", bare)


def test_every_generated_link_is_a_bare_well_formed_url():
    import re
    from urllib.parse import urlsplit

    from gpusleuth.report.catalogue import generate

    docs = {"coverage.md": coverage(all_checks()), **generate()}
    seen = 0
    for name, text in docs.items():
        for target in _links(text):
            if not target.startswith("http"):
                assert re.fullmatch(r"(checks/)?[A-Z]{2}\d{3}\.md", target), f"{name}: odd relative link {target!r}"
                continue
            seen += 1
            parts = urlsplit(target)
            assert parts.scheme in ("http", "https") and "." in parts.netloc, f"{name}: {target!r}"
            assert not re.search(r"[\s()<>|\"'`]", target), f"{name}: the link {target!r} holds more than a URL"
            assert not target.endswith((".", ",", ";", ":")), f"{name}: {target!r} ends in punctuation"
    assert seen > 100


def test_reference_descriptions_stay_outside_the_url():
    from gpusleuth.report.catalogue import reference_links

    hw001 = next(c for c in all_checks() if c.code == "HW001")
    links = dict((url, label) for url, label in reference_links(hw001) if url)
    assert "https://github.com/NVIDIA/NVSentinel/issues/155" in links
    assert "multi-line" in links["https://github.com/NVIDIA/NVSentinel/issues/155"]


def test_coverage_cites_public_sources_only():
    from gpusleuth.report.catalogue import _INTERNAL

    assert not _INTERNAL.search(coverage(all_checks()))
