"""The command line keeps the regular expressions' programs and the dataclass methods its modules compile as they
are imported in one file (compilecache.py): what it builds from the file is what Python compiles, the report is
the same with the file, without it and while writing it, nothing compiled at run time is written, and a file that
is not the user's own, garbled or from another Python is not read."""

from __future__ import annotations

import importlib
import marshal
import os
import re
import subprocess
import sys
from pathlib import Path
from re import _compiler

import _sre
import pytest
from click.testing import CliRunner

from gpusleuth import compilecache as C

SRC = Path(__file__).resolve().parents[1] / "src"
ORIGINAL = _compiler.compile


def _run(cache: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC), "GPUSLEUTH_CACHE_DIR": cache, "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "gpusleuth", "diagnose", "example:peermem-race", "--no-pager", *args],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def cached(tmp_path_factory):
    """Two runs sharing a cache directory (the first writes the file, the second reads it) and one with none."""
    cache = tmp_path_factory.mktemp("cache")
    first, second, off = _run(str(cache)), _run(str(cache)), _run("")
    return cache, first, second, off


def _file(cache: Path) -> Path:
    (path,) = cache.glob(f"compiled-{sys.implementation.cache_tag}-*.marshal")
    return path


def _held(cache: Path):
    return marshal.loads(_file(cache).read_bytes())


def test_reports_are_the_same_with_the_file_without_it_and_while_writing_it(cached):
    cache, first, second, off = cached
    assert off.returncode == first.returncode == second.returncode == 1, off.stderr
    assert first.stdout == second.stdout == off.stdout and "nvidia_peermem" in off.stdout
    _, regex, code = _held(cache)
    # the example's imports compile ~400 patterns; dataclasses compiles one source per method before Python 3.13
    # (~850) and one per class from 3.13 on (~170)
    assert len(regex) > 300 and len(code) > (500 if sys.version_info < (3, 13) else 100)


def test_every_kept_regex_program_is_the_one_re_compiles(cached):
    """Pattern equality compares flags, groups and the program itself, instruction by instruction."""
    _, regex, _ = _held(cached[0])
    for (pattern, flags), args in regex.items():
        assert _sre.compile(pattern, *args) == ORIGINAL(pattern, flags), pattern


def test_every_kept_dataclass_method_is_the_one_dataclasses_compiles(cached):
    _, _, code = _held(cached[0])
    for source, compiled in code.items():
        assert compiled == compile(source, "<string>", "exec", 0, True), source


def test_a_second_run_compiles_nothing_new_and_leaves_the_file_alone(cached, tmp_path):
    cache = cached[0]
    path = _file(cache)
    before = path.stat().st_mtime_ns
    assert _run(str(cache)).returncode == 1
    assert path.stat().st_mtime_ns == before  # the example's patterns are the same every run
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)


@pytest.fixture
def installed(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSLEUTH_CACHE_DIR", str(tmp_path))
    C.install()
    assert C._state is not None
    yield tmp_path
    C.uninstall()
    assert _compiler.compile is ORIGINAL


def _imported(where: Path, *patterns: str) -> None:
    """Import a new module that compiles these patterns at its top level."""
    name = f"_compiles_{abs(hash(patterns))}"
    (where / f"{name}.py").write_text("import re\n" + "".join(f"re.compile({p!r})\n" for p in patterns))
    sys.path.insert(0, str(where))
    try:
        importlib.import_module(name)
    finally:
        sys.path.remove(str(where))
        sys.modules.pop(name, None)


def test_only_what_an_import_compiles_is_written(installed, tmp_path_factory):
    _imported(tmp_path_factory.mktemp("mod"), r"at import (\d+) only")
    assert re.compile(r"at run time (\d+) from input").match("at run time 7 from input")
    import dataclasses

    made = dataclasses.make_dataclass("MadeAtRunTime", [("from_input_field", int)])
    assert made(3) == made(3) and repr(made(3)) == "MadeAtRunTime(from_input_field=3)"
    C.save()
    _, regex, code = _held(installed)
    assert (r"at import (\d+) only", 0) in regex
    assert not [p for p, _ in regex if "from input" in p]
    assert not [t for t in code if "from_input_field" in t]


def _write(path: Path, held, mode: int = 0o600) -> None:
    path.write_bytes(marshal.dumps(held))
    path.chmod(mode)


def test_a_file_others_can_write_or_from_another_python_is_not_read(installed):
    path = Path(C.cache_file())
    source = "def __create_fn__():\n def f():\n  return 1\n return f"
    planted = compile("def __create_fn__():\n def f():\n  return 2\n return f", "<string>", "exec")
    for mode, key, read in ((0o600, C._key(), True), (0o620, C._key(), False), (0o602, C._key(), False),
                            (0o600, "another python", False)):
        _write(path, (key, {}, {source: planted}), mode)
        state = C._State()
        C._load(state)
        assert (source in state.code) is read, (oct(mode), key)


@pytest.mark.parametrize("blob", [b"", b"garbage", marshal.dumps(["a", "list"]), marshal.dumps((1, 2))])
def test_a_garbled_file_is_compiled_around_and_rewritten(installed, blob):
    path = Path(C.cache_file())
    path.write_bytes(blob)
    path.chmod(0o600)
    pattern = r"garbled-(?P<n>\d+) case \w+"
    _imported(installed, pattern + str(len(blob)))
    assert re.compile(pattern + str(len(blob))).match("garbled-12 case x" + str(len(blob))).group("n") == "12"
    C.save()
    key, regex, _ = _held(installed)
    assert key == C._key() and (pattern + str(len(blob)), 0) in regex


def test_a_folder_that_cannot_be_written_only_means_compiling(installed, monkeypatch):
    (installed / "blocked").write_text("a file where the folder would be")
    monkeypatch.setenv("GPUSLEUTH_CACHE_DIR", str(installed / "blocked" / "below"))
    _imported(installed, r"unwritable \d+ folder")
    C.save()  # no error
    assert not (installed / "blocked").is_dir()


def test_a_file_past_max_entries_keeps_what_its_run_used(installed, monkeypatch):
    monkeypatch.setattr(C, "MAX_ENTRIES", 3)
    _imported(installed, *(rf"first run {i}\d" for i in range(6)))
    C.save()
    assert len(_held(installed)[1]) == 6  # written whole: it was over the limit only after this run
    C.uninstall()
    C.install()
    _imported(installed, *(rf"second run {i}\w" for i in range(2)))
    C.save()
    _, regex, _ = _held(installed)
    assert {p for p, _ in regex} == {r"second run 0\w", r"second run 1\w"}


def test_an_invalid_pattern_raises_as_re_does(installed):
    with pytest.raises(re.error, match="missing \\)"):
        _imported(installed, r"(unclosed kept cache")


def test_a_program_calling_the_commands_keeps_re_and_dataclasses_as_they_are():
    import dataclasses

    result = CliRunner().invoke(__import__("gpusleuth.cli", fromlist=["cli"]).cli,
                                ["diagnose", "example:peermem-race", "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    assert _compiler.compile is ORIGINAL and "exec" not in vars(dataclasses) and C._state is None


def test_a_kept_method_that_is_not_code_is_compiled_afresh_not_run(installed):
    source = "def __create_fn__():\n def f():\n  return 1\n return f"
    _write(Path(C.cache_file()), (C._key(), {}, {source: "raise RuntimeError('ran what the file held')"}))
    ns: dict = {}
    C._dataclass_exec(source, None, ns)
    assert ns["__create_fn__"]()() == 1
