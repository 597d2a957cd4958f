"""The message catalogue (knowledge/messages/*.toml): what each component prints when it fails.

Rows are format strings read from the components' sources; a placeholder (`%v`, `%s`, `${VAR}`, `{}`) becomes
"anything". All patterns are matched in one re2.Set pass, so asking which messages a line is costs one linear
scan whatever the catalogue's size. The most specific match (the most fixed text) names the message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Iterator

import re2

from gpusleuth.knowledge import folder
from gpusleuth.model.layers import Layer

LEVELS = frozenset({"error", "fatal", "warning"})
STYLES = frozenset({"go", "c", "shell", "python", "literal"})
MIN_FIXED = 12  # characters of fixed text a format needs to name one message rather than many

# Placeholders by style. Go/C verbs with flags, width, precision and C length modifiers; shell expansions
# ($VAR, ${VAR...}, $(...), `...`); Python's {} / {name} / %s / %(name)s.
_PLACEHOLDER = {
    "go": re.compile(r"%[-+# 0]*(?:\[\d+\])?(?:\d+|\*)?(?:\.(?:\d+|\*))?[vTtbcdoOqxXUeEfFgGsqpw]"),
    "c": re.compile(r"%[-+# 0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|z|j|t|q)?[diouxXeEfFgGaAcspn]"),
    "shell": re.compile(r"\$\{[^}]*\}|\$\([^)]*\)|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?]|`[^`]*`"),
    "python": re.compile(r"\{[^{}]*\}|%(?:\([^)]*\))?[-+# 0]*\d*(?:\.\d+)?[sdrifxXeEgG]"),
    "literal": re.compile(r"(?!)"),
}
_SPECIAL = frozenset("\\.^$|?*+()[]{}")
_ESCAPED = str.maketrans({c: "\\" + c for c in _SPECIAL})


def _escape(text: str) -> str:
    return text.translate(_ESCAPED)


def fixed_parts(fmt: str, style: str) -> list[str]:
    """The literal runs of a format string, in order ("%%" read as "%")."""
    parts = _PLACEHOLDER[style].split(fmt.replace("%%", "\x00"))
    return [p.replace("\x00", "%") for p in parts if p.strip()]


def pattern_of(fmt: str, style: str) -> str:
    """An RE2 pattern for the lines a format string prints: its literal runs in order, anything between."""
    return _pattern([p.strip() for p in fixed_parts(fmt, style)])


def _pattern(stripped: list[str]) -> str:
    return ".*".join(_escape(p) for p in stripped if p)


@dataclass(frozen=True, slots=True)
class Component:
    name: str
    repository: str
    version: str
    layer: Layer
    tracker: str
    style: str
    programs: tuple[str, ...] = ()
    pods: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Message:
    component: Component
    id: str
    format: str
    pattern: str
    level: str
    layer: Layer
    where: str
    doing: str
    causes: tuple[str, ...]
    fixed: int  # characters of fixed text: how specific the message is
    benign: bool = False
    example: str | None = None

    @property
    def key(self) -> str:
        return f"{self.component.name}/{self.id}"

    def search_terms(self) -> str:
        """The message's longest fixed run: what to search an issue tracker for."""
        return max(fixed_parts(self.format, self.component.style), key=len, default=self.format).strip(" :,.")


class CatalogueError(ValueError):
    """A row of knowledge/messages/*.toml that cannot be used (raised at load: a bad row fails in tests, not at 3 a.m.)."""


def _component(src: dict, where: str) -> Component:
    missing = [k for k in ("component", "repository", "version", "layer", "tracker", "style") if k not in src]
    if missing:
        raise CatalogueError(f"{where}: [source] lacks {', '.join(missing)}")
    if src["style"] not in STYLES:
        raise CatalogueError(f"{where}: style must be one of {sorted(STYLES)}")
    for k in ("repository", "tracker"):
        if not str(src[k]).startswith("https://"):
            raise CatalogueError(f"{where}: {k} must be an https URL")
    return Component(src["component"], src["repository"], str(src["version"]), Layer(src["layer"]), src["tracker"],
                     src["style"], tuple(src.get("programs", ())), tuple(src.get("pods", ())))


def _message(row: dict, comp: Component, where: str) -> Message:
    missing = [k for k in ("id", "format", "level", "where", "doing") if k not in row]
    if missing:
        raise CatalogueError(f"{where}: message {row.get('id', '?')} lacks {', '.join(missing)}")
    if row["level"] not in LEVELS:
        raise CatalogueError(f"{where}: message {row['id']}: level must be one of {sorted(LEVELS)}")
    stripped = [p.strip() for p in fixed_parts(row["format"], comp.style)]
    fixed = sum(map(len, stripped))
    pattern = row.get("pattern") or _pattern(stripped)
    if "pattern" not in row and fixed < MIN_FIXED:
        raise CatalogueError(f"{where}: message {row['id']}: {row['format']!r} has too little fixed text to name a message")
    return Message(comp, row["id"], row["format"], pattern, row["level"], Layer(row.get("layer", comp.layer.value)),
                   row["where"], row["doing"], tuple(row.get("causes", ())), fixed, bool(row.get("benign", False)),
                   row.get("example"))


def load(texts: dict[str, str]) -> "Catalogue":
    """A catalogue from {file name: TOML text}; CatalogueError names the file and row of a bad one."""
    import tomllib

    tables = {}
    for name, text in texts.items():
        try:
            tables[name] = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise CatalogueError(f"{name}: {exc}") from None
    return build(tables)


def build(tables: dict[str, dict]) -> "Catalogue":
    """A catalogue from {file name: parsed TOML}, in file name order; CatalogueError names a bad row."""
    comps: list[Component] = []
    msgs: list[Message] = []
    for name, data in sorted(tables.items()):
        comp = _component(data.get("source", {}), name)
        comps.append(comp)
        ids: set[str] = set()
        for row in data.get("message", []):
            m = _message(row, comp, name)
            if m.id in ids:
                raise CatalogueError(f"{name}: duplicate message id {m.id}")
            ids.add(m.id)
            msgs.append(m)
    return Catalogue(tuple(comps), tuple(msgs))


class Catalogue:
    def __init__(self, components: tuple[Component, ...], messages: tuple[Message, ...]):
        self.components = components
        self.messages = messages
        opts = re2.Options()
        opts.max_mem = 256 << 20
        self._set = re2.Set.SearchSet(opts)
        for m in messages:
            try:
                self._set.Add(m.pattern)
            except Exception as exc:  # noqa: BLE001 - re2 raises a bare error; name the row
                raise CatalogueError(f"{m.key}: pattern {m.pattern!r} is not RE2: {exc}") from None
        if messages:
            self._set.Compile()
        self._by_name = {c.name: c for c in components}
        programs = sorted({(p, c.name) for c in components for p in c.programs}, key=lambda pc: -len(pc[0]))
        self._programs = re.compile("|".join(rf"(?<![\w-])(?P<p{i}>{re.escape(p)})(?![\w-])" for i, (p, _) in enumerate(programs))) if programs else None
        self._program_names = [c for _, c in programs]

    def match(self, text: str) -> list[Message]:
        """The messages text can be, best first: the innermost (a wrapped error's cause is printed last, so the
        match that starts furthest right), then the most specific (the most fixed text)."""
        if not self.messages:
            return []
        found = [self.messages[i] for i in self._set.Match(text) or ()]
        if len(found) < 2:
            return found
        return sorted(found, key=lambda m: (-_start(m.pattern, text), -m.fixed, m.key))

    def errors_in(self, text: str) -> list[Message]:
        """The error and fatal messages (not benign) that occur anywhere in text: one pass over a whole log."""
        if not self.messages:
            return []
        return [m for i in self._set.Match(text) or () if (m := self.messages[i]).level in ("error", "fatal") and not m.benign]

    def component(self, name: str) -> Component | None:
        return self._by_name.get(name)

    def by_program(self, text: str) -> str | None:
        """The component whose program name the text mentions (`nvidia-container-cli: ...`), if any."""
        if self._programs is None:
            return None
        m = self._programs.search(text)
        return self._program_names[int(m.lastgroup[1:])] if m else None

    def by_pod(self, pod: str) -> str | None:
        """The component whose pods' names start as this one's does (longest prefix wins)."""
        best = max(((p, c.name) for c in self.components for p in c.pods if pod.startswith(p)), default=None, key=lambda pc: len(pc[0]))
        return best[1] if best else None

    def counts(self) -> dict[str, int]:
        out = {c.name: 0 for c in self.components}
        for m in self.messages:
            out[m.component.name] += 1
        return out


@cache
def compiled(pattern: str) -> "re2._Regexp":
    """A catalogue pattern compiled once (RE2: linear time on any input)."""
    return re2.compile(pattern)


def starts(regex: "re2._Regexp", text: str) -> Iterator[int]:
    """Where an RE2 pattern matches in text, as offsets into the str. An ASCII text is searched as bytes, where byte
    offsets are character offsets: re2's wrapper then skips converting each match's offsets back (3x faster on a
    log with thousands of matching lines)."""
    if text.isascii():
        return (m.start() for m in regex.finditer(text.encode("ascii")))
    return (m.start() for m in regex.finditer(text))


def _start(pattern: str, text: str) -> int:
    m = compiled(pattern).search(text)
    return m.start() if m else 0


@cache
def catalogue() -> Catalogue:
    return build({f"{name}.toml": data for name, data in folder("messages").items()})
