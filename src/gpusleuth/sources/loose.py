"""Read a directory, an archive of one, a single file, or a bundled example into Documents.

Archives are read in memory, never extracted: a hostile member name cannot write anywhere, and
size caps stop decompression bombs. Whatever cannot be read becomes a Gap naming the file.

Files are decoded as they are read; how they become Documents is decided once the whole source is
known: a gpusleuth bundle (manifest.json) gives each file its provenance, a GPU Operator must-gather
gives each file the command that wrote it, anything else is split at its shell prompts.
"""

from __future__ import annotations

import errno
import gzip
import io
import os
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from pathlib import Path

from gpusleuth.model.document import Document
from gpusleuth.model.finding import Gap
from gpusleuth.sources import bugreport, bundle, mustgather
from gpusleuth.sources.text import decode, normalise, split_documents

MAX_FILE_BYTES = 64 * 1024 * 1024  # per artifact; the rest is cut and said so
MAX_TOTAL_BYTES = 1024 * 1024 * 1024  # per source, after decompression
MAX_FILES = 20_000
METADATA_FILES = {"example.toml", "incident.toml", "manifest.json"}  # describe a source, are not evidence
_SKIP_DIRS = {".git", "__pycache__", ".svn"}


class SourceError(Exception):
    """The source as a whole cannot be read (missing, not a known archive, unknown example)."""


@dataclass
class Source:
    description: str
    kind: str  # directory | archive | file | example | bundle | must-gather | live
    documents: list[Document] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    files: int = 0
    metadata: dict = field(default_factory=dict)  # name -> bytes of METADATA_FILES and manifests
    captured_at: datetime | None = None  # when the artifacts were captured (a bundle's manifest says)


class _Reader:
    def __init__(self, description: str, kind: str):
        self.source = Source(description, kind)
        self.total = 0
        self.texts: list[tuple[str, list[str]]] = []  # decoded files, split into Documents by finish()
        self.empty: list[str] = []

    def add(self, name: str, data: bytes, truncated: bool = False) -> None:
        src = self.source
        base = name.rsplit("/", 1)[-1]
        if base in METADATA_FILES:
            src.metadata[name] = data
            return
        if src.files >= MAX_FILES:
            if src.files == MAX_FILES:
                src.gaps.append(Gap("files", f"more than {MAX_FILES} files; the rest were not read"))
            src.files += 1
            return
        src.files += 1
        self.total += len(data)
        if name.endswith(".gz") and data[:2] == b"\x1f\x8b":
            name, data, truncated = name[:-3], *_gunzip(data)
        if not data:
            self.empty.append(name)
            return
        text, why = decode(data)
        if text is None:
            src.gaps.append(Gap("artifact", why or "unreadable", name))
            return
        if why:
            src.gaps.append(Gap("artifact", why, name))
        lines, notes = normalise(text)
        if truncated:
            notes.append(f"only the first {MAX_FILE_BYTES // (1024 * 1024)} MiB were read")
        for note in notes:
            src.gaps.append(Gap("artifact", note, name))
        self.texts.append((name, lines))

    def finish(self) -> Source:
        """Documents for everything read, the way the source's kind says."""
        self._strip_common_root()
        src = self.source
        manifest = next((m for n, d in src.metadata.items() if n.rsplit("/", 1)[-1] == "manifest.json" and (m := bundle.load_manifest(d))), None)
        if manifest is not None:
            docs, gaps = bundle.documents(self.texts, manifest, _split)
            src.captured_at = bundle.captured_at(manifest)
            src.kind = "live" if src.kind == "live" else "bundle"
            src.gaps.extend(Gap("artifact", "empty file", n) for n in self.empty)
        elif mustgather.is_must_gather([n for n, _ in self.texts] + self.empty):
            docs, gaps = mustgather.read(self.texts, self.empty, _split)
            src.kind = "must-gather" if src.kind in ("directory", "archive") else src.kind
        else:
            docs = [d for name, lines in self.texts for d in _split(name, lines)]
            gaps = [Gap("artifact", "empty file", n) for n in self.empty]
        src.documents.extend(docs)
        src.gaps.extend(gaps)
        return src

    def over_budget(self, size: int) -> bool:
        if self.total + min(size, MAX_FILE_BYTES) > MAX_TOTAL_BYTES:
            self.source.gaps.append(Gap("source", f"more than {MAX_TOTAL_BYTES >> 20} MiB of content; the rest was not read"))
            return True
        return False

    def _strip_common_root(self) -> None:
        """`tar czf x.tgz incident/` and `cd incident; tar czf x.tgz .` cite the same names."""
        names = [n for n, _ in self.texts] + self.empty + list(self.source.metadata)
        if not names or self.source.kind not in ("archive",):
            return
        first = {n.split("/", 1)[0] for n in names}
        if len(first) != 1 or not all("/" in n for n in names):
            return
        cut = len(next(iter(first))) + 1
        self.texts = [(n[cut:], lines) for n, lines in self.texts]
        self.empty = [n[cut:] for n in self.empty]
        self.source.metadata = {n[cut:]: d for n, d in self.source.metadata.items()}
        self.source.gaps = [Gap(g.what, g.why, g.artifact[cut:] if g.artifact and g.artifact[:cut] == names[0][:cut] else g.artifact) for g in self.source.gaps]


def _split(name: str, lines: list[str]) -> list[Document]:
    """A file with no provenance: a bug report by its sections, anything else at its shell prompts."""
    if bugreport.is_bug_report(lines):
        return bugreport.split(name, lines)
    return split_documents(name, lines)


def _gunzip(data: bytes) -> tuple[bytes, bool]:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            out = gz.read(MAX_FILE_BYTES + 1)
    except (OSError, EOFError, zlib.error):
        return data, False  # decode() will call it binary, with the name
    return out[:MAX_FILE_BYTES], len(out) > MAX_FILE_BYTES


def _special_kind(mode: int) -> str | None:
    """What a file that is not a regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


class NotRegular(OSError):
    """A path that turned out to be a FIFO, a device or a socket when it was opened."""


def _read_capped(path: Path, follow: bool = True) -> tuple[bytes, bool]:
    """The first MAX_FILE_BYTES of a regular file. Opened without blocking and checked on the open file
    itself, so a FIFO or device swapped in after a directory listing is refused, never waited on; inside a
    folder (``follow=False``) a link swapped in is not followed either."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow and exc.errno == errno.ELOOP:
            raise NotRegular("symbolic link; not followed") from None
        raise
    try:
        kind = _special_kind(os.fstat(fd).st_mode)
        if kind:
            raise NotRegular(f"{kind}; refused, not read")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    return data[:MAX_FILE_BYTES], len(data) > MAX_FILE_BYTES


def read_artifacts(description: str, kind: str, files, metadata: dict[str, bytes]) -> Source:
    """A source from (name, bytes) pairs held in memory (a live collection), read like files on disk."""
    reader = _Reader(description, kind)
    for name, data in files:
        reader.add(name, data)
    reader.source.metadata.update(metadata)
    return reader.finish()


def read_directory(root: Path, description: str | None = None, kind: str = "directory") -> Source:
    """Every file under ``root``, sorted, depth first. An explicit stack instead of os.walk's recursion
    (any depth works); links are listed and not followed; FIFOs, devices and sockets are refused unread;
    a folder that cannot be listed is a gap naming it."""
    reader = _Reader(description or str(root), kind)
    gaps = reader.source.gaps
    stack: list[tuple[Path, str]] = [(root, "")]
    while stack:
        folder, rel_dir = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            gaps.append(Gap("artifact", f"cannot read folder: {exc.strerror or exc}; its files were not read", (rel_dir or ".") + "/"))
            continue
        subdirs = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                gaps.append(Gap("artifact", f"cannot read: {exc.strerror or exc}", rel))
                continue
            if stat.S_ISLNK(st.st_mode):
                gaps.append(Gap("artifact", "symbolic link; not followed", rel))
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name not in _SKIP_DIRS:
                    subdirs.append((Path(entry.path), rel))
                continue
            special = _special_kind(st.st_mode)
            if special:
                gaps.append(Gap("artifact", f"{special}; refused, not read", rel))
                continue
            if reader.over_budget(st.st_size):
                return reader.finish()
            try:
                data, truncated = _read_capped(Path(entry.path), follow=False)
            except NotRegular as exc:
                gaps.append(Gap("artifact", str(exc), rel))
                continue
            except OSError as exc:
                gaps.append(Gap("artifact", f"cannot read: {exc.strerror or exc}", rel))
                continue
            reader.add(rel, data, truncated)
        stack.extend(reversed(subdirs))
    return reader.finish()


def read_file(path: Path) -> Source:
    reader = _Reader(str(path), "file")
    data, truncated = _read_capped(path)
    reader.add(path.name, data, truncated)
    return reader.finish()


def _safe_member(name: str) -> str | None:
    """A member name as shown in evidence, or None when it tries to leave the archive."""
    clean = name.replace("\\", "/")
    if clean.startswith("/") or any(part == ".." for part in clean.split("/")) or (len(clean) > 1 and clean[1] == ":"):
        return None
    return clean.lstrip("./") or None


def read_tar(path: Path) -> Source:
    reader = _Reader(str(path), "archive")
    try:
        tf = tarfile.open(path, "r:*")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise SourceError(f"{path}: not a readable tar archive ({exc})") from None
    with tf:
        try:
            for member in tf:
                name = _safe_member(member.name)
                if member.isdir():
                    continue
                if name is None:
                    reader.source.gaps.append(Gap("artifact", "member path escapes the archive; skipped", member.name))
                    continue
                if not member.isfile():
                    reader.source.gaps.append(Gap("artifact", "link or special file in archive; not followed", name))
                    continue
                if reader.over_budget(member.size):
                    break
                fh = tf.extractfile(member)
                data = fh.read(MAX_FILE_BYTES + 1) if fh else b""
                reader.add(name, data[:MAX_FILE_BYTES], len(data) > MAX_FILE_BYTES)
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            reader.source.gaps.append(Gap("source", f"archive is truncated or corrupt after {reader.source.files} file(s): {exc}", path.name))
    return reader.finish()


def read_zip(path: Path) -> Source:
    reader = _Reader(str(path), "archive")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceError(f"{path}: not a readable zip archive ({exc})") from None
    with zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            name = _safe_member(info.filename)
            if name is None:
                reader.source.gaps.append(Gap("artifact", "member path escapes the archive; skipped", info.filename))
                continue
            if (info.external_attr >> 16) & 0o170000 == 0o120000:
                reader.source.gaps.append(Gap("artifact", "symlink in archive; not followed", name))
                continue
            if reader.over_budget(info.file_size):
                break
            try:
                with zf.open(info) as fh:
                    data = fh.read(MAX_FILE_BYTES + 1)
            except (zipfile.BadZipFile, OSError, RuntimeError, zlib.error) as exc:
                reader.source.gaps.append(Gap("artifact", f"cannot read from archive: {exc}", name))
                continue
            reader.add(name, data[:MAX_FILE_BYTES], len(data) > MAX_FILE_BYTES)
    return reader.finish()


def examples_root() -> Path:
    return Path(str(resources.files("gpusleuth") / "examples"))


def example_names() -> list[str]:
    root = examples_root()
    if not root.is_dir():  # an installation without bundled examples
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "example.toml").is_file())


def read_example(name: str) -> Source:
    path = examples_root() / name
    if not (path / "example.toml").is_file():
        known = ", ".join(example_names()) or "none"
        raise SourceError(f"no bundled example named {name!r} (known: {known})")
    return read_directory(path, description=f"example:{name}", kind="example")


def open_source(spec: str) -> Source:
    """The one entry point: SOURCE as the CLI takes it."""
    if spec.startswith("example:"):
        return read_example(spec.split(":", 1)[1])
    path = Path(spec).expanduser()
    try:
        mode = path.stat().st_mode  # stat, never open: a FIFO would block, a device never end
    except FileNotFoundError:
        raise SourceError(f"{spec}: no such file or directory") from None
    except OSError as exc:
        raise SourceError(f"{spec}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        return read_directory(path)
    special = _special_kind(mode)
    if special:
        raise SourceError(f"{spec}: {special}, not a file, folder or archive; refused")
    lower = path.name.lower()
    try:
        if lower.endswith((".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")):
            return read_tar(path)
        if lower.endswith(".zip"):
            return read_zip(path)
        if tarfile.is_tarfile(path):
            return read_tar(path)
        return read_file(path)
    except PermissionError:
        raise SourceError(f"{spec}: permission denied") from None
    except IsADirectoryError:
        raise SourceError(f"{spec}: is a directory") from None
    except NotRegular as exc:
        raise SourceError(f"{spec}: {exc}") from None
