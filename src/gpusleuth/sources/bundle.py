"""A gpusleuth bundle (or a live run, which is read the same way): manifest.json says what each file is.

Every artifact listed in the manifest becomes exactly one Document carrying its provenance: the command a
human would have typed (``kubectl logs -n gpu-operator nvidia-driver-daemonset-x -c nvidia-driver-ctr
--previous``) in ``command``, the host path of a node file in ``path_hint``, the whole record in ``meta``.
Nothing is split at shell prompts: a log line that looks like a prompt stays a log line. The collection's
gaps (403s, timeouts) become the source's gaps, and its capture time the time ages are measured from.
"""

from __future__ import annotations

import json
from datetime import datetime

from gpusleuth.model.document import Document
from gpusleuth.model.finding import Gap
from gpusleuth.sources.text import frozen

SCHEMA = "gpusleuth/bundle/v1"


def load_manifest(data: bytes) -> dict | None:
    """The manifest, or None when this manifest.json is not one of ours."""
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("artifacts"), list):
        return None
    return doc


def captured_at(manifest: dict) -> datetime | None:
    try:
        return datetime.fromisoformat(str(manifest.get("captured_at")).replace("Z", "+00:00"))
    except ValueError:
        return None


def records(manifest: dict) -> dict[str, dict]:
    """name -> the manifest's record of that artifact."""
    return {r.get("name"): r for r in manifest["artifacts"] if isinstance(r, dict)}


def order(manifest: dict) -> dict[str, int]:
    """name -> its place in the manifest: files are read in this order (those it does not list after them)."""
    return {name: i for i, name in enumerate(records(manifest))}


def document(name: str, lines: list[str], rec: dict) -> Document:
    """An artifact the manifest lists: one Document with its provenance, never split at shell prompts."""
    return Document(name, frozen(lines), 1, command=rec.get("command"), path_hint=rec.get("path"), meta=rec)


def gaps(manifest: dict, present: set[str]) -> list[Gap]:
    """The collection's own gaps (403s, timeouts), then files the manifest lists that the bundle lacks."""
    recs = records(manifest)
    out = [Gap(g.get("what", "?"), g.get("why", "?"), g.get("artifact")) for g in manifest.get("gaps", []) if isinstance(g, dict)]
    out.extend(Gap("artifact", "listed in manifest.json but missing from the bundle", n) for n in recs if n not in present and not recs[n].get("empty"))
    return out


def documents(texts: list[tuple[str, list[str]]], manifest: dict, fallback) -> tuple[list[Document], list[Gap]]:
    """(documents in manifest order, gaps) of files read whole; files the manifest does not list go through
    `fallback`."""
    recs, at = records(manifest), order(manifest)
    docs: list[Document] = []
    for name, lines in sorted(texts, key=lambda t: (at.get(t[0], len(at)), t[0])):
        docs.extend([document(name, lines, recs[name])] if name in recs else fallback(name, lines))
    return docs, gaps(manifest, {name for name, _ in texts})
