"""Build the archive the krew manifest points at, byte for byte the same every time, and print its sha256.

    python deploy/krew/package.py                      # dist/kubectl-gpusleuth-vX.Y.Z.tar.gz and its sha256
    python deploy/krew/package.py --update-manifest    # also write that sha256 (and version) into gpusleuth.yaml

Install from a checkout without a release: kubectl krew install --manifest=deploy/krew/gpusleuth.yaml
--archive=dist/kubectl-gpusleuth-vX.Y.Z.tar.gz. The archive holds only the launcher (kubectl-gpusleuth), which
installs the matching gpusleuth release from PyPI on first use.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def version() -> str:
    text = (ROOT / "src" / "gpusleuth" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'__version__ = "([^"]+)"', text).group(1)


def build(out_dir: Path) -> tuple[Path, str]:
    """The archive in out_dir and its sha256: fixed times, owners and modes, so the digest is reproducible."""
    launcher = (HERE / "kubectl-gpusleuth").read_bytes()
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        info = tarfile.TarInfo("kubectl-gpusleuth")
        info.size, info.mode, info.mtime, info.uid, info.gid, info.uname, info.gname = len(launcher), 0o755, 0, 0, 0, "", ""
        tf.addfile(info, io.BytesIO(launcher))
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0) as gz:
        gz.write(raw.getvalue())
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"kubectl-gpusleuth-v{version()}.tar.gz"
    path.write_bytes(packed.getvalue())
    return path, hashlib.sha256(packed.getvalue()).hexdigest()


def main(argv: list[str]) -> int:
    path, digest = build(ROOT / "dist")
    print(f"{path} sha256 {digest}")
    if "--update-manifest" in argv:
        manifest = HERE / "gpusleuth.yaml"
        text = manifest.read_text(encoding="utf-8")
        text = re.sub(r"sha256: [0-9a-f]{64}", f"sha256: {digest}", text)
        text = re.sub(r"version: v[0-9][^\s]*", f"version: v{version()}", text)
        text = re.sub(r"/v[0-9][^/\s]*/kubectl-gpusleuth-v[0-9][^\s]*\.tar\.gz", f"/v{version()}/{path.name}", text)
        manifest.write_text(text, encoding="utf-8")
        print(f"updated {manifest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
