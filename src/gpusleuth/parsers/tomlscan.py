"""A line index for TOML files, and a tolerant reader for the ones tomllib rejects.

tomllib gives values but no line numbers, and nothing at all for a file with one bad line. Engines'
configs arrive pasted, truncated, hand-edited or as Go templates, so this module reads them line by
line: table headers, `key = value` lines (multi-line arrays too), and remembers where each dotted key
was set. For a valid file only the lines are used; for an invalid one its values are the best reading
there is, and every duplicate or unreadable line is reported with its number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEADER = re.compile(r"^\s*\[(?P<array>\[)?(?P<key>[^\[\]]+)\](?(array)\])\s*(?:#.*)?$")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_TEMPLATE_ONLY = re.compile(r"^\s*(?:\{\{.*?\}\}\s*)+$")
_TEMPLATE = re.compile(r"\{\{.*?\}\}")
_UNQUOTED_TEMPLATE_VALUE = re.compile(r"=\s*(\{\{.*?\}\})\s*(?:#.*)?$")

Path = tuple[str, ...]


@dataclass
class Scan:
    data: dict = field(default_factory=dict)  # values, last assignment wins
    lines: dict[Path, int] = field(default_factory=dict)  # dotted path -> 0-based line index (first seen)
    tables: dict[Path, int] = field(default_factory=dict)  # header path -> line index
    duplicates: list[tuple[Path, int, int]] = field(default_factory=list)  # (path, first, again)
    errors: list[tuple[int, str]] = field(default_factory=list)  # (line index, why)
    template_lines: list[int] = field(default_factory=list)

    def line(self, *path: str) -> int | None:
        return self.lines.get(tuple(path), self.tables.get(tuple(path)))


def dotted(path: Path) -> str:
    """('plugins', 'io.containerd.grpc.v1.cri') -> plugins."io.containerd.grpc.v1.cri" as TOML writes it."""
    return ".".join(p if _BARE.fullmatch(p) else f'"{p}"' for p in path)


def split_key(text: str) -> Path | None:
    """`plugins."io.containerd.grpc.v1.cri".containerd` -> ('plugins', 'io.containerd.grpc.v1.cri', 'containerd')."""
    parts: list[str] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            return None
        if text[i] in "\"'":
            quote = text[i]
            j = i + 1
            buf = []
            while j < n and text[j] != quote:
                if quote == '"' and text[j] == "\\" and j + 1 < n:
                    buf.append(text[j + 1])
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            if j >= n:
                return None
            parts.append("".join(buf))
            i = j + 1
        else:
            m = _BARE.match(text, i)
            if not m:
                return None
            parts.append(m.group(0))
            i = m.end()
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            return tuple(parts)
        if text[i] != ".":
            return None
        i += 1


def _split_assignment(line: str) -> tuple[str, str] | None:
    """(key, value text) of `key = value`, with the `=` found outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "=":
            return line[:i].strip(), line[i + 1 :].strip()
        elif ch == "#":
            return None
    return None


def _balance(text: str) -> int:
    """Open brackets minus closed ones, outside strings and comments."""
    depth, quote = 0, None
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            break
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
    return depth


_SIMPLE_STRING = re.compile(r'^"([^"\\]*)"\s*(?:#.*)?$|^\'([^\']*)\'\s*(?:#.*)?$')
_SIMPLE_SCALAR = re.compile(r"^(true|false|[+-]?\d+)\s*(?:#.*)?$")


def _value(text: str):
    simple = _SIMPLE_STRING.match(text)
    if simple:
        return simple.group(1) if simple.group(1) is not None else simple.group(2), True
    scalar = _SIMPLE_SCALAR.match(text)
    if scalar:
        word = scalar.group(1)
        return (word == "true") if word in ("true", "false") else int(word), True
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"], True
    except tomllib.TOMLDecodeError:
        raw = text.split("#", 1)[0].strip() if not text.startswith(("'", '"')) else text
        return raw.strip().strip("\"'"), False


def _assign(scan: Scan, path: Path, value, index: int) -> None:
    cur = scan.data
    for part in path[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[part] = nxt
        cur = nxt
    cur[path[-1]] = value
    if path in scan.lines:
        scan.duplicates.append((path, scan.lines[path], index))
    else:
        scan.lines[path] = index


def untemplate(lines: list[str] | tuple[str, ...]) -> tuple[list[str], list[int], list[int]]:
    """Go template (k3s/RKE2 config.toml.tmpl) -> TOML-shaped lines: action-only lines blanked, inline
    actions turned into strings. Line count is kept. Returns the lines, the indexes blanked and the
    indexes whose values were stubbed."""
    out, blanked, stubbed = [], [], []
    for i, ln in enumerate(lines):
        if "{{" not in ln:
            out.append(ln)
            continue
        if _TEMPLATE_ONLY.match(ln):
            blanked.append(i)
            out.append("")
            continue
        stubbed.append(i)
        m = _UNQUOTED_TEMPLATE_VALUE.search(ln)
        if m:
            ln = ln[: m.start(1)] + '"{{template}}"' + ln[m.end(1) :]
        out.append(_TEMPLATE.sub("{{template}}", ln))
    return out, blanked, stubbed


def scan(lines: list[str] | tuple[str, ...], read_values: bool = True) -> Scan:
    """Read TOML-shaped lines tolerantly (see module doc). Without read_values only the lines are
    indexed (tomllib already gave the values)."""
    result = Scan()
    table: Path = ()
    i, n = 0, len(lines)
    while i < n:
        raw = lines[i]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        if stripped.startswith("["):
            m = _HEADER.match(raw)
            key = split_key(m.group("key")) if m else None
            if key is None:
                result.errors.append((i, "unreadable table header"))
                table = ("?",)
            else:
                table = key
                if key in result.tables and not m.group("array"):
                    result.duplicates.append((key, result.tables[key], i))
                result.tables.setdefault(key, i)
                cur = result.data
                for part in key:
                    nxt = cur.get(part)
                    if not isinstance(nxt, dict):
                        nxt = {}
                        cur[part] = nxt
                    cur = nxt
            i += 1
            continue
        parts = _split_assignment(raw)
        if parts is None:
            result.errors.append((i, "not a `key = value` line"))
            i += 1
            continue
        key_text, value_text = parts
        key = split_key(key_text)
        if key is None:
            result.errors.append((i, f"unreadable key {key_text[:60]!r}"))
            i += 1
            continue
        start = i
        depth = _balance(value_text)
        if depth > 0 or value_text.startswith(('"""', "'''")) and value_text.count(value_text[:3]) < 2:
            closer = value_text[:3] if value_text.startswith(('"""', "'''")) else None
            parts = [value_text]
            while i + 1 < n:  # depth is kept per line: a hostile unclosed `[` stays linear
                i += 1
                parts.append(lines[i])
                depth += 0 if closer else _balance(lines[i])
                if (closer and lines[i].count(closer)) or (not closer and depth <= 0):
                    break
            value_text = "\n".join(parts)
        value, ok = _value(value_text) if read_values else (None, True)
        if not ok:
            result.errors.append((start, f"unreadable value for {'.'.join(key)}"))
        _assign(result, table + key, value, start)
        i += 1
    return result
