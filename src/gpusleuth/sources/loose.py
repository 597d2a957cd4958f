"""Read a directory, an archive of one, a single file, or a bundled example into Documents.

Archives are read in memory, never extracted: a hostile member name cannot write anywhere, and a
guard on decompressed content stops archive bombs. Every file is streamed and read whole unless the user
caps it (--max-bytes). Whatever cannot be read becomes a Gap naming the file; whatever was read only in
part (a cut archive, a capped file, a file limit) is a Gap whose ``what`` is "partial-input", so that a
report on it is never an all-clear.

Files are decoded as they are read; how they become Documents is decided once the whole source is
known: a gpusleuth bundle (manifest.json) gives each file its provenance, a GPU Operator must-gather
gives each file the command that wrote it, anything else is split at its shell prompts.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from gpusleuth.model.document import Document
from gpusleuth.model.finding import Gap
from gpusleuth.sources import bugreport, bundle, mustgather
from gpusleuth.sources.text import decode_stream, normalise, split_documents

if TYPE_CHECKING:  # imported where an archive is read
    import tarfile

ARCHIVE_GUARD_BYTES = 16 << 30  # decompressed content of one archive: stops a decompression bomb, not a real bundle
MAX_FILES = 200_000  # files per input: a 5,000-node must-gather has ~63,000; a bomb of empty files stops here
METADATA_FILES = {"example.toml", "incident.toml", "manifest.json"}  # describe a source, are not evidence
STDIN = "stdin"  # the artifact name of whatever came on standard input
PARTIAL = "partial-input"  # the Gap.what of anything that means part of the input was not read
_SKIP_DIRS = {".git", "__pycache__", ".svn"}
_GZIP_MAGIC = b"\x1f\x8b"


def size_text(n: int) -> str:
    """Bytes as people write them: 512 bytes, 64 KiB, 1.5 GiB."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            v = n / (1 << shift)
            return f"{v:.0f} {unit}" if v == int(v) or v >= 100 else f"{v:.1f} {unit}"
    return f"{n} bytes"


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


class Prefixed(io.RawIOBase):
    """A stream whose first bytes were already read (to sniff them) put back in front of the rest."""

    def __init__(self, head: bytes, rest: BinaryIO):
        self.head, self.rest = head, rest

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self.head:
            if n is None or n < 0:
                out, self.head = self.head + self.rest.read(), b""
                return out
            out, self.head = self.head[:n], self.head[n:]
            return out
        return self.rest.read(n)

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)


class _Reader:
    def __init__(self, description: str, kind: str, max_bytes: int | None = None):
        self.source = Source(description, kind)
        self.max_bytes = max_bytes  # per file, the user's --max-bytes; None reads every file whole
        self.total = 0
        self.texts: list[tuple[str, list[str]]] = []  # decoded files, split into Documents by finish()
        self.empty: list[str] = []

    def add(self, name: str, data: bytes) -> None:
        """A file already in memory (a live collection's artifact)."""
        self.add_stream(name, io.BytesIO(data))

    def add_stream(self, name: str, fh: BinaryIO) -> None:
        """A file read as a stream: gunzipped when it is a .gz, decoded as it comes, cut only at --max-bytes."""
        src = self.source
        base = name.rsplit("/", 1)[-1]
        if base in METADATA_FILES:
            src.metadata[name] = fh.read()
            return
        if src.files >= MAX_FILES:
            if src.files == MAX_FILES:
                src.gaps.append(Gap(PARTIAL, f"more than {MAX_FILES} files; the rest were not read"))
            src.files += 1
            return
        src.files += 1
        gzipped = False
        if name.endswith(".gz"):
            head = fh.read(2)
            fh = Prefixed(head, fh)
            if head == _GZIP_MAGIC:
                import gzip

                name, gzipped = name[:-3], True
                fh = gzip.GzipFile(fileobj=fh, mode="rb")
        got = decode_stream(fh, self.max_bytes)
        self.total += got.size
        if got.text is None:
            if got.error is not None and not got.size:
                src.gaps.append(Gap(PARTIAL, f"cannot read: {_reason(got.error, gzipped)}", name))
            elif got.why == "empty file":
                self.empty.append(name)
            else:
                src.gaps.append(Gap("artifact", got.why or "unreadable", name))
            return
        lines, notes = normalise(got.text)
        if got.note:
            notes.insert(0, got.note)
        for note in notes:
            src.gaps.append(Gap("artifact", note, name))
        if got.error is not None:
            src.gaps.append(Gap(PARTIAL, f"cut short after {size_text(got.size)} ({_reason(got.error, gzipped)}); "
                                         f"only the first {len(lines)} line(s) were read", name))
        if got.capped:
            src.gaps.append(Gap(PARTIAL, f"cut at --max-bytes {size_text(self.max_bytes or 0)}: only the first "
                                         f"{len(lines)} line(s) were read (raise or drop --max-bytes to read it whole)", name))
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
        """Whether the next archive member would take the decompressed content past the bomb guard."""
        if self.total + size > ARCHIVE_GUARD_BYTES:
            self.source.gaps.append(Gap(PARTIAL, f"more than {size_text(ARCHIVE_GUARD_BYTES)} of decompressed content "
                                                 "(the guard against archive bombs); the rest was not read"))
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


def _reason(exc: Exception, gzipped: bool) -> str:
    what = "the gzip stream is truncated or corrupt" if gzipped else "truncated or corrupt"
    return f"{what}: {exc}" if str(exc) else what


def read_artifacts(description: str, kind: str, files, metadata: dict[str, bytes]) -> Source:
    """A source from (name, bytes) pairs held in memory (a live collection), read like files on disk."""
    reader = _Reader(description, kind)
    for name, data in files:
        reader.add(name, data)
    reader.source.metadata.update(metadata)
    return reader.finish()


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
    """A path that turned out to be a FIFO, a device, a socket or a link when it was opened."""


def _open_regular(path: Path, follow: bool = True) -> BinaryIO:
    """A regular file opened for reading. Opened without blocking and checked on the open file itself, so a FIFO
    or device swapped in after a directory listing is refused, never waited on; inside a folder
    (``follow=False``) a link swapped in is not followed either."""
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
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_directory(root: Path, description: str | None = None, kind: str = "directory", max_bytes: int | None = None) -> Source:
    """Every file under ``root``, sorted, depth first. An explicit stack instead of os.walk's recursion
    (any depth works); links are listed and not followed; FIFOs, devices and sockets are refused unread;
    a folder that cannot be listed is a gap naming it."""
    reader = _Reader(description or str(root), kind, max_bytes)
    gaps = reader.source.gaps
    stack: list[tuple[Path, str]] = [(root, "")]
    while stack:
        folder, rel_dir = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            gaps.append(Gap(PARTIAL, f"cannot read folder: {exc.strerror or exc}; its files were not read", (rel_dir or ".") + "/"))
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
            try:
                with _open_regular(Path(entry.path), follow=False) as fh:
                    reader.add_stream(rel, fh)
            except NotRegular as exc:
                gaps.append(Gap("artifact", str(exc), rel))
            except OSError as exc:
                gaps.append(Gap("artifact", f"cannot read: {exc.strerror or exc}", rel))
        stack.extend(reversed(subdirs))
    return reader.finish()


def read_file(path: Path, max_bytes: int | None = None) -> Source:
    reader = _Reader(str(path), "file", max_bytes)
    with path.open("rb") as fh:
        reader.add_stream(path.name, fh)
    return reader.finish()


def read_stream(fh: BinaryIO, name: str = STDIN, description: str | None = None, max_bytes: int | None = None) -> Source:
    """A paste on standard input (or a pipe, /dev/stdin, <(cmd)) as one file named ``name``: read exactly as a
    pasted file is."""
    reader = _Reader(description or name, "file", max_bytes)
    reader.add_stream(name, fh)
    return reader.finish()


def _safe_member(name: str) -> str | None:
    """A member name as shown in evidence, or None when it tries to leave the archive."""
    clean = name.replace("\\", "/")
    if clean.startswith("/") or any(part == ".." for part in clean.split("/")) or (len(clean) > 1 and clean[1] == ":"):
        return None
    return clean.lstrip("./") or None


def read_tar(path: Path, max_bytes: int | None = None) -> Source:
    import tarfile  # archives only: tarfile and zipfile cost ~8 ms to import

    reader = _Reader(str(path), "archive", max_bytes)
    try:
        tf = tarfile.open(path, "r:*")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise SourceError(f"{path}: not a readable tar archive ({exc})") from None
    _read_members(reader, tf, path.name)
    return reader.finish()


def _read_members(reader: _Reader, tf: tarfile.TarFile, label: str) -> None:
    import tarfile

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
                reader.add_stream(name, fh or io.BytesIO())
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            reader.source.gaps.append(Gap(PARTIAL, f"archive is truncated or corrupt after {reader.source.files} file(s): {exc}", label))


def read_zip(path: Path, max_bytes: int | None = None) -> Source:
    import zipfile

    reader = _Reader(str(path), "archive", max_bytes)
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
                    reader.add_stream(name, fh)
            except (zipfile.BadZipFile, OSError, RuntimeError, zlib.error, EOFError) as exc:
                reader.source.gaps.append(Gap(PARTIAL, f"cannot read from the archive (truncated or corrupt): {exc}", name))
    return reader.finish()


def examples_root() -> Path:
    return Path(__file__).parent.parent / "examples"  # gpusleuth/examples (no importlib.resources: 8 ms to import)


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


_STDIN_PATHS = {"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}


def _is_tar_head(head: bytes) -> bool:
    return len(head) >= 262 and head[257:262] == b"ustar"


def read_piped(fh: BinaryIO, name: str = STDIN, description: str | None = None, max_bytes: int | None = None) -> Source:
    """What came on a pipe: a tar stream (plain or gzipped, `tar czf - dir |`) is read as an archive, a gzipped
    file is gunzipped, anything else is one pasted file named ``name``."""
    import tarfile

    head = fh.read(1024)
    while len(head) < 1024 and (more := fh.read(1024 - len(head))):
        head += more
    stream = Prefixed(head, fh)
    label = description or name
    try:
        if head[:2] == _GZIP_MAGIC:
            inner = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 512)
            if _is_tar_head(inner):
                reader = _Reader(label, "archive", max_bytes)
                _read_members(reader, tarfile.open(fileobj=stream, mode="r|gz"), name)
                return reader.finish()
            return read_stream(stream, name + ".gz", label, max_bytes)
        if _is_tar_head(head):
            reader = _Reader(label, "archive", max_bytes)
            _read_members(reader, tarfile.open(fileobj=stream, mode="r|"), name)
            return reader.finish()
    except (zlib.error, tarfile.TarError) as exc:
        raise SourceError(f"{label}: not a readable archive ({exc})") from None
    return read_stream(stream, name, label, max_bytes)


FIFO_WAIT_S = 3.0  # how long a named pipe may go without a writer before it is refused


def _open_fifo(path: Path, spec: str) -> Prefixed:
    """A pipe opened for reading once something writes to it (`<(kubectl get pods -A)`, a FIFO a writer has
    open): opened without blocking, then polled. A FIFO nothing opens for writing within FIFO_WAIT_S is
    refused instead of waited on for ever."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        deadline = time.monotonic() + FIFO_WAIT_S
        while True:
            try:
                head = os.read(fd, 65536)
            except BlockingIOError:  # a writer is there, nothing written yet: read as it comes
                head = b""
                break
            if head:
                break
            if time.monotonic() >= deadline:
                raise SourceError(f"{spec}: a FIFO (named pipe) that nothing wrote to within {FIFO_WAIT_S:g} s; refused")
            time.sleep(0.02)
        os.set_blocking(fd, True)
        return Prefixed(head, os.fdopen(fd, "rb"))
    except BaseException:
        os.close(fd)
        raise


def open_source(spec: str, max_bytes: int | None = None, stdin: BinaryIO | None = None) -> Source:
    """The one entry point: SOURCE as the CLI takes it. ``-`` (and /dev/stdin) is standard input, read as one
    pasted file; a pipe such as ``<(kubectl get pods -A)`` is read the same way under its own name."""
    if spec.startswith("example:"):
        return read_example(spec.split(":", 1)[1])
    if spec == "-" or (spec in _STDIN_PATHS and not Path(spec).is_file()):
        import sys

        return read_piped(stdin or sys.stdin.buffer, STDIN, max_bytes=max_bytes)
    path = Path(spec).expanduser()
    if not path.exists():
        raise SourceError(f"{spec}: no such file or directory")
    if path.is_dir():
        return read_directory(path, max_bytes=max_bytes)
    lower = path.name.lower()
    try:
        if not path.is_file():  # a pipe: read once, as a stream; a device or socket: refused
            special = _special_kind(path.stat().st_mode)  # stat, never open: a device may never end
            if special != "a FIFO (named pipe)":
                raise SourceError(f"{spec}: {special}, not a file, folder, archive or pipe; refused")
            fh = _open_fifo(path, spec)
            try:
                return read_piped(fh, STDIN if spec in _STDIN_PATHS else path.name, spec, max_bytes)
            finally:
                fh.rest.close()
        if lower.endswith((".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")):
            return read_tar(path, max_bytes)
        if lower.endswith(".zip"):
            return read_zip(path, max_bytes)
        import tarfile

        if tarfile.is_tarfile(path):
            return read_tar(path, max_bytes)
        return read_file(path, max_bytes)
    except PermissionError:
        raise SourceError(f"{spec}: permission denied") from None
    except IsADirectoryError:
        raise SourceError(f"{spec}: is a directory") from None
