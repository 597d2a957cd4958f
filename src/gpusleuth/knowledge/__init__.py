"""Knowledge as data: TOML tables next to this file, loaded once, read by checks and views.

Tables: operands.toml (operand dependency graph), signatures.toml (log-line signatures), xid.toml,
driver_branches.toml, mig_profiles.toml, cuda_errors.toml (every CUDA error code), compute_capability.toml (GPU
model -> compute capability), and the folders messages/ (the message catalogue) and incidents/ (incidents seen
before). Each file's header says what it holds and how to update it.

Parsing all of them takes ~100 ms with tomllib, more than the rest of a small diagnosis. So the parsed tables are
kept in one file under the user's cache directory (`$GPUSLEUTH_CACHE_DIR`, else `$XDG_CACHE_HOME/gpusleuth`, else
`~/.cache/gpusleuth`; `GPUSLEUTH_CACHE_DIR=` empty turns it off), written with `marshal` (plain data only:
loading it runs no code) and keyed on the gpusleuth version, the Python version and a hash of every TOML file's
bytes. Each run reads the TOML files' bytes, hashes them (~2 ms) and uses the cache only when its key is that
hash; a stale, unreadable or foreign cache file is parsed around and rewritten, and a cache directory that cannot
be written (a read-only home, a sandbox) only means parsing every time.
"""

from __future__ import annotations

import marshal
import os
import sys
import time
from functools import cache
from pathlib import Path

try:
    from _blake2 import blake2b  # hashlib's blake2b, without the ~14 ms hashlib spends setting up OpenSSL
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

from gpusleuth import __version__

KNOWLEDGE = Path(__file__).parent
FOLDERS = ("", "messages", "incidents")  # where the TOML tables are, relative to KNOWLEDGE
_FORMAT = "gpusleuth-knowledge-1"  # bump when what the cache file holds changes shape


def table(name: str) -> dict:
    """The parsed TOML table knowledge/<name>.toml."""
    return toml(f"{name}.toml")


def toml(relpath: str) -> dict:
    """The parsed TOML file knowledge/<relpath> ("signatures.toml", "messages/gpu-operator.toml"): one dict per
    file per process, shared by every caller (do not change it)."""
    parsed = tables()
    if relpath not in parsed:
        raise FileNotFoundError(f"no knowledge table {relpath}")
    data = parsed[relpath]
    if data is None:  # it did not parse: parse it again, so that its error is raised where the table is read
        import tomllib

        return tomllib.loads((KNOWLEDGE / relpath).read_text(encoding="utf-8"))
    return data


def folder(name: str) -> dict[str, dict]:
    """Every table of a knowledge folder ("messages", "incidents"): {file name without .toml: parsed}, by name."""
    prefix = f"{name}/"
    return {rel[len(prefix):-5]: toml(rel) for rel in sorted(tables()) if rel.startswith(prefix)}


def _files() -> dict[str, bytes]:
    out = {}
    for sub in FOLDERS:
        base = KNOWLEDGE / sub if sub else KNOWLEDGE
        for entry in os.scandir(base):
            if entry.name.endswith(".toml") and entry.is_file():
                with open(entry.path, "rb") as fh:
                    out[f"{sub}/{entry.name}" if sub else entry.name] = fh.read()
    return dict(sorted(out.items()))


def _key(files: dict[str, bytes]) -> str:
    h = blake2b(f"{_FORMAT}\0{__version__}\0{sys.version}\0{marshal.version}\0".encode())
    for rel, raw in files.items():
        h.update(f"{rel}\0{len(raw)}\0".encode())
        h.update(raw)
    return h.hexdigest()


def cache_dir() -> Path | None:
    """Where the parsed tables are kept; None when the user turned the cache off (gpusleuth/cachedir.py)."""
    from gpusleuth.cachedir import cache_dir as where

    chosen = where()
    return Path(chosen) if chosen is not None else None


def cache_file() -> Path | None:
    """The cache file of this install: one per install location and Python, so that two checkouts or virtual
    environments with different tables, or two Pythons running one checkout, do not overwrite each other's at
    every run (the key in the file names the Python that wrote it, and marshal's format follows the Python)."""
    where = cache_dir()
    if where is None:
        return None
    install = f"{KNOWLEDGE.resolve()}\0{sys.version}"
    return where / f"knowledge-{blake2b(install.encode(), digest_size=6).hexdigest()}.marshal"


def _read(path: Path, key: str) -> dict | None:
    try:
        with open(path, "rb") as fh:
            held = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not (isinstance(held, tuple) and len(held) == 3 and held[0] == _FORMAT and held[1] == key
            and isinstance(held[2], dict)):
        return None
    return held[2]


def _write(path: Path, key: str, parsed: dict) -> None:
    try:
        blob = marshal.dumps((_FORMAT, key, parsed))
    except ValueError:  # a value marshal cannot hold (a TOML date): no cache, parse every time
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)  # readers see the old file or the new one, never half of one
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        return
    _prune(path)


STALE_AFTER_S = 30 * 86400  # another install's cache not rewritten for this long (a removed venv, most likely)


def _prune(kept: Path) -> None:
    """Remove the caches of other install locations that nothing has rewritten for STALE_AFTER_S: one per
    virtual environment or checkout ever run would otherwise stay for good. An install still in use that loses
    its file pays one parse and writes it again."""
    now = time.time()
    try:
        for other in kept.parent.glob("knowledge-*.marshal"):
            if other != kept and now - other.stat().st_mtime > STALE_AFTER_S:
                other.unlink(missing_ok=True)
    except OSError:
        pass


@cache
def tables() -> dict[str, dict | None]:
    """Every knowledge table, parsed: {path relative to knowledge/: data}; None for a file that does not parse
    (`toml()` raises its error when it is asked for). From the cache file when its key matches."""
    files = _files()
    key = _key(files)
    path = cache_file()
    if path is not None and (held := _read(path, key)) is not None and held.keys() == files.keys():
        return held
    import tomllib

    parsed: dict[str, dict | None] = {}
    for rel, raw in files.items():
        try:
            parsed[rel] = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            parsed[rel] = None
    if path is not None and all(v is not None for v in parsed.values()):
        _write(path, key, parsed)
    return parsed
