"""Every parser gpusleuth has, listed explicitly. The best sniff score wins a document."""

from __future__ import annotations

from gpusleuth.parsers import k8s_objects, kubectl_describe, kubectl_table
from gpusleuth.parsers.base import Parser

PARSERS: tuple[Parser, ...] = (
    kubectl_describe.describe,
    kubectl_table.get_pods,
    kubectl_table.get_daemonsets,
    kubectl_table.get_nodes,
    kubectl_table.get_events,
    kubectl_table.get_all,
    kubectl_table.node_labels,
    k8s_objects.parse_json,
    k8s_objects.parse_yaml,
)
