"""Redaction before anything is written: Secret data, credential-like keys and values, bearer tokens.

Rules live in knowledge/live.toml [redact]. Objects are walked key by key (a value under a secret-looking key
is replaced, unless the key only names a secret: ``imagePullSecrets``, ``secretName``); ``{name, value}``
pairs (container env, ClusterPolicy ``toolkit.env``, Helm values) are judged by ``name``; every remaining
string and every text artifact (logs, node files) is scanned for credential-shaped values. The report says
where and by which rule, never what.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache

from gpusleuth.knowledge import table

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


def _sub(pattern: re.Pattern, text: str) -> tuple[str, int]:
    tail = "tail" in pattern.groupindex

    def repl(m: re.Match) -> str:
        return m.group(1) + MASK + (m.group("tail") if tail else "")

    return pattern.subn(repl, text)


def secret_key(key: str) -> bool:
    r = _rules()
    return bool(r.secret_key.search(key)) and not r.reference_key.search(key)


@dataclass
class Redactor:
    """Applies the rules and keeps the report: one entry per artifact and place, with the rule that fired."""

    entries: list[dict] = field(default_factory=list)

    def _note(self, artifact: str, where: str, rule: str, count: int = 1) -> None:
        self.entries.append({"artifact": artifact, "where": where, "rule": rule, "count": count})

    def text(self, text: str, artifact: str, where: str = "text") -> str:
        """Credential-shaped values in free text (logs, config files, command output)."""
        rules = _rules()
        if not rules.any_value.search(text):
            return text
        total = 0
        for i, pattern in enumerate(rules.values):
            if pattern.search(text):
                text, n = _sub(pattern, text)
                total += n
                if n:
                    self._note(artifact, where, f"value-pattern-{i + 1}", n)
        return text

    def obj(self, value, artifact: str, path: str = ""):
        """A JSON value with secrets replaced; Secret objects lose all data values."""
        if isinstance(value, dict):
            if value.get("kind") == "Secret" and not path:
                return self._secret(value, artifact)
            pair = value.get("name") if isinstance(value.get("name"), str) and "value" in value else None
            out = {}
            for k, v in value.items():
                where = f"{path}.{k}" if path else k
                if pair is not None and k == "value" and isinstance(v, (str, int, float)) and secret_key(pair):
                    out[k] = MASK
                    self._note(artifact, f"{path}[{pair}]", "secret-name")
                elif isinstance(v, (str, int, float)) and not isinstance(v, bool) and secret_key(str(k)) and v != "":
                    out[k] = MASK
                    self._note(artifact, where, "secret-key")
                elif k == _LAST_APPLIED and isinstance(v, str):
                    out[k] = self._embedded_json(v, artifact, where)
                elif isinstance(v, list) and secret_key(str(k)) and all(isinstance(x, str) for x in v) and v:
                    out[k] = [MASK for _ in v]
                    self._note(artifact, where, "secret-key", len(v))
                else:
                    out[k] = self.obj(v, artifact, where)
            return out
        if isinstance(value, list):
            return [self.obj(v, artifact, f"{path}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, str) and value:
            return self.text(value, artifact, path or "value")
        return value

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
