"""Every parser gpusleuth has, listed explicitly. The best sniff score wins a document."""

from __future__ import annotations

from gpusleuth.parsers import logs
from gpusleuth.parsers import node_probe, nvidia_smi, prometheus
from gpusleuth.parsers.base import Parser

PARSERS: tuple[Parser, ...] = (
    logs.parse,
    nvidia_smi.parse_table,
    nvidia_smi.parse_list,
    nvidia_smi.parse_query,
    nvidia_smi.parse_xml,
    prometheus.parse,
    node_probe.parse,
)
