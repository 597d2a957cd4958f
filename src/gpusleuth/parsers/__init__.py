"""Every parser gpusleuth has, listed explicitly. The best sniff score wins a document."""

from __future__ import annotations

from gpusleuth.parsers import logs
from gpusleuth.parsers.base import Parser

PARSERS: tuple[Parser, ...] = (
    logs.parse,
)
