"""Helm release Secrets (driver "secret", label owner=helm) decoded to what a diagnosis needs.

``data.release`` is base64 (the API's layer) of base64 (Helm's layer) of gzipped JSON; the ConfigMap driver
has only Helm's layer. Of the release only name, namespace, revision, info, chart metadata, chart default
values and the user's values (``config``) are kept: templates, files and the rendered manifest are
dropped, and secrets in the values are redacted by the caller.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import io
import json
import zlib

MAX_RELEASE_BYTES = 64 * 1024 * 1024


class HelmDecodeError(ValueError):
    pass


def _b64(data: str | bytes) -> bytes:
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise HelmDecodeError(f"not base64: {exc}") from None


def decode_release(encoded: str, api_layer: bool = True) -> dict:
    """The release JSON from a Secret's ``data.release`` (api_layer) or a ConfigMap's (not)."""
    raw = _b64(_b64(encoded)) if api_layer else _b64(encoded)
    if raw[:3] == b"\x1f\x8b\x08":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
                raw = gz.read(MAX_RELEASE_BYTES + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise HelmDecodeError(f"bad gzip: {exc}") from None
        if len(raw) > MAX_RELEASE_BYTES:
            raise HelmDecodeError("release larger than 64 MiB")
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise HelmDecodeError(f"not JSON after decoding: {exc}") from None
    if not isinstance(doc, dict) or "name" not in doc:
        raise HelmDecodeError("decoded JSON is not a Helm release")
    return doc


def essentials(release: dict) -> dict:
    """The parts of a release kept in a bundle (same field names as Helm's JSON)."""
    chart = release.get("chart") or {}
    return {
        "name": release.get("name"),
        "namespace": release.get("namespace"),
        "version": release.get("version"),
        "info": {k: v for k, v in (release.get("info") or {}).items() if k in ("status", "first_deployed", "last_deployed", "description")},
        "chart": {"metadata": chart.get("metadata") or {}, "values": chart.get("values") or {}},
        "config": release.get("config") or {},
    }


def encode_release(release: dict) -> str:
    """The inverse of decode_release for a Secret: what ``serve`` hands out for a decoded release."""
    inner = base64.b64encode(gzip.compress(json.dumps(release).encode(), mtime=0))
    return base64.b64encode(inner).decode()


def latest(secrets: list[dict]) -> list[dict]:
    """The newest revision of each release (by the ``version`` label), as Helm itself reads them."""
    best: dict[tuple, tuple[int, dict]] = {}
    for s in secrets:
        labels = (s.get("metadata") or {}).get("labels") or {}
        key = ((s.get("metadata") or {}).get("namespace"), labels.get("name"))
        try:
            rev = int(labels.get("version", "0"))
        except ValueError:
            rev = 0
        if key not in best or rev > best[key][0]:
            best[key] = (rev, s)
    return [s for _, s in best.values()]
