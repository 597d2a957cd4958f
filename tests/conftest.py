"""Shared helpers: build Documents from text the way sources do, run the pipeline on a folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import build_facts, diagnose
from gpusleuth.model.document import Document
from gpusleuth.sources.loose import read_directory
from gpusleuth.sources.text import normalise, split_documents

FIXTURES = Path(__file__).parent / "fixtures"


def docs_from_text(text: str, artifact: str = "paste.txt") -> list[Document]:
    lines, _ = normalise(text)
    return split_documents(artifact, lines)


def doc_from_text(text: str, artifact: str = "paste.txt") -> Document:
    docs = docs_from_text(text, artifact)
    assert len(docs) == 1, f"expected one document, got {len(docs)}"
    return docs[0]


@pytest.fixture
def facts_of():
    """facts_of(path_or_dict) -> Facts for a folder, or for {name: text} written to a temp dir."""

    def build(files, tmp=None):
        import tempfile

        if isinstance(files, dict):
            tmpdir = Path(tempfile.mkdtemp(prefix="gpusleuth-test-"))
            for name, text in files.items():
                (tmpdir / name).parent.mkdir(parents=True, exist_ok=True)
                (tmpdir / name).write_text(text, encoding="utf-8")
            files = tmpdir
        return build_facts(read_directory(Path(files)))

    return build


@pytest.fixture
def diagnose_dir():
    def run(path):
        return diagnose(read_directory(Path(path)))

    return run
