"""Report views: named builders from Facts to extra report sections. Registry by listing."""

from __future__ import annotations

from typing import Callable

from gpusleuth.facts import Facts

VIEWS: dict[str, Callable[[Facts], dict]] = {}
