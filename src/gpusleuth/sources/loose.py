"""Read a directory, an archive of one, a single file, or a bundled example into Documents.

Archives are read in place, never extracted: a hostile member name cannot write anywhere, and a guard on
decompressed content stops archive bombs. Whatever cannot be read becomes a Gap naming the file; whatever was
read only in part (a cut archive, a capped file, a budget reached) is a Gap whose ``what`` is "partial-input",
so that a report on it is never an all-clear.

Documents are streamed: opening a source only lists it (names, sizes, and the few small files that say what
kind of source it is: a bundle's manifest.json, a must-gather's script logs). Each file is read when the
engine asks for its Documents, and nothing keeps them once it has parsed them, so memory holds one file (or
one piece of a huge file, PIECE_BYTES of whole lines) at a time, not the input. Standard input and pipes are
first copied aside (in memory up to SPOOL_IN_MEMORY, else a temporary file), so that they are read the same way.

Every run has budgets (Budgets): bytes in all, files, seconds of reading, and bytes per file; reaching one is
a partial-input gap that says what was reached and what was not read.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import time
import weakref
import zlib
from dataclasses import dataclass, field, replace
from operator import attrgetter
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Iterable, Iterator

from gpusleuth.model.document import CONTINUED, CONTINUES, Document
from gpusleuth.model.finding import Gap
from gpusleuth.sources import bugreport, bundle, mustgather
from gpusleuth.sources.text import SMALL, StreamRead, byte_lines, frozen, normalise, read_pieces, read_whole, split_documents

if TYPE_CHECKING:  # imported where an archive is read: tarfile and zipfile cost ~8 ms to import
    import tarfile
    import zipfile

ARCHIVE_GUARD_BYTES = 16 << 30  # decompressed content of one archive: stops a decompression bomb, not a real bundle
MAX_FILES = 200_000  # files per input: a 5,000-node must-gather has ~63,000; a bomb of empty files stops here
MAX_TOTAL_BYTES = 16 << 30  # bytes read in all: ~20x the largest must-gather measured (a 5,000-node fleet's)
TIME_BUDGET_S = 900.0  # seconds of reading input: a 5,000-node must-gather reads in about a minute here
PIECE_BYTES = 16 << 20  # a file above this is handed on in pieces of whole lines: ~60 MiB of line objects at most
PIECE_LINES = 500_000  # or above this many lines: a line object costs ~60 bytes however short (`ok` x 33 M)
METADATA_FILES = {"example.toml", "incident.toml", "manifest.json"}  # describe a source, are not evidence
STDIN = "stdin"  # the artifact name of whatever came on standard input
PARTIAL = "partial-input"  # the Gap.what of anything that means part of the input was not read
_SKIP_DIRS = {".git", "__pycache__", ".svn"}
_NAME = attrgetter("name")  # a listing's sort key (a C call, not a lambda per entry)
_GZIP_MAGIC = b"\x1f\x8b"
_CONTEXT_HEAD = 1 << 20  # what is read early of a file that only says what kind of source this is


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
class Budgets:
    """What one run reads at most. None: no limit. Each one reached is a partial-input gap saying so."""

    max_bytes: int | None = None  # per file (--max-bytes): every file whole unless the user caps it
    max_total_bytes: int | None = field(default_factory=lambda: MAX_TOTAL_BYTES)  # bytes read in all (--max-total-bytes)
    max_files: int = field(default_factory=lambda: MAX_FILES)  # files read (--max-files)
    time_budget: float | None = field(default_factory=lambda: TIME_BUDGET_S)  # seconds of reading from the run's start (--time-budget)
    started: float = field(default_factory=time.monotonic)


class Documents:
    """A source's Documents, produced file by file as they are iterated; nothing here keeps them.

    The first iteration reads the source (budgets apply; what it could not read becomes the source's gaps) and
    counts what it produced. Iterating again reads the source again, up to the same file the first one reached
    (an HTML report's lines around its evidence): no gap is recorded twice. Documents given in memory (a node
    probe's, a test's) are held and come first."""

    def __init__(self, produce: Callable[[bool, int | None], Iterator[Document]] | None = None):
        self._produce = produce  # (first pass?, stop after this many files) -> documents
        self._held: list[Document] = []
        self._first: Iterator[Document] | None = None
        self.count = 0  # documents the first iteration produced
        self.files_read = 0  # files it read (set by the producer as it reads them)
        self.done = False

    def append(self, doc: Document) -> None:
        self._held.append(doc)

    def extend(self, docs: Iterable[Document]) -> None:
        self._held.extend(docs)

    def __iter__(self) -> Iterator[Document]:
        if self._first is None and not self.done:
            return self._first_pass()
        return self._again()

    def _first_pass(self) -> Iterator[Document]:
        self._first = gen = self._counted()
        return gen

    def _counted(self) -> Iterator[Document]:
        for doc in self._held:
            self.count += 1
            yield doc
        if self._produce is not None:
            for doc in self._produce(True, None):
                self.count += 1
                yield doc
        self.done = True

    def _again(self) -> Iterator[Document]:
        yield from self._held
        if self._produce is not None:
            yield from self._produce(False, self.files_read if self.done else None)

    def drain(self) -> None:
        """Finish the first iteration (reading, dropping the documents) so that the gaps and counts are whole."""
        if self.done:
            return
        for _ in self._first if self._first is not None else self._first_pass():
            pass

    def __len__(self) -> int:
        if self.done:
            return self.count
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __getitem__(self, i):
        """For tests and small sources: the documents as a list (read anew each time, not kept)."""
        return list(self)[i]


class Source:
    """Where the Documents come from: what it is, its files, and what could not be read. ``gaps`` is whole once
    the documents have been iterated (reading ``gaps`` first reads them, and drops them)."""

    def __init__(self, description: str, kind: str, documents: Documents | list[Document] | None = None, gaps: list[Gap] | None = None,
                 files: int = 0, metadata: dict | None = None, captured_at: datetime | None = None):
        self.description = description
        self.kind = kind  # directory | archive | file | example | bundle | must-gather | live | node
        if documents is None or isinstance(documents, (list, tuple)):  # Documents given in memory are held
            held, documents = documents or (), Documents()
            documents.extend(held)
        self.documents = documents
        self._gaps: list[Gap] = list(gaps or ())
        self.files = files
        self.metadata: dict = metadata if metadata is not None else {}  # name -> bytes of METADATA_FILES and manifests
        self.captured_at = captured_at  # when the artifacts were captured (a bundle's manifest says)
        self.run_gaps: list[Gap] = []  # not the input's (a --select naming no check): listed after the input's
        self.keep: list = []  # what must live as long as the source (a spooled copy of standard input)

    @property
    def gaps(self) -> list[Gap]:
        self.documents.drain()
        return self._gaps

    @gaps.setter
    def gaps(self, value: list[Gap]) -> None:
        self._gaps = list(value)


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


# -- containers: how a source lists its files and opens them ------------------------------------------------


class _Container:
    """Lists (name, handle, size) entries and gaps in reading order, and opens handles. Random access unless
    ``sequential`` (a tar archive: read in archive order, in one pass)."""

    sequential = False

    def listing(self, reader: "_Reader") -> None:
        raise NotImplementedError

    def open(self, handle: Any) -> BinaryIO:
        raise NotImplementedError

    def opened(self, handles: list[Any]) -> Iterator[tuple[int, BinaryIO | Exception]]:
        """(position in ``handles``, its open stream or the error opening it), in the order given."""
        for n, h in enumerate(handles):
            try:
                fh = self.open(h)
            except (OSError, NotRegular) as exc:
                yield n, exc
                continue
            yield from _handed(n, fh)

    def contents(self, handles: list[Any]) -> Iterator[tuple[int, BinaryIO | bytes | Exception]]:
        """opened(), where a container may hand over a small file's bytes, read whole, instead of a stream
        (text.py read_whole takes them, as read_pieces would the stream)."""
        return self.opened(handles)


def _handed(n: int, fh: BinaryIO) -> Iterator[tuple[int, BinaryIO]]:
    """(n, fh) for the reader, fh closed once the reader is done with it (or stops reading)."""
    try:
        yield n, fh
    finally:
        fh.close()


class _Memory(_Container):
    def __init__(self, files: Iterable[tuple[str, bytes]]):
        self.files = list(files)

    def listing(self, reader: "_Reader") -> None:
        for i, (name, data) in enumerate(self.files):
            if not reader.listed(name, i, len(data)):
                return

    def open(self, handle: int) -> BinaryIO:
        return io.BytesIO(self.files[handle][1])

    def contents(self, handles: list[int]) -> Iterator[tuple[int, bytes]]:
        files = self.files
        for n, h in enumerate(handles):
            data = files[h][1]
            yield n, data if type(data) is bytes else io.BytesIO(data)


class _File(_Container):
    def __init__(self, path: Path, name: str):
        self.path, self.name = path, name

    def listing(self, reader: "_Reader") -> None:
        reader.listed(self.name, 0, None)

    def open(self, handle: int) -> BinaryIO:
        return self.path.open("rb")


class _Directory(_Container):
    def __init__(self, root: Path):
        self.root = root

    def listing(self, reader: "_Reader") -> None:
        """Every file under the root, sorted, depth first. An explicit stack instead of os.walk's recursion (any
        depth works); links are listed and not followed; FIFOs, devices and sockets are refused unread; a folder
        that cannot be listed is a gap naming it."""
        # Paths are strings here (a handle is what os.open takes): a pathlib.Path per file cost more than its stat. A
        # folder or link is told from the listing's own file type, without a stat; a file is stat'ed for its size.
        stack: list[tuple[str, str]] = [(os.fspath(self.root), "")]
        while stack:
            folder, rel_dir = stack.pop()
            try:
                with os.scandir(folder) as it:
                    entries = sorted(it, key=_NAME)
            except OSError as exc:
                reader.gap(Gap(PARTIAL, f"cannot read folder: {exc.strerror or exc}; its files were not read", (rel_dir or ".") + "/"))
                continue
            subdirs = []
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                try:
                    if entry.is_symlink():
                        reader.gap(Gap("artifact", "symbolic link; not followed", rel))
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in _SKIP_DIRS:
                            subdirs.append((entry.path, rel))
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError as exc:
                    reader.gap(Gap("artifact", f"cannot read: {exc.strerror or exc}", rel))
                    continue
                if stat.S_ISLNK(st.st_mode):  # swapped in since the folder was listed
                    reader.gap(Gap("artifact", "symbolic link; not followed", rel))
                    continue
                if stat.S_ISDIR(st.st_mode):
                    if entry.name not in _SKIP_DIRS:
                        subdirs.append((entry.path, rel))
                    continue
                special = _special_kind(st.st_mode)
                if special:
                    reader.gap(Gap("artifact", f"{special}; refused, not read", rel))
                    continue
                if not reader.listed(rel, entry.path, st.st_size):
                    return
            stack.extend(reversed(subdirs))

    def open(self, handle: str) -> BinaryIO:
        return _open_regular(handle, follow=False)

    def contents(self, handles: list[str]) -> Iterator[tuple[int, BinaryIO | bytes | Exception]]:
        """A regular file of at most SMALL bytes is read whole with os.read on its descriptor: no buffered file
        object (most files of a bundle are a few KiB: one container's log). The same checks as _open_regular, on
        the open file; a bigger file, or a read that fails (the stream's read then says why, as before), is
        handed on as a stream."""
        for n, h in enumerate(handles):
            try:
                fd, st_size = _open_regular_fd(h, follow=False)
            except (OSError, NotRegular) as exc:
                yield n, exc
                continue
            data = None
            if st_size <= SMALL:
                try:
                    data, got = [], 0
                    while got <= SMALL and (block := os.read(fd, SMALL + 1 - got)):  # to the end, as a stream reads
                        data.append(block)
                        got += len(block)
                    data = data[0] if len(data) == 1 else b"".join(data)
                except OSError:  # the stream's read meets it again and says why
                    data = None
                if data is not None and len(data) > SMALL:  # grew since: read as a stream, from the start
                    data = None
                if data is None:
                    try:
                        os.lseek(fd, 0, os.SEEK_SET)
                    except OSError:
                        pass
            if data is not None:
                os.close(fd)
                yield n, data
                continue
            try:
                fh = _stream_of(fd)
            except OSError as exc:
                yield n, exc
                continue
            yield from _handed(n, fh)


class _Zip(_Container):
    def __init__(self, zf: zipfile.ZipFile):
        self.zf = zf

    def listing(self, reader: "_Reader") -> None:
        total = 0
        for info in self.zf.infolist():
            if info.is_dir():
                continue
            name = _safe_member(info.filename)
            if name is None:
                reader.gap(Gap("artifact", "member path escapes the archive; skipped", info.filename))
                continue
            if (info.external_attr >> 16) & 0o170000 == 0o120000:
                reader.gap(Gap("artifact", "symlink in archive; not followed", name))
                continue
            total += info.file_size
            if total > ARCHIVE_GUARD_BYTES:
                reader.gap(_guard_gap())
                return
            if not reader.listed(name, info, info.file_size):
                return

    def opened(self, handles):
        import zipfile

        for n, info in enumerate(handles):
            try:
                fh = self.zf.open(info)
            except (zipfile.BadZipFile, OSError, RuntimeError, zlib.error, EOFError) as exc:
                yield n, _ZipError(exc)
                continue
            yield from _handed(n, fh)


class _ZipError(OSError):
    """A zip member that cannot even be opened: the archive is corrupt there."""


class _Tar(_Container):
    """A tar archive on disk (or standard input copied aside): listed in one pass, read in another, both in
    archive order, so that a compressed archive is decompressed forwards only."""

    sequential = True

    def __init__(self, open_tar: Callable[[], tarfile.TarFile], label: str):
        self.open_tar, self.label = open_tar, label

    def listing(self, reader: "_Reader") -> None:
        import tarfile

        total = 0
        try:
            with self.open_tar() as tf:
                for i, member in enumerate(tf):
                    if member.isdir():
                        continue
                    name = _safe_member(member.name)
                    if name is None:
                        reader.gap(Gap("artifact", "member path escapes the archive; skipped", member.name))
                        continue
                    if not member.isfile():
                        reader.gap(Gap("artifact", "link or special file in archive; not followed", name))
                        continue
                    total += member.size
                    if total > ARCHIVE_GUARD_BYTES:
                        reader.gap(_guard_gap())
                        return
                    early = reader.wants_early(name)
                    if early:
                        reader.early[name] = _read_head(tf.extractfile(member), early)
                    if not reader.listed(name, i, member.size):
                        return
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            reader.gap(Gap(PARTIAL, f"archive is truncated or corrupt after {reader.listed_files} file(s): {exc}", self.label))

    def opened(self, handles):
        import tarfile

        wanted = {h: n for n, h in enumerate(handles)}
        try:
            with self.open_tar() as tf:
                for i, member in enumerate(tf):
                    if i not in wanted:
                        continue
                    yield wanted[i], (tf.extractfile(member) or io.BytesIO())
                    del wanted[i]
                    if not wanted:
                        return
        except (tarfile.TarError, OSError, EOFError, zlib.error):
            return  # the listing found the same cut and said so


def _guard_gap() -> Gap:
    return Gap(PARTIAL, f"more than {size_text(ARCHIVE_GUARD_BYTES)} of decompressed content "
                        "(the guard against archive bombs); the rest was not read")


def _read_head(fh: BinaryIO | None, limit: int) -> bytes:
    return fh.read(limit) if fh is not None else b""


# -- the reader: listing, then documents file by file ------------------------------------------------------


@dataclass
class _Entry:
    name: str
    handle: Any
    size: int | None


class _Reader:
    def __init__(self, description: str, kind: str, container: _Container, budgets: Budgets | None = None):
        self.source: Source | None = Source(description, kind, Documents(self._documents))  # until finish_listing
        self.gaps: list[Gap] = []
        self.documents: Callable[[], Documents | None] = lambda: None
        self.container = container
        self.budgets = budgets or Budgets()
        self.items: list[_Entry | Gap] = []  # the listing, in reading order
        self.early: dict[str, bytes] = {}  # head bytes of the files that say what kind of source this is
        self.listed_files = 0
        self.cut = 0  # characters of a common root folder every name starts with (an archive's `incident/`)
        self.manifest: dict | None = None
        self.records: dict[str, dict] = {}  # the manifest's, by name
        self.gather: mustgather.Context | None = None

    # listing

    def gap(self, gap: Gap) -> None:
        self.items.append(gap)

    def wants_early(self, name: str) -> int:
        """How many bytes of this file to read while listing (0: none): metadata whole, a must-gather's context."""
        base = name.rsplit("/", 1)[-1]
        if base in METADATA_FILES:
            return 1 << 30
        if base in mustgather.METADATA:
            return 256 << 20  # the script's own logs: read whole, never analysed
        return _CONTEXT_HEAD if mustgather.is_context(base) else 0

    def listed(self, name: str, handle: Any, size: int | None) -> bool:
        """An entry in reading order; False when the listing should stop (the file budget)."""
        base = name.rsplit("/", 1)[-1]
        if base in METADATA_FILES:
            if name not in self.early:
                self.early[name] = self._read_now(handle, 1 << 30)
            self.source.metadata[name] = self.early[name]
            return True
        src = self.source
        if src.files >= self.budgets.max_files:
            if src.files == self.budgets.max_files:
                self.items.append(Gap(PARTIAL, f"more than {self.budgets.max_files} files (--max-files); the rest were not read"))
            src.files += 1
            return True
        src.files += 1
        self.listed_files += 1
        if not self.container.sequential and name not in self.early and (want := self.wants_early(name)):
            self.early[name] = self._read_now(handle, want)
        self.items.append(_Entry(name, handle, size))
        return True

    def _read_now(self, handle: Any, limit: int) -> bytes:
        for _n, fh in self.container.opened([handle]):
            if isinstance(fh, Exception):
                return b""
            try:  # in blocks: read(limit) would allocate all of the limit (1 GiB for a manifest) before reading
                parts, got = [], 0
                while got < limit and (block := fh.read(min(1 << 20, limit - got))):
                    parts.append(block)
                    got += len(block)
                return b"".join(parts)
            except Exception:  # noqa: BLE001 - a cut stream, a zip's BadZipFile: nothing early; reading it says why
                return b""
        return b""

    def finish_listing(self) -> Source:
        """What kind of source the listing shows (a bundle, a must-gather), with names cut to a common root."""
        src = self.source
        self._strip_common_root()
        manifest = next((m for n, d in src.metadata.items() if n.rsplit("/", 1)[-1] == "manifest.json" and (m := bundle.load_manifest(d))), None)
        names = [e.name for e in self.items if isinstance(e, _Entry)]
        if manifest is not None:
            self.manifest, self.records = manifest, bundle.records(manifest)
            src.captured_at = bundle.captured_at(manifest)
            src.kind = "live" if src.kind == "live" else "bundle"
            if not self.container.sequential:  # in manifest order; an archive is read in its own order
                order = bundle.order(manifest)
                gaps = [e for e in self.items if isinstance(e, Gap)]
                files = sorted((e for e in self.items if isinstance(e, _Entry)), key=lambda e: (order.get(e.name, len(order)), e.name))
                self.items = gaps + files
        elif mustgather.is_must_gather(names):
            self.gather = mustgather.context(self._early_texts())
            src.kind = "must-gather" if src.kind in ("directory", "archive") else src.kind
        # The Source's Documents call back into this reader: from here on the reader keeps what it writes to (the
        # gap list) and the Documents weakly, not the Source, so that nothing refers back. Both ways strongly were a
        # cycle that kept the listing (~30 MiB at 5,000 nodes while diagnose paused the cycle collector) until a
        # full collection.
        self.gaps, self.documents = src._gaps, weakref.ref(src.documents)
        self.source = None
        return src

    def _early_texts(self) -> list[tuple[str, list[str]]]:
        out = []
        for name, data in self.early.items():
            got = next(read_pieces(io.BytesIO(data)))
            if got.text is not None:
                out.append((name, normalise(got.text)[0]))
        return out

    def _strip_common_root(self) -> None:
        """`tar czf x.tgz incident/` and `cd incident; tar czf x.tgz .` cite the same names."""
        src = self.source
        names = [e.name for e in self.items if isinstance(e, _Entry)] + list(src.metadata)
        if not names or src.kind not in ("archive",):
            return
        first = {n.split("/", 1)[0] for n in names}
        if len(first) != 1 or not all("/" in n for n in names):
            return
        cut = len(next(iter(first))) + 1
        prefix = names[0][:cut]
        self.items = [replace(e, name=e.name[cut:]) if isinstance(e, _Entry)
                      else Gap(e.what, e.why, e.artifact[cut:] if e.artifact and e.artifact[:cut] == prefix else e.artifact)
                      for e in self.items]
        src.metadata = {n[cut:]: d for n, d in src.metadata.items()}
        self.early = {n[cut:]: d for n, d in self.early.items()}

    # reading

    def _documents(self, first: bool, stop_after: int | None) -> Iterator[Document]:
        """The documents of every listed file, in reading order. The first pass records gaps and applies the
        budgets; a later one reads the same files again and records nothing."""
        gaps: list[Gap] = self.gaps if first else []
        b = self.budgets
        entries = [e for e in self.items if isinstance(e, _Entry)]
        total, read, empty, present = 0, 0, [], set()  # present: files read as text
        stopped: Gap | None = None
        pending = iter(self.items)
        for n, fh in self.container.contents([e.handle for e in entries]):
            entry = entries[n]
            for item in pending:  # the listing's gaps up to this file, in order
                if item is entry:
                    break
                if isinstance(item, Gap):
                    gaps.append(item)
            if stop_after is not None and read >= stop_after:
                break
            if first and (why := self._over(total, read, len(entries))):
                stopped = Gap(PARTIAL, why)
                break
            read += 1
            if first and (documents := self.documents()) is not None:  # as it goes, for a progress note (cli.py)
                documents.files_read = read
            if isinstance(fh, Exception):
                if isinstance(fh, _ZipError):
                    gaps.append(Gap(PARTIAL, f"cannot read from the archive (truncated or corrupt): {fh.args[0]}", entry.name))
                elif isinstance(fh, NotRegular):
                    gaps.append(Gap("artifact", str(fh), entry.name))
                else:
                    gaps.append(Gap("artifact", f"cannot read: {fh.strerror or fh}", entry.name))
                continue
            cap = b.max_bytes
            by_total = False
            if b.max_total_bytes is not None and (cap is None or b.max_total_bytes - total < cap):
                cap, by_total = max(b.max_total_bytes - total, 0), True
            size = 0
            for doc_or_size in self._read_file(entry.name, fh, cap, by_total, gaps, empty, present, first):
                if isinstance(doc_or_size, int):
                    size = doc_or_size
                    continue
                yield doc_or_size
            total += size
        if first:
            for item in pending:
                if isinstance(item, Gap):
                    gaps.append(item)
            if stopped is not None:
                gaps.append(stopped)
            if (documents := self.documents()) is not None:  # the one iterating this
                documents.files_read = read
            gaps.extend(self._late_gaps(empty, present))

    def _over(self, total: int, read: int, of: int) -> str | None:
        b = self.budgets
        left = f"{of - read:,} of {of:,} file(s) were not read"
        if b.max_total_bytes is not None and total >= b.max_total_bytes:
            return f"the budget of {size_text(b.max_total_bytes)} read in all (--max-total-bytes) was reached after {read:,} file(s); {left}"
        if self._out_of_time():
            return (f"the time budget of {b.time_budget:g} s (--time-budget) was reached after {read:,} file(s) "
                    f"({size_text(total)}); {left}; the checks ran on what was read")
        return None

    def _out_of_time(self) -> bool:
        b = self.budgets
        return b.time_budget is not None and time.monotonic() - b.started >= b.time_budget

    def _read_file(self, name: str, fh: BinaryIO, cap: int | None, by_total: bool, gaps: list[Gap], empty: list[str],
                   present: set[str], timed: bool = True) -> Iterator[Document | int]:
        """A file read as a stream: gunzipped when it is a .gz, decoded as it comes, handed on in pieces when it
        is huge; yields its Documents, then the bytes it read."""
        gzipped = False
        whole = isinstance(fh, bytes)  # a small file read whole (_Container.contents)
        if whole and name.endswith(".gz"):
            fh, whole = io.BytesIO(fh), False
        if name.endswith(".gz"):
            head = fh.read(2)
            fh = Prefixed(head, fh)
            if head == _GZIP_MAGIC:
                import gzip

                name, gzipped = name[:-3], True
                fh = gzip.GzipFile(fileobj=fh, mode="rb")
        offset, prev, lines_read = 0, None, 0
        split = self._splitter(name)
        # what a person pasted, not a file a collector wrote: a bundle's or must-gather's artifacts are read as written
        pasted = self.manifest is None and self.gather is None
        section: str | None = None  # a bug report's: the header of the section the last piece ended in
        got: StreamRead | None = None
        for got in (read_whole if whole else read_pieces)(fh, cap, PIECE_BYTES, PIECE_LINES):
            if got.text is None:
                break
            present.add(name)
            # a big piece that normalising would not change (but for tabs) keeps its lines as bytes: only the lines
            # a parser reads become strings (a big log's kept lines, sources/text.py ByteLines)
            big = byte_lines(got.text, piece=got.more or offset > 0) if section is None else None
            if big is not None and (offset or not bugreport.is_bug_report(big)):
                lines, notes = big, []
            else:
                lines, notes = normalise(got.text, paste=pasted and not (got.more or offset))
            del big
            got.text = None
            if got.note and not offset:
                notes.insert(0, got.note)
            for note in notes:
                gaps.append(Gap("artifact", note if not offset else f"{note} (lines {offset + 1}-{offset + len(lines)})", name))
            if not offset:
                docs = split(name, lines)
                meta = self._bug_report_meta(name) if got.more and bugreport.is_bug_report(lines) else None
                if meta is not None:  # a bug report: its later pieces are cut into sections too
                    split = lambda n, ls, meta=meta: bugreport.split(n, ls, meta)  # noqa: E731
                    section = bugreport.last_section(lines)
            elif section == "":  # the last piece ended on a section's separator: its header opens this one
                docs = _continued(name, [bugreport.SEPARATOR, *lines], offset - 1, None, split)
                section = bugreport.last_section([bugreport.SEPARATOR, *lines])
            else:
                head = prev is not None and (section is None or (bugreport.kept(section) and prev.meta.get("section") == section))
                limit = bugreport.first_separator(lines) if section is not None else len(lines)
                docs = _continued(name, lines, offset, prev if head else None, split, limit)
                if section is not None and (found := bugreport.last_section(lines)) is not None:
                    section = found
            if got.more and docs:
                docs[-1] = replace(docs[-1], meta={**docs[-1].meta, CONTINUED: True})
            offset += len(lines)
            del lines
            if docs and got.more:  # what the next piece needs of the last Document: its provenance, not its lines
                prev = replace(docs[-1], lines=())
            yield from docs
            del docs
            if got.more and timed and self._out_of_time():  # between two pieces of a huge file
                gaps.append(Gap(PARTIAL, f"cut at the time budget of {self.budgets.time_budget:g} s (--time-budget) after line "
                                         f"{offset:,}; the rest of the file was not read", name))
                yield got.size
                return
        if got is None:
            return
        lines_read = offset
        if got.text is None and got.why is not None:
            if got.error is not None and not got.size:
                gaps.append(Gap(PARTIAL, f"cannot read: {_reason(got.error, gzipped)}", name))
            elif got.why == "empty file":
                empty.append(name)
            elif offset:
                gaps.append(Gap(PARTIAL, f"{got.why} after line {offset}; the rest was not read", name))
            else:
                gaps.append(Gap("artifact", got.why or "unreadable", name))
            yield got.size
            return
        if got.error is not None:
            gaps.append(Gap(PARTIAL, f"cut short after {size_text(got.size)} ({_reason(got.error, gzipped)}); "
                                     f"only the first {lines_read} line(s) were read", name))
        if got.capped:
            if by_total:
                gaps.append(Gap(PARTIAL, f"cut at the budget of {size_text(self.budgets.max_total_bytes or 0)} read in all "
                                         f"(--max-total-bytes): only the first {lines_read} line(s) were read", name))
            else:
                gaps.append(Gap(PARTIAL, f"cut at --max-bytes {size_text(self.budgets.max_bytes or 0)}: only the first "
                                         f"{lines_read} line(s) were read (raise or drop --max-bytes to read it whole)", name))
        yield got.size

    def _bug_report_meta(self, name: str) -> dict | None:
        """The provenance the sections of a bug report get (a must-gather's node), or None when this file is not
        cut into sections (a bundle's artifact is one Document)."""
        if self.manifest is not None and name in self.records:
            return None
        bug = mustgather.bug_report_node(name) if self.gather is not None else None
        return {"node": bug, "source": "must-gather"} if bug else {}

    def _splitter(self, name: str) -> Callable[[str, list[str]], list[Document]]:
        """How a file becomes Documents, the way the source's kind says."""
        if self.manifest is not None:
            records = self.records
            if name in records:
                return lambda n, lines: [bundle.document(n, lines, records[n])]
            return _split
        if self.gather is not None:
            gather = self.gather
            return lambda n, lines: mustgather.documents(n, lines, gather, _split)
        return _split

    def _late_gaps(self, empty: list[str], present: set[str]) -> list[Gap]:
        """Gaps only the whole source shows: the bundle's own, files its manifest lists that are missing, empty files."""
        if self.manifest is not None:
            return bundle.gaps(self.manifest, present) + [Gap("artifact", "empty file", n) for n in empty]
        if self.gather is not None:
            return mustgather.gaps(self.gather, empty)
        return [Gap("artifact", "empty file", n) for n in empty]


def _continued(name: str, lines: list[str], offset: int, prev: Document | None, split, limit: int | None = None) -> list[Document]:
    """The Documents of a later piece of a huge file: what comes before its first split point goes on from the
    previous piece's last Document (same command and provenance; dropped when ``prev`` is None: a bug report's
    section that is not kept; it ends at ``limit`` at the latest: a bug report's next separator); line numbers go
    on from the previous piece."""
    docs = split(name, lines)
    out = []
    for d in docs:
        d = replace(d, first_line=d.first_line + offset)
        if prev is None:
            out.append(d)
            continue
        if d.first_line == offset + 1 and not out and (d.command is None or d.command == prev.command):
            d = replace(d, command=prev.command, path_hint=prev.path_hint, meta={**prev.meta, CONTINUES: True})
            d.meta.pop(CONTINUED, None)
        out.append(d)
    if prev is not None and (not out or out[0].first_line != offset + 1):
        head = len(lines) if not out else out[0].first_line - offset - 1
        if limit is not None and limit < head:  # a section ends here: without its trailing blank lines, as split() cuts it
            head = limit
            while head and not lines[head - 1].strip():
                head -= 1
        if any(ln.strip() for ln in lines[:head]):
            meta = {k: v for k, v in prev.meta.items() if k != CONTINUED}
            out.insert(0, Document(name, frozen(lines[:head]), offset + 1, command=prev.command, path_hint=prev.path_hint, meta={**meta, CONTINUES: True}))
    return out


def _split(name: str, lines: list[str]) -> list[Document]:
    """A file with no provenance: a bug report by its sections, anything else at its shell prompts."""
    if bugreport.is_bug_report(lines):
        return bugreport.split(name, lines)
    return split_documents(name, lines)


def _reason(exc: Exception, gzipped: bool) -> str:
    if isinstance(exc, MemoryError):
        return "out of memory while reading it"
    what = "the gzip stream is truncated or corrupt" if gzipped else "truncated or corrupt"
    return f"{what}: {exc}" if str(exc) else what


def _open(description: str, kind: str, container: _Container, budgets: Budgets | None) -> Source:
    reader = _Reader(description, kind, container, budgets)
    container.listing(reader)
    return reader.finish_listing()


def read_artifacts(description: str, kind: str, files, metadata: dict[str, bytes], budgets: Budgets | None = None) -> Source:
    """A source from (name, bytes) pairs held in memory (a live collection), read like files on disk."""
    files = list(files) + list(metadata.items())
    return _open(description, kind, _Memory(files), budgets)


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


def _open_regular(path: Path | str, follow: bool = True) -> BinaryIO:
    """A regular file opened for reading. Opened without blocking and checked on the open file itself, so a FIFO
    or device swapped in after a directory listing is refused, never waited on; inside a folder
    (``follow=False``) a link swapped in is not followed either."""
    return _stream_of(_open_regular_fd(path, follow)[0])


def _stream_of(fd: int) -> BinaryIO:
    """The open regular file's descriptor as a blocking binary stream; the descriptor is closed if that fails."""
    try:
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _open_regular_fd(path: Path | str, follow: bool = True) -> tuple[int, int]:
    """_open_regular's descriptor (still non-blocking, which a regular file ignores) and the file's size."""
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
        st = os.fstat(fd)
        kind = _special_kind(st.st_mode)
        if kind:
            raise NotRegular(f"{kind}; refused, not read")
        return fd, st.st_size
    except BaseException:
        os.close(fd)
        raise


def read_directory(root: Path, description: str | None = None, kind: str = "directory", max_bytes: int | None = None,
                   budgets: Budgets | None = None) -> Source:
    """Every file under ``root``, sorted, depth first (see _Directory)."""
    return _open(description or str(root), kind, _Directory(root), _budgets(budgets, max_bytes))


def _budgets(budgets: Budgets | None, max_bytes: int | None) -> Budgets:
    budgets = budgets or Budgets()
    if max_bytes is not None:
        budgets.max_bytes = max_bytes
    return budgets


def read_file(path: Path, max_bytes: int | None = None, budgets: Budgets | None = None, name: str | None = None,
              description: str | None = None) -> Source:
    return _open(description or str(path), "file", _File(path, name or path.name), _budgets(budgets, max_bytes))


SPOOL_IN_MEMORY = 32 << 20  # bytes of a pipe held in memory before they go to a temporary file


def _spool(fh: BinaryIO, budgets: Budgets) -> tuple[BinaryIO, bool]:
    """A stream copied aside, so that it can be listed and read like a file on disk (and read again for an HTML
    report): in memory up to SPOOL_IN_MEMORY (every paste), beyond it an unnamed owner-only temporary file the
    system removes when the run ends; at most the budget of bytes in all (and True when that cut it)."""
    import tempfile  # only a pipe needs it

    limit = budgets.max_total_bytes
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY, prefix="gpusleuth-")
    copied = 0
    try:
        while limit is None or copied < limit:
            chunk = fh.read(1 << 20 if limit is None else min(1 << 20, limit - copied))
            if not chunk:
                break
            spool.write(chunk)
            copied += len(chunk)
        cut = limit is not None and copied >= limit and bool(fh.read(1))
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool, cut


def _spooled_file(spool: BinaryIO, cut: bool, name: str, label: str, budgets: Budgets) -> Source:
    src = _open(label, "file", _Spooled(spool, name), budgets)
    src.keep.append(spool)
    if cut:
        src._gaps.append(_spool_gap(budgets, name))
    return src


def _spool_gap(budgets: Budgets, name: str | None) -> Gap:
    return Gap(PARTIAL, f"more than the budget of {size_text(budgets.max_total_bytes or 0)} read in all (--max-total-bytes) "
                        "came on the stream; the rest was not read", name)


class _Spooled(_Container):
    """A stream copied aside (in memory, or a temporary file when big): one file, read from its start each time."""

    def __init__(self, spool: BinaryIO, name: str):
        self.spool, self.name = spool, name

    def listing(self, reader: "_Reader") -> None:
        reader.listed(self.name, 0, None)

    def open(self, handle: int) -> BinaryIO:
        self.spool.seek(0)
        return _Unclosed(self.spool)


class _Unclosed(io.RawIOBase):
    """A view of the spool that closing does not close (the spool lives as long as its Source)."""

    def __init__(self, fh: BinaryIO):
        self.fh = fh

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        return self.fh.read(n)

    def readinto(self, b) -> int:
        data = self.fh.read(len(b))
        b[: len(data)] = data
        return len(data)


def _safe_member(name: str) -> str | None:
    """A member name as shown in evidence, or None when it tries to leave the archive."""
    clean = name.replace("\\", "/")
    if clean.startswith("/") or any(part == ".." for part in clean.split("/")) or (len(clean) > 1 and clean[1] == ":"):
        return None
    return clean.lstrip("./") or None


def read_tar(path: Path, max_bytes: int | None = None, budgets: Budgets | None = None) -> Source:
    import tarfile

    try:
        tarfile.open(path, "r:*").close()
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise SourceError(f"{path}: not a readable tar archive ({exc})") from None
    return _open(str(path), "archive", _Tar(lambda: tarfile.open(path, "r:*"), path.name), _budgets(budgets, max_bytes))


def read_zip(path: Path, max_bytes: int | None = None, budgets: Budgets | None = None) -> Source:
    import zipfile

    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceError(f"{path}: not a readable zip archive ({exc})") from None
    src = _open(str(path), "archive", _Zip(zf), _budgets(budgets, max_bytes))
    src.keep.append(zf)
    return src


def examples_root() -> Path:
    return Path(__file__).parent.parent / "examples"  # gpusleuth/examples (no importlib.resources: 8 ms to import)


def example_names() -> list[str]:
    root = examples_root()
    if not root.is_dir():  # an installation without bundled examples
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "example.toml").is_file())


def read_example(name: str, budgets: Budgets | None = None) -> Source:
    path = examples_root() / name
    if not (path / "example.toml").is_file():
        known = ", ".join(example_names()) or "none"
        raise SourceError(f"no bundled example named {name!r} (known: {known})")
    return read_directory(path, description=f"example:{name}", kind="example", budgets=budgets)


_STDIN_PATHS = {"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}


def _is_tar_head(head: bytes) -> bool:
    return len(head) >= 262 and head[257:262] == b"ustar"


def read_piped(fh: BinaryIO, name: str = STDIN, description: str | None = None, max_bytes: int | None = None,
               budgets: Budgets | None = None) -> Source:
    """What came on a pipe: a tar stream (plain or gzipped, `tar czf - dir |`) is read as an archive, a gzipped
    file is gunzipped, anything else is one pasted file named ``name``. The stream is copied aside first
    (_spool; up to the budget of bytes in all), so that it is read like a file on disk."""
    import tarfile

    budgets = _budgets(budgets, max_bytes)
    spool, cut = _spool(fh, budgets)
    head = spool.read(1024)
    spool.seek(0)
    label = description or name
    try:
        tar_mode = None
        if head[:2] == _GZIP_MAGIC:
            inner = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 512)
            if _is_tar_head(inner):
                tar_mode = "r:gz"
            else:
                return _spooled_file(spool, cut, name + ".gz", label, budgets)
        elif _is_tar_head(head):
            tar_mode = "r:"
        if tar_mode is None:
            return _spooled_file(spool, cut, name, label, budgets)

        def open_tar(mode: str = tar_mode) -> tarfile.TarFile:
            spool.seek(0)
            return tarfile.open(fileobj=_Unclosed(spool), mode=mode.replace(":", "|"))

        open_tar().close()
        src = _open(label, "archive", _Tar(open_tar, name), budgets)
    except (zlib.error, tarfile.TarError) as exc:
        spool.close()
        raise SourceError(f"{label}: not a readable archive ({exc})") from None
    src.keep.append(spool)
    if cut:
        src._gaps.append(_spool_gap(budgets, None))
    return src


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


def open_source(spec: str, max_bytes: int | None = None, stdin: BinaryIO | None = None, budgets: Budgets | None = None) -> Source:
    """The one entry point: SOURCE as the CLI takes it. ``-`` (and /dev/stdin) is standard input, read as one
    pasted file; a pipe such as ``<(kubectl get pods -A)`` is read the same way under its own name. Opening lists
    the source; its files are read as its documents are iterated."""
    budgets = _budgets(budgets, max_bytes)
    if spec.startswith("example:"):
        return read_example(spec.split(":", 1)[1], budgets)
    if spec == "-" or (spec in _STDIN_PATHS and not Path(spec).is_file()):
        import sys

        return read_piped(stdin or sys.stdin.buffer, STDIN, budgets=budgets)
    path = Path(spec).expanduser()
    if not path.exists():
        raise SourceError(f"{spec}: no such file or directory")
    if path.is_dir():
        return read_directory(path, budgets=budgets)
    lower = path.name.lower()
    try:
        if not path.is_file():  # a pipe: read once, as a stream; a device or socket: refused
            special = _special_kind(path.stat().st_mode)  # stat, never open: a device may never end
            if special != "a FIFO (named pipe)":
                raise SourceError(f"{spec}: {special}, not a file, folder, archive or pipe; refused")
            fh = _open_fifo(path, spec)
            try:
                return read_piped(fh, STDIN if spec in _STDIN_PATHS else path.name, spec, budgets=budgets)
            finally:
                fh.rest.close()
        if lower.endswith((".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")):
            return read_tar(path, budgets=budgets)
        if lower.endswith(".zip"):
            return read_zip(path, budgets=budgets)
        import tarfile

        if tarfile.is_tarfile(path):
            return read_tar(path, budgets=budgets)
        with path.open("rb"):  # a permission problem is the source's, said now
            pass
        return read_file(path, budgets=budgets)
    except PermissionError:
        raise SourceError(f"{spec}: permission denied") from None
    except IsADirectoryError:
        raise SourceError(f"{spec}: is a directory") from None
