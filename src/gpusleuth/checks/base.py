"""What a check is: a small documented function with a stable code.

    @check("KD001", "nvidia-peermem-load-failed")
    def peermem_load_failed(logs: Logs, cluster: Cluster | None = None) -> Iterable[Hit]:
        '''One line that states the problem.

        What it does: ...
        Why it matters: ...
        How to fix: ...
        References: https://github.com/NVIDIA/gpu-operator/issues/123; <another source>
        '''

The parameters' type hints are the inputs (combined views from gpusleuth.facts); a parameter that
defaults to None is optional. The code's two letters name the layer (see model/layers.py).
"""

from __future__ import annotations

import inspect
import re
import typing
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from gpusleuth.model.finding import Hit
from gpusleuth.model.layers import Layer

_CODE = re.compile(r"^[A-Z]{2}\d{3}$")
_SECTIONS = ("What it does", "Why it matters", "How to fix")
_OPTIONAL = ("References",)  # public sources the failure class was learned from


@dataclass(frozen=True)
class Check:
    code: str
    name: str
    layer: Layer
    func: Callable[..., Iterable[Hit]]
    requires: tuple[tuple[str, type], ...]  # (parameter, type)
    optional: tuple[tuple[str, type], ...]
    summary: str
    what: str
    why: str
    fix: str
    module: str
    references: tuple[str, ...] = ()
    detects: tuple[str, ...] = ()  # knowledge/signatures.toml ids a table-driven check matches

    def __call__(self, **inputs: Any) -> Iterable[Hit]:
        return self.func(**inputs)

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "layer": self.layer.value,
            "summary": self.summary,
            "what_it_does": self.what,
            "why_it_matters": self.why,
            "how_to_fix": self.fix,
            "references": list(self.references),
            "signatures": list(self.detects),
            "inputs": [t.__name__ for _, t in self.requires] + [t.__name__ + "?" for _, t in self.optional],
        }


def _sections(doc: str) -> tuple[str, dict[str, str]]:
    doc = inspect.cleandoc(doc or "")
    summary, _, rest = doc.partition("\n")
    found: dict[str, list[str]] = {}
    current = None
    for line in rest.splitlines():
        head = next((s for s in _SECTIONS + _OPTIONAL if line.startswith(s + ":")), None)
        if head:
            current = head
            found[head] = [line[len(head) + 1 :].strip()]
        elif current:
            found[current].append(line.strip())
    return summary.strip(), {k: " ".join(x for x in v if x).strip() for k, v in found.items()}


def layer_of(code: str) -> Layer:
    """The layer a check code names; a ValueError for a malformed code."""
    if not _CODE.match(code):
        raise ValueError(f"check code {code!r} must be two letters and three digits")
    layer = Layer.from_prefix(code)
    if layer is None:
        raise ValueError(f"check code {code!r} does not start with a layer prefix")
    return layer


def inputs_of(func: Callable, code: str) -> tuple[tuple[tuple[str, type], ...], tuple[tuple[str, type], ...]]:
    """(required, optional) inputs from the parameters' type hints; `= None` makes one optional."""
    hints = typing.get_type_hints(func)
    requires, optional = [], []
    for pname, param in inspect.signature(func).parameters.items():
        hint = hints.get(pname)
        if hint is None:
            raise ValueError(f"check {code}: parameter {pname} needs a type hint")
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if param.default is None:
            optional.append((pname, args[0] if args else hint))
        else:
            requires.append((pname, hint))
    return tuple(requires), tuple(optional)


def check(code: str, name: str):
    """Declare a check. Fails at import time, not at 3 a.m., if the code or the doc is incomplete."""

    def wrap(func: Callable[..., Iterable[Hit]]) -> Check:
        layer = layer_of(code)
        summary, sections = _sections(func.__doc__ or "")
        missing = [s for s in _SECTIONS if not sections.get(s)]
        if not summary or missing:
            raise ValueError(f"check {code} docstring lacks: {', '.join(missing) or 'a summary line'}")
        requires, optional = inputs_of(func, code)
        return Check(
            code=code,
            name=name,
            layer=layer,
            func=func,
            requires=requires,
            optional=optional,
            summary=summary,
            what=sections["What it does"],
            why=sections["Why it matters"],
            fix=sections["How to fix"],
            module=func.__module__,
            references=tuple(r.strip() for r in sections.get("References", "").split(";") if r.strip()),
        )

    return wrap
