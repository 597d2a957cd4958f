"""The parsed knowledge tables are cached in one file keyed on the TOML files' bytes (knowledge/__init__.py): the
cache gives exactly what parsing gives, is rebuilt when a table changes, and is never trusted when it is
unreadable, stale or from another version; a cache directory that cannot be written only costs the parse."""

from __future__ import annotations

import marshal
import shutil
import tomllib

import pytest

import gpusleuth.knowledge as K

REAL = K.KNOWLEDGE


@pytest.fixture
def knowledge(tmp_path, monkeypatch):
    """A copy of the knowledge tables to change, and a private cache directory."""
    copy = tmp_path / "install" / "knowledge"
    for sub in K.FOLDERS:
        (copy / sub).mkdir(parents=True, exist_ok=True)
        for f in (REAL / sub).glob("*.toml"):
            shutil.copy(f, copy / sub / f.name)
    monkeypatch.setattr(K, "KNOWLEDGE", copy)
    monkeypatch.setenv("GPUSLEUTH_CACHE_DIR", str(tmp_path / "cache"))
    K.tables.cache_clear()
    yield copy
    K.tables.cache_clear()  # the next user reads the real tables again


def _parsed_by_tomllib(root) -> dict:
    return {str(p.relative_to(root)): tomllib.loads(p.read_text(encoding="utf-8"))
            for sub in K.FOLDERS for p in sorted((root / sub).glob("*.toml"))}


def _fresh() -> dict:
    K.tables.cache_clear()
    return K.tables()


def _no_parsing(monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("parsed a TOML file although the cache was valid")
    monkeypatch.setattr(tomllib, "loads", refuse)


def test_a_cold_run_writes_the_cache_and_a_warm_one_reads_it_without_parsing(knowledge, monkeypatch):
    expected = _parsed_by_tomllib(knowledge)
    assert K.tables() == expected
    cache = K.cache_file()
    assert cache is not None and cache.is_file()
    _no_parsing(monkeypatch)
    assert _fresh() == expected
    assert K.table("xid") == expected["xid.toml"]
    assert K.folder("messages") == {k[len("messages/"):-5]: v for k, v in expected.items() if k.startswith("messages/")}


def test_a_changed_table_is_read_anew_and_the_cache_rewritten(knowledge):
    K.tables()
    cache = K.cache_file()
    before = cache.read_bytes()
    path = knowledge / "compute_capability.toml"
    path.write_text(path.read_text(encoding="utf-8") + '\n[changed_here]\nvalue = "new"\n', encoding="utf-8")
    assert _fresh()["compute_capability.toml"]["changed_here"] == {"value": "new"}
    assert cache.read_bytes() != before
    assert _fresh()["compute_capability.toml"]["changed_here"] == {"value": "new"}  # and the new cache holds it


def test_an_added_or_removed_table_is_seen(knowledge):
    K.tables()
    (knowledge / "messages" / "zz-new.toml").write_text('[source]\ncomponent = "x"\n', encoding="utf-8")
    assert "messages/zz-new.toml" in _fresh()
    (knowledge / "messages" / "zz-new.toml").unlink()
    assert "messages/zz-new.toml" not in _fresh()


@pytest.mark.parametrize("content", [b"", b"not marshal at all \x00\xff", b"\xe3garbage",
                                     marshal.dumps(("gpusleuth-knowledge-1", "another key", {"xid.toml": {}})),
                                     marshal.dumps(["a list", "not", "the", "tuple"]),
                                     marshal.dumps(("another format", "k", {}))])
def test_an_unreadable_foreign_or_stale_cache_file_is_never_trusted(knowledge, monkeypatch, content):
    expected = _parsed_by_tomllib(knowledge)
    cache = K.cache_file()
    cache.parent.mkdir(parents=True)
    cache.write_bytes(content)
    assert _fresh() == expected
    _no_parsing(monkeypatch)  # and it was rewritten with a valid one
    assert _fresh() == expected


def test_a_truncated_cache_file_is_parsed_around(knowledge):
    expected = _parsed_by_tomllib(knowledge)
    K.tables()
    cache = K.cache_file()
    cache.write_bytes(cache.read_bytes()[: cache.stat().st_size // 2])
    assert _fresh() == expected


def test_the_cache_is_keyed_on_the_version(knowledge, monkeypatch):
    K.tables()
    monkeypatch.setattr(K, "__version__", "99.0.0")
    calls = []
    real = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: calls.append(1) or real(text))
    _fresh()
    assert calls  # another version parses again


def test_two_pythons_on_one_install_keep_a_file_each(knowledge, monkeypatch):
    """Else a checkout run by two Pythons would have each rewrite the other's file at every start."""
    import sys

    mine = K.cache_file()
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    theirs = K.cache_file()
    assert theirs != mine and theirs.parent == mine.parent


def test_an_unwritable_cache_directory_only_costs_the_parse(knowledge, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    monkeypatch.setenv("GPUSLEUTH_CACHE_DIR", str(blocker / "cache"))  # mkdir fails, whoever runs the test
    expected = _parsed_by_tomllib(knowledge)
    assert K.tables() == expected
    assert _fresh() == expected
    assert blocker.read_text(encoding="utf-8") == "not a directory"


def test_a_read_only_install_is_never_written(knowledge):
    before = sorted(p.relative_to(knowledge) for p in knowledge.rglob("*"))
    K.tables()
    assert sorted(p.relative_to(knowledge) for p in knowledge.rglob("*")) == before
    assert not K.cache_file().is_relative_to(knowledge.parent)


def test_an_empty_cache_directory_setting_turns_the_cache_off(knowledge, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSLEUTH_CACHE_DIR", "")
    assert K.cache_file() is None
    assert K.tables() == _parsed_by_tomllib(knowledge)
    assert not (tmp_path / "cache").exists()


def test_the_default_cache_directory_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("GPUSLEUTH_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert K.cache_dir() == tmp_path / "gpusleuth"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert K.cache_dir() == tmp_path / "home" / ".cache" / "gpusleuth"
    monkeypatch.setattr(K.os.path, "expanduser", lambda path: path)  # no HOME and no passwd entry
    assert K.cache_dir() is None and K.cache_file() is None


def test_a_table_that_does_not_parse_fails_where_it_is_read_and_is_not_cached(knowledge):
    (knowledge / "ordering.toml").write_text("this is = = not toml\n", encoding="utf-8")
    assert K.table("xid") == _parsed_by_tomllib(REAL)["xid.toml"]  # the others still load
    with pytest.raises(tomllib.TOMLDecodeError):
        K.table("ordering")
    assert not K.cache_file().exists()


def test_an_unknown_table_is_an_error():
    with pytest.raises(FileNotFoundError):
        K.table("no-such-table")


def test_the_real_tables_are_what_tomllib_gives():
    assert K.tables() == _parsed_by_tomllib(REAL)


def test_caches_of_other_installs_left_unwritten_for_a_month_are_removed_when_this_one_is_written(knowledge, tmp_path):
    import os
    import time

    where = tmp_path / "cache"
    where.mkdir()
    old, recent, other = where / "knowledge-0123456789ab.marshal", where / "knowledge-ba9876543210.marshal", where / "notes.txt"
    for f in (old, recent, other):
        f.write_bytes(b"x")
    month_ago = time.time() - K.STALE_AFTER_S - 60
    os.utime(old, (month_ago, month_ago))
    os.utime(other, (month_ago, month_ago))
    _fresh()
    assert K.cache_file().is_file() and recent.is_file() and other.is_file()
    assert not old.exists()
