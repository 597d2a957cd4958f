"""The command line's start-up: what Python compiles at every start, compiled once and kept between runs.

Before a diagnosis reads a line, a run of the command line compiles ~540 regular expressions (~40 ms: the `re`
module's parser and code generator are written in Python) and the generated methods of ~170 dataclasses (~55 ms:
`dataclasses` writes each `__init__`, `__repr__`, `__eq__`... as source text and compiles it). Both are pure
functions of their input, so their results are kept in one file under the user's cache directory (the knowledge
tables' directory, `cachedir.cache_dir()`; `GPUSLEUTH_CACHE_DIR=` empty turns it off):

* a regular expression: the program `re` hands to its C engine (`_sre.compile`'s arguments: flags, the code as a
  list of integers, the groups), keyed on the pattern and its flags. The engine checks a program before it runs
  one; what it builds from a kept program is equal (`==`, which compares the code) to what `re` compiles.
* a dataclass method: the code object of the source text `dataclasses` generates, keyed on that text (so a
  changed class is a different key, never a stale hit). Loading a code object means running it, so the file is
  used only when it belongs to the user running gpusleuth and nobody else can write it (as Python trusts its own
  `__pycache__`).

Only what modules compile while they are imported (their top level and what it calls) is written down: a
pattern a function builds at run time, perhaps from what it read, is compiled as usual and never kept, so nothing
read from the input reaches the file. The file is keyed on the exact Python build (`sys.version`, the bytecode and regex-engine versions): another
Python never reads it. A run that compiled something new rewrites it atomically at exit, with what this run
used and what the file held (what it used alone once the file holds more than `MAX_ENTRIES` of either kind,
so input-made patterns cannot grow it for good). An unreadable, foreign or corrupt file is ignored and
rewritten; a directory that cannot be written only means compiling every time.

Only the command line's own process installs it (`install()`, from `cli.main`): a program that imports
gpusleuth keeps `re` and `dataclasses` as they are.
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib
from re import _compiler, _parser
from types import CodeType

import _sre

from gpusleuth.cachedir import cache_dir

_FORMAT = "gpusleuth-compiled-1"  # bump when what the file holds changes shape
MAX_ENTRIES = 5000  # of each kind; past it a rewrite keeps only what its run used


class _State:
    def __init__(self) -> None:
        self.loaded = False
        self.regex: dict = {}  # (pattern, flags) -> _sre.compile's arguments after the pattern
        self.code: dict = {}  # generated source text -> code object
        self.used_regex: set = set()
        self.used_code: set = set()
        self.new = 0


_state: _State | None = None
_saved: dict = {}  # what install() replaced, for uninstall()


def _key() -> str:
    return f"{_FORMAT}\0{sys.version}\0{sys.implementation.cache_tag}\0{marshal.version}\0{_sre.MAGIC}\0{_sre.CODESIZE}"


def cache_file() -> str | None:
    """The file for this Python build, or None when caching is off. Found with `os` alone: the first compile may
    come while a module such as pathlib is half imported."""
    where = cache_dir()
    if where is None:
        return None
    build = format(zlib.crc32(sys.version.encode()), "08x")  # two builds of one Python do not take turns
    return os.path.join(where, f"compiled-{sys.implementation.cache_tag}-{build}.marshal")


def _trusted(fd: int) -> bool:
    """The file is the running user's and only they can write it: loading its code objects runs them."""
    st = os.fstat(fd)
    getuid = getattr(os, "getuid", None)
    return getuid is None or (st.st_uid == getuid() and not st.st_mode & 0o022)


def _load(state: _State) -> None:
    state.loaded = True
    path = cache_file()
    if path is None:
        return
    try:
        with open(path, "rb") as fh:
            if not _trusted(fh.fileno()):
                return
            held = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return
    if (isinstance(held, tuple) and len(held) == 3 and held[0] == _key() and isinstance(held[1], dict)
            and isinstance(held[2], dict)):
        state.regex, state.code = held[1], held[2]


def _importing() -> bool:
    """Whether a module is being imported (its top level, or what that calls): only what modules compile as they
    are imported is kept, never a pattern a function makes at run time from what it read."""
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        f = f.f_back
    return False


def _regex_compile(p, flags=0):
    """re._compiler.compile, with the program kept: the same steps, and the same arguments to the engine."""
    state = _state
    if state is None or not isinstance(p, (str, bytes)) or flags & _compiler.SRE_FLAG_DEBUG:
        return _saved["compile"](p, flags)
    if not state.loaded:
        _load(state)
    key = (p, int(flags))
    args = state.regex.get(key)
    if args is not None:
        try:
            compiled = _sre.compile(p, *args)
        except (RuntimeError, TypeError, ValueError):  # a program the engine refuses: compile it afresh
            state.regex.pop(key, None)
        else:
            state.used_regex.add(key)
            return compiled
    if not _importing():
        return _saved["compile"](p, flags)  # made at run time, maybe from the input: never written down
    parsed = _parser.parse(p, flags)
    code = _compiler._code(parsed, flags)
    groupindex = parsed.state.groupdict
    indexgroup = [None] * parsed.state.groups
    for k, i in groupindex.items():
        indexgroup[i] = k
    # plain ints (the opcodes are an int subclass marshal does not write): the engine reads the same numbers
    args = (int(flags | parsed.state.flags), [int(c) for c in code], parsed.state.groups - 1, dict(groupindex),
            tuple(indexgroup))
    compiled = _sre.compile(p, *args)
    state.regex[key] = args
    state.used_regex.add(key)
    state.new += 1
    return compiled


def _dataclass_exec(source, globals=None, locals=None):
    """exec for dataclasses' generated methods: the compiled source comes from the file when it was seen before."""
    state = _state
    if state is None or not isinstance(source, str):
        return exec(source, globals, locals)
    if not state.loaded:
        _load(state)
    code = state.code.get(source)
    if type(code) is not CodeType:  # not seen before (or not a code object: compiled afresh all the same)
        if not _importing():
            return exec(source, globals, locals)
        # flags=0, dont_inherit: as `exec` compiles it inside dataclasses, which has no __future__ import
        code = compile(source, "<string>", "exec", 0, True)
        state.code[source] = code
        state.new += 1
    state.used_code.add(source)
    return exec(code, globals, locals)


def install() -> None:
    """Route `re`'s and `dataclasses`' compiling through the kept file, and write it at exit when the run
    compiled something new. Only on CPython 3.11 to 3.13, whose `re._compiler.compile` the copy above follows."""
    global _state
    if _state is not None or sys.implementation.name != "cpython" or not (3, 11) <= sys.version_info[:2] <= (3, 13):
        return
    import atexit
    import dataclasses

    if os.environ.get("GPUSLEUTH_CACHE_DIR", "x").strip() == "":  # turned off (the file's folder is found at first use)
        return
    _state = _State()
    _saved["compile"] = _compiler.compile
    _compiler.compile = _regex_compile
    dataclasses.exec = _dataclass_exec  # a module global shadows the builtin for that module only
    atexit.register(save)


def uninstall() -> None:
    """Back to `re`'s and `dataclasses`' own compiling (for tests)."""
    global _state
    import dataclasses

    if _state is None:
        return
    _compiler.compile = _saved.pop("compile")
    dataclasses.__dict__.pop("exec", None)
    _state = None


def save() -> None:
    """Write the file when this run compiled something it did not hold."""
    state = _state
    if state is None or not state.new:
        return
    path = cache_file()
    if path is None:
        return
    regex, code = state.regex, state.code
    if len(regex) > MAX_ENTRIES:
        regex = {k: v for k, v in regex.items() if k in state.used_regex}
    if len(code) > MAX_ENTRIES:
        code = {k: v for k, v in code.items() if k in state.used_code}
    try:
        blob = marshal.dumps((_key(), regex, code))
    except ValueError:  # something marshal cannot hold: no file
        return
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        os.makedirs(folder, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)  # readers see the old file or the new one, never half of one
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return
    state.new = 0
