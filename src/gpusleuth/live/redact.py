"""Redaction before anything is written: Secret data, credential-like keys and values, bearer tokens.

Rules: knowledge/live.toml [redact] (secret key names, site value patterns) and live/secrets.py (the shapes
secret scanners know: cloud keys, tokens, private keys, passwords in URLs, headers, flags, env and connection
strings). Objects are walked key by key (a value under a secret-looking key is replaced, unless the key only
names a secret: ``imagePullSecrets``, ``secretName``); ``{name, value}`` pairs (container env, ClusterPolicy
``toolkit.env``, Helm values) are judged by ``name``; in a list of strings (container ``args``/``command``) a
flag that names a secret (``--registry-password``, ``-u``) hides the element after it; every remaining string
and every text artifact (logs, node files) is scanned for credential-shaped values. The walk uses no
recursion and visits each string once. The report says where and by which rule, never what.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache

from gpusleuth.knowledge import table
from gpusleuth.live.secrets import RULES, secret_span

MASK = "<redacted>"
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


@dataclass(frozen=True)
class _Rules:
    secret_key: re.Pattern
    reference_key: re.Pattern
    values: tuple[re.Pattern, ...]
    any_value: re.Pattern  # all value patterns in one: most strings match none, and are scanned once


def _scoped(pattern: str) -> str:
    """One alternative of the combined pattern: leading flags scoped to it, group names dropped."""
    pattern = re.sub(r"\(\?P<\w+>", "(", pattern)
    m = re.match(r"\(\?([aiLmsux]+)\)", pattern)
    return f"(?{m.group(1)}:{pattern[m.end():]})" if m else f"(?:{pattern})"


@cache
def _rules() -> _Rules:
    t = table("live")["redact"]
    values = tuple(re.compile(p) for p in t["secret_values"])
    combined = re.compile("|".join(_scoped(p.pattern) for p in values))
    return _Rules(re.compile(t["secret_keys"]), re.compile(t["reference_keys"]), values, combined)


# Key names the live.toml list does not cover: short password names, connection strings, key files and the
# kubeconfig's embedded key. Judged on the key alone, or on the dotted path (``tls.key`` in Helm values).
_MORE_SECRET_KEYS = re.compile(
    r"(?i)(?:pass$|_pass_|pwd|passphrase|dsn$|connection[-_]?string|conn[-_]?str|account[-_]?key|webhook[-_]?url$|webhook$"
    r"|signing[-_]?key|encryption[-_]?key|(?:^|[._-])(?:tls|ssl)[._-]?key$|\.key$|client[-_]?key[-_]?data|private[-_]?key)")
_SECRET_PATH = re.compile(r"(?i)(?:^|\.)(?:tls|ssl)\.key$")
# An argument that names a secret and carries its value in the next argument: ["--registry-password", "X"].
_SECRET_FLAG = re.compile(
    r"(?i)^--?[\w.-]*(?:password|passwd|passphrase|pwd|secret|token|api[-_]?key|apikey|access[-_]?key|private[-_]?key|credentials?|auth[-_]?key)$")
_USER_FLAG = re.compile(r"^(?:-u|--user|--proxy-user)$")
_REFERENCE_FLAG = re.compile(r"(?i)(?:file|path|dir|name|ref)$")


def _sub(pattern: re.Pattern, text: str) -> tuple[str, int]:
    tail = "tail" in pattern.groupindex

    def repl(m: re.Match) -> str:
        return m.group(1) + MASK + (m.group("tail") if tail else "")

    return pattern.subn(repl, text)


@lru_cache(maxsize=8192)  # the same few hundred keys and env names, over and over
def secret_key(key: str) -> bool:
    if key == "PWD":  # the shell's working directory, not a password
        return False
    r = _rules()
    return bool(r.secret_key.search(key) or _MORE_SECRET_KEYS.search(key)) and not r.reference_key.search(key)


@cache
def _any_needle() -> re.Pattern:
    return re.compile("|".join(sorted({re.escape(n) for r in RULES for n in r.needles})))


@cache
def _lowered(pattern: re.Pattern) -> re.Pattern | None:
    """A case-insensitive rule as a plain pattern for lower-cased text (its literals are lower case): Python's
    regex engine scans a case-sensitive pattern many times faster."""
    if not pattern.flags & re.IGNORECASE or not pattern.pattern.startswith("(?i)"):
        return None
    return re.compile(pattern.pattern[4:])


def _replace(rule, text: str, lower: str) -> tuple[str, int]:
    """Replace the secret part of every match of a catalogue rule (its check, if any, agreeing)."""
    fast = _lowered(rule.pattern) if len(lower) == len(text) else None
    out: list[str] = []
    pos = count = 0
    for m in (fast.finditer(lower) if fast is not None else rule.pattern.finditer(text)):
        span = secret_span(m)
        if span is None or (rule.check is not None and not rule.check(m)):
            continue
        start, end = span
        if start < pos or MASK in text[start:end] or text[start:end] in ('""', "''"):
            continue
        out += [text[pos:start], MASK]
        pos = end
        count += 1
    if not count:
        return text, 0
    out.append(text[pos:])
    return "".join(out), count


@dataclass
class Redactor:
    """Applies the rules and keeps the report: one entry per artifact and place, with the rule that fired."""

    entries: list[dict] = field(default_factory=list)

    def _note(self, artifact: str, where: str, rule: str, count: int = 1) -> None:
        self.entries.append({"artifact": artifact, "where": where, "rule": rule, "count": count})

    def text(self, text: str, artifact: str, where: str = "text") -> str:
        """Credential-shaped values in free text (logs, config files, command output)."""
        lower = text.lower()
        if len(text) > 4096 or _any_needle().search(lower):  # one scan decides for most short strings
            text = self._catalogue(text, lower, artifact, where)
        rules = _rules()
        if not rules.any_value.search(text):
            return text
        for i, pattern in enumerate(rules.values):
            if pattern.search(text):
                text, n = _sub(pattern, text)
                if n:
                    self._note(artifact, where, f"value-pattern-{i + 1}", n)
        return text

    def _catalogue(self, text: str, lower: str, artifact: str, where: str) -> str:
        for rule in RULES:  # a literal test first: most rules find none of their needles in a log
            if any(n in lower for n in rule.needles):
                text, n = _replace(rule, text, lower)
                if n:
                    lower = text.lower()
                    self._note(artifact, where, rule.name, n)
        return text

    def obj(self, value, artifact: str, path: str = ""):
        """A JSON value with secrets replaced; Secret objects lose all data values. Iterative: a document
        nested ten thousand deep is walked like a flat one."""
        root: list = [None]
        stack = [(value, path, root, 0)]
        while stack:
            v, where, parent, slot = stack.pop()
            if isinstance(v, dict):
                if v.get("kind") == "Secret" and not where:
                    parent[slot] = self._secret(v, artifact)
                    continue
                out: dict = {}
                parent[slot] = out
                self._dict(v, artifact, where, out, stack)
            elif isinstance(v, list):
                items: list = [None] * len(v)
                parent[slot] = items
                self._list(v, artifact, where, items, stack)
            elif isinstance(v, str) and v:
                parent[slot] = self.text(v, artifact, where or "value")
            else:
                parent[slot] = v
        return root[0]

    def _dict(self, value: dict, artifact: str, path: str, out: dict, stack: list) -> None:
        pair = value.get("name") if isinstance(value.get("name"), str) and "value" in value else None
        for k, v in value.items():
            where = f"{path}.{k}" if path else str(k)
            scalar = isinstance(v, (str, int, float)) and not isinstance(v, bool)
            if pair is not None and k == "value" and isinstance(v, (str, int, float)) and secret_key(pair):
                out[k] = MASK
                self._note(artifact, f"{path}[{pair}]", "secret-name")
            elif scalar and (secret_key(str(k)) or (str(k)[-3:].lower() == "key" and _SECRET_PATH.search(where))) and v != "":
                out[k] = MASK
                self._note(artifact, where, "secret-key")
            elif k == _LAST_APPLIED and isinstance(v, str):
                out[k] = self._embedded_json(v, artifact, where)
            elif isinstance(v, list) and secret_key(str(k)) and all(isinstance(x, str) for x in v) and v:
                out[k] = [MASK for _ in v]
                self._note(artifact, where, "secret-key", len(v))
            else:
                out[k] = None
                stack.append((v, where, out, k))

    def _list(self, value: list, artifact: str, path: str, out: list, stack: list) -> None:
        """Items of a list; in a list of arguments a flag naming a secret hides the next argument."""
        hide_next = user_next = False
        for i, v in enumerate(value):
            where = f"{path}[{i}]"
            if isinstance(v, str) and hide_next and not v.startswith("-"):
                out[i] = MASK
                self._note(artifact, where, "secret-flag-argument")
            elif isinstance(v, str) and user_next and ":" in v:
                out[i] = v.split(":", 1)[0] + ":" + MASK
                self._note(artifact, where, "secret-flag-argument")
            else:
                stack.append((v, where, out, i))
            hide_next = isinstance(v, str) and bool(_SECRET_FLAG.match(v)) and not _REFERENCE_FLAG.search(v)
            user_next = isinstance(v, str) and bool(_USER_FLAG.match(v))

    def _embedded_json(self, text: str, artifact: str, where: str) -> str:
        """An object serialised inside an annotation: redact it as an object (env pairs), not as text."""
        try:
            inner = json.loads(text)
        except ValueError:
            return self.text(text, artifact, where)
        return json.dumps(self.obj(inner, artifact, where), separators=(",", ":"))

    def _secret(self, secret: dict, artifact: str) -> dict:
        out = {k: v for k, v in secret.items() if k not in ("data", "stringData")}
        for key in ("data", "stringData"):
            if isinstance(secret.get(key), dict):
                out[key] = {k: MASK for k in secret[key]}
                if secret[key]:
                    self._note(artifact, f"{secret.get('metadata', {}).get('name', '?')}.{key}", "secret-object", len(secret[key]))
        meta = dict(out.get("metadata") or {})
        ann = dict(meta.get("annotations") or {})
        if _LAST_APPLIED in ann:
            ann[_LAST_APPLIED] = MASK
            meta["annotations"] = ann
            out["metadata"] = meta
            self._note(artifact, "metadata.annotations.last-applied-configuration", "secret-object")
        return out

    def report(self) -> dict:
        by_rule: dict[str, int] = {}
        for e in self.entries:
            by_rule[e["rule"]] = by_rule.get(e["rule"], 0) + e["count"]
        return {"total": sum(by_rule.values()), "by_rule": by_rule, "entries": self.entries}
