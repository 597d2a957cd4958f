"""Write a collection as a bundle: a directory or a .tar.gz, laid out as docs/bundle.md describes.

Everything is already redacted (the collector redacts before an artifact exists). Files are written
owner-only (0600, directories 0700), into a temporary name first and renamed at the end, so a bundle on
disk is always complete. manifest.json lists every artifact with its provenance.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import tempfile
import time
from pathlib import Path

from gpusleuth.live.collect import Collection


def is_archive(out: str | Path) -> bool:
    return str(out).endswith((".tar.gz", ".tgz"))


def default_name() -> str:
    return time.strftime("gpusleuth-bundle-%Y%m%d-%H%M%S.tar.gz", time.gmtime())


def _members(collection: Collection):
    for a in collection.artifacts:
        yield a.name, a.data
    yield "manifest.json", (json.dumps(collection.manifest, indent=2, ensure_ascii=False) + "\n").encode()


def refuse_existing(out: str | Path) -> None:
    """FileExistsError when a bundle may not be written to `out`: anything that exists there but an empty
    directory. Checked before collecting too, so minutes of collection are not lost to a name."""
    out = Path(out)
    if is_archive(out):
        if out.exists():
            raise FileExistsError(f"{out} exists; not overwriting it")
    elif out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out} exists and is not an empty directory; not overwriting it")


def write_bundle(collection: Collection, out: str | Path) -> Path:
    """Write the bundle; refuses to overwrite anything that exists (other than an empty directory)."""
    out = Path(out)
    refuse_existing(out)
    if is_archive(out):
        top = out.name[: -len(".tar.gz")] if out.name.endswith(".tar.gz") else out.name[: -len(".tgz")]
        fd, tmp = tempfile.mkstemp(prefix=".gpusleuth-", suffix=".tar.gz", dir=out.parent or ".")
        try:
            with os.fdopen(fd, "wb") as fh, tarfile.open(fileobj=fh, mode="w:gz") as tar:
                now = time.time()
                for name, data in _members(collection):
                    info = tarfile.TarInfo(f"{top}/{name}")
                    info.size, info.mtime, info.mode = len(data), now, 0o600
                    tar.addfile(info, io.BytesIO(data))
            os.chmod(tmp, 0o600)
            os.replace(tmp, out)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return out
    tmp_dir = Path(tempfile.mkdtemp(prefix=".gpusleuth-", dir=out.parent if str(out.parent) else "."))
    try:
        for name, data in _members(collection):
            path = tmp_dir / name
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with open(path, "wb", opener=lambda p, f: os.open(p, f, 0o600)) as fh:
                fh.write(data)
        if out.exists():
            out.rmdir()
        os.replace(tmp_dir, out)
    except BaseException:
        shutil.rmtree(tmp_dir, ignore_errors=True)
        raise
    return out
