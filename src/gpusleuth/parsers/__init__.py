"""Every parser gpusleuth has, listed explicitly. The best sniff score wins a document."""

from __future__ import annotations

from gpusleuth.parsers import logs
from gpusleuth.parsers import gpu_sharing, node_probe, nvidia_smi, prometheus
from gpusleuth.parsers import containerd_config
from gpusleuth.parsers import engine_config
from gpusleuth.parsers import helm
from gpusleuth.parsers import host_processes
from gpusleuth.parsers import host_facts
from gpusleuth.parsers import k8s_objects, kubectl_describe, kubectl_table
from gpusleuth.parsers import cdi
from gpusleuth.parsers import kubectl_pipes
from gpusleuth.parsers.base import Parser

PARSERS: tuple[Parser, ...] = (
    logs.parse,
    nvidia_smi.parse_table,
    nvidia_smi.parse_list,
    nvidia_smi.parse_query,
    nvidia_smi.parse_xml,
    nvidia_smi.parse_csv,
    prometheus.parse,
    node_probe.parse,
    gpu_sharing.parse,
    containerd_config.parse,
    engine_config.parse_crio,
    engine_config.parse_docker,
    host_processes.parse_processes,
    host_processes.parse_crictl,
    host_processes.parse_version,
    host_processes.parse_probe,
    host_facts.parse_modules,
    host_facts.parse_lspci,
    host_facts.parse_security,
    host_facts.parse_modinfo,
    host_facts.parse_os_release,
    host_facts.parse_uptime,
    host_facts.parse_cmdline,
    host_facts.parse_secure_boot,
    host_facts.parse_device_cgroup,
    host_facts.parse_driver_version,
    host_facts.parse_kernel_release,
    host_facts.parse_mofed,
    host_facts.parse_marker,
    helm.parse_values,
    helm.parse_set_flags,
    helm.parse_list,
    helm.parse_release_secret,
    kubectl_describe.describe,
    kubectl_table.get_pods,
    kubectl_table.get_daemonsets,
    kubectl_table.get_nodes,
    kubectl_table.get_events,
    kubectl_table.get_all,
    kubectl_table.get_objects,
    kubectl_table.node_labels,
    k8s_objects.parse_json,
    k8s_objects.parse_yaml,
    cdi.parse,
    kubectl_pipes.parse_fragment,
    kubectl_pipes.parse_labels,
)
