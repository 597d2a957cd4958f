"""The configuration schemas of the GPU stack's components, as data (knowledge/schemas/*.json).

Each file is {"provenance": {...}, "schema": {...}}: where it was read (repository, files, the refs it was
merged from, the newest ref and its commit) and a JSON Schema subset. Generated files are rebuilt with
`python tools/schemas/generate.py NAME`; hand-curated ones say "curated" in their provenance and list the
documents they follow. `x-since` / `x-removed` on a field name the first version that has it / no longer has
it; `x-deprecated` the source's deprecation note; `x-known` on an open map lists the keys its reader knows.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache

from gpusleuth.knowledge import KNOWLEDGE

REQUIRED_PROVENANCE = ("source", "version", "refs")


@dataclass(frozen=True)
class ConfigSchema:
    name: str
    schema: dict
    provenance: dict

    @property
    def version(self) -> str:
        return str(self.provenance.get("version"))

    @property
    def cite(self) -> str:
        p = self.provenance
        commit = f" ({p['commit'][:12]})" if p.get("commit") else ""
        return f"{p.get('source')} at {self.version}{commit}"


def names() -> list[str]:
    return sorted(f.name[:-5] for f in (KNOWLEDGE / "schemas").iterdir() if f.name.endswith(".json"))


@cache
def load(name: str) -> ConfigSchema:
    text = (KNOWLEDGE / "schemas" / f"{name}.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return ConfigSchema(name, data["schema"], data["provenance"])


def vkey(version: str | None) -> tuple[int, ...] | None:
    """v0.17.0, specs-go/v1.1.0, 25.3.0, v1.7.27 -> (0, 17, 0) ...; None when no digits."""
    if not version:
        return None
    m = re.search(r"(\d+(?:\.\d+)*)", str(version).rsplit("/", 1)[-1])
    return tuple(int(x) for x in m.group(1).split(".")) if m else None
