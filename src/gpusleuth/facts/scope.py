"""The inputs only a cluster holds: its objects, the operators' Helm release and ClusterPolicy, ConfigMaps,
RuntimeClasses, pod specs, a dcgm-exporter scrape, the operands' events. A source with no Kubernetes object at
all (a node probe, a pasted dmesg) lacks every one of them at once, so a report says so in one line instead of
one gap per input. Named by type (the type a check requires), so that nothing here imports the facts."""

CLUSTER = "Cluster"  # the Kubernetes objects themselves: when it is missing, so is everything below
CLUSTER_ONLY = frozenset({
    CLUSTER, "Configuration", "OperandGraph", "Ordering", "SharingConfigs", "RuntimeClasses", "PluginWiring",
    "NfdWorkerConfigs", "PodSpecs", "GpuMetrics",
})
