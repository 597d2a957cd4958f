"""Rewrite the `lines = [...]` of knowledge/incidents/*.toml in normalised form.

Incidents are written with the lines as a thread printed them; this replaces their variable parts (numbers,
hashes, addresses, quoted values, pod suffixes, paths) with "…" by the same `normalise` the accounting checks
use (through analysis/seen_before.py line_shape, which keeps the words of a structured log line that are all
quoted), so that the corpus holds the shape of each message. Idempotent; run after adding rows:

    PYTHONPATH=src python tools/incidents/normalise.py [FILE ...]
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

from gpusleuth.analysis.seen_before import line_shape
from gpusleuth.checks.accounting import normalise  # noqa: F401 - the one normalisation; line_shape builds on it

FOLDER = Path(__file__).resolve().parents[2] / "src" / "gpusleuth" / "knowledge" / "incidents"


def toml_string(s: str) -> str:
    if "'" not in s and "\n" not in s:
        return f"'{s}'"
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def rewrite(text: str) -> str:
    out = []
    for line in text.splitlines():
        if line.startswith("lines = ["):
            values = tomllib.loads(line)["lines"]
            kept = []
            for v in values:
                n = line_shape(v)
                if n and n not in kept:
                    kept.append(n)
            line = "lines = [" + ", ".join(toml_string(v) for v in kept) + "]"
        out.append(line)
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    files = [Path(a) for a in argv] or sorted(FOLDER.glob("*.toml"))
    for f in files:
        text = f.read_text(encoding="utf-8")
        new = rewrite(text)
        tomllib.loads(new)
        if new != text:
            f.write_text(new, encoding="utf-8")
            print(f"normalised {f.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
