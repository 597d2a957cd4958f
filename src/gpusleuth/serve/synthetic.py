"""A synthetic GPU cluster of any size, for `bench/bench_collect.py` and the live-path tests.

N GPU nodes, each running the GPU Operator's operands (driver, toolkit, device plugin, GFD, DCGM
exporter, validator, NFD worker) with init containers and logs; some driver pods restarted (previous
logs); GPU workloads in other namespaces; non-GPU nodes and pods that the collector must leave out; the
operator's DaemonSets, Deployment, ClusterPolicy, ConfigMaps, events and its Helm release Secret.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from gpusleuth.live.helm import encode_release
from gpusleuth.serve.store import LogLine, Store
from gpusleuth.serve.synth import NODE_INFO, rfc3339

NS = "gpu-operator"
OPERANDS = (  # (daemonset / app label, init containers, main container)
    ("nvidia-driver-daemonset", ("k8s-driver-manager",), "nvidia-driver-ctr"),
    ("nvidia-container-toolkit-daemonset", ("driver-validation",), "nvidia-container-toolkit-ctr"),
    ("nvidia-device-plugin-daemonset", ("toolkit-validation",), "nvidia-device-plugin"),
    ("gpu-feature-discovery", ("toolkit-validation",), "gpu-feature-discovery"),
    ("nvidia-dcgm-exporter", ("toolkit-validation",), "nvidia-dcgm-exporter"),
    ("nvidia-operator-validator", ("driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation"), "nvidia-operator-validator"),
)
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _suffix(rng: random.Random) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(5))


def _cs(name: str, running: bool = True, restarts: int = 0, init: bool = False) -> dict:
    state = {"terminated": {"exitCode": 0, "reason": "Completed"}} if init else ({"running": {"startedAt": "2025-01-01T00:00:00Z"}} if running else {"waiting": {"reason": "CrashLoopBackOff"}})
    out = {"name": name, "ready": running and not init, "restartCount": restarts, "state": state, "image": f"nvcr.io/nvidia/{name}:v1", "imageID": ""}
    if restarts:
        out["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error"}}
    return out


def _pod(name: str, ns: str, node: str, labels: dict, owner: str | None, inits: tuple[str, ...], main: str, restarts: int = 0, gpus: int = 0, env: list | None = None) -> dict:
    container = {"name": main, "image": f"nvcr.io/nvidia/{main}:v1"}
    if gpus:
        container["resources"] = {"requests": {"nvidia.com/gpu": str(gpus)}, "limits": {"nvidia.com/gpu": str(gpus)}}
    if env:
        container["env"] = env
    meta = {"name": name, "namespace": ns, "labels": labels, "uid": f"uid-{ns}-{name}", "creationTimestamp": "2025-01-01T00:00:00Z"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": owner, "uid": f"uid-ds-{owner}", "controller": True}]
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": meta,
        "spec": {"nodeName": node, "containers": [container], "initContainers": [{"name": i, "image": f"nvcr.io/nvidia/{i}:v1"} for i in inits]},
        "status": {"phase": "Running", "initContainerStatuses": [_cs(i, init=True) for i in inits],
                   "containerStatuses": [_cs(main, restarts=restarts)]},
    }


def build(nodes: int, *, log_lines: int = 40, restart_every: int = 10, cpu_nodes: int | None = None, seed: int = 7) -> Store:
    rng = random.Random(seed)
    now = datetime(2025, 6, 1, 12, 0, tzinfo=timezone.utc)
    st = Store(now=now)

    def logs(ns: str, pod: str, container: str, previous: bool = False) -> None:
        base = now - timedelta(hours=2 if previous else 1)
        st.logs[(ns, pod, container, previous)] = [
            LogLine(f"I0601 {10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000000       1 main.go:{100 + i}] {container} step {i} ok", base + timedelta(seconds=i))
            for i in range(log_lines)
        ]

    for n in range(nodes):
        node = f"gpu-node-{n:04d}"
        st.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {
            "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8",
            "feature.node.kubernetes.io/pci-10de.present": "true", "kubernetes.io/hostname": node}},
            "status": {"capacity": {"nvidia.com/gpu": "8", "cpu": "224"}, "allocatable": {"nvidia.com/gpu": "8", "cpu": "220"},
                       "conditions": [{"type": "Ready", "status": "True"}],
                       "nodeInfo": {**dict.fromkeys(NODE_INFO, ""), "kernelVersion": "5.15.0-1063-nvidia", "osImage": "Ubuntu 22.04.4 LTS", "containerRuntimeVersion": "containerd://1.7.27", "kubeletVersion": "v1.31.2"},
                       "images": [{"names": [f"registry.example/image-{i}:v1"], "sizeBytes": 1000} for i in range(20)]}})
        for ds, inits, main in OPERANDS:
            name = f"{ds}-{_suffix(rng)}"
            restarts = 2 if ds == "nvidia-driver-daemonset" and restart_every and n % restart_every == 0 else 0
            st.add(_pod(name, NS, node, {"app": ds}, ds, inits, main, restarts))
            for c in inits:
                logs(NS, name, c)
            logs(NS, name, main)
            if restarts:
                logs(NS, name, main, previous=True)
        nfd = f"gpu-operator-node-feature-discovery-worker-{_suffix(rng)}"
        st.add(_pod(nfd, NS, node, {"app.kubernetes.io/name": "node-feature-discovery", "role": "worker"}, "gpu-operator-node-feature-discovery-worker", (), "worker"))
        logs(NS, nfd, "worker")
        st.add(_pod(f"kube-proxy-{_suffix(rng)}", "kube-system", node, {"k8s-app": "kube-proxy"}, "kube-proxy", (), "kube-proxy"))
        if n % 4 == 0:
            st.add(_pod(f"train-{n:04d}", "ml-team", node, {"app": "train"}, None, (), "trainer", gpus=8,
                        env=[{"name": "WANDB_API_KEY", "value": "planted-secret-wandb-0123456789"}, {"name": "EPOCHS", "value": "3"}]))
    for n in range(nodes // 10 if cpu_nodes is None else cpu_nodes):
        node = f"cpu-node-{n:04d}"
        st.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}},
                "status": {"capacity": {"cpu": "64"}, "conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": dict.fromkeys(NODE_INFO, "")}})
        st.add(_pod(f"kube-proxy-{_suffix(rng)}", "kube-system", node, {"k8s-app": "kube-proxy"}, "kube-proxy", (), "kube-proxy"))
    op = f"gpu-operator-6d4f8b7c9-{_suffix(rng)}"
    st.add(_pod(op, NS, "cpu-node-0000" if nodes >= 10 else "gpu-node-0000", {"app": "gpu-operator", "app.kubernetes.io/component": "gpu-operator"}, None, (), "gpu-operator"))
    logs(NS, op, "gpu-operator")
    for ds, _, _ in OPERANDS:
        st.add({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": ds, "namespace": NS},
                "spec": {"selector": {"matchLabels": {"app": ds}}, "template": {"metadata": {"labels": {"app": ds}}, "spec": {
                    "nodeSelector": {"nvidia.com/gpu.present": "true"}, "containers": [{"name": ds, "image": f"nvcr.io/nvidia/{ds}:v1"}]}}},
                "status": {"desiredNumberScheduled": nodes, "currentNumberScheduled": nodes, "numberReady": nodes, "updatedNumberScheduled": nodes,
                           "numberAvailable": nodes, "numberMisscheduled": 0}})
    st.add({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "gpu-operator", "namespace": NS},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "gpu-operator"}},
                     "template": {"metadata": {"labels": {"app": "gpu-operator"}}, "spec": {"containers": [{"name": "gpu-operator", "image": "nvcr.io/nvidia/gpu-operator:v25.3.4"}]}}},
            "status": {"readyReplicas": 1}})
    st.add({"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"},
            "spec": {"driver": {"enabled": True, "rdma": {"enabled": False}}, "toolkit": {"enabled": True, "env": []}, "cdi": {"enabled": True}},
            "status": {"state": "ready"}})
    st.add({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "default-mig-parted-config", "namespace": NS}, "data": {"config.yaml": "version: v1\nmig-configs: {}\n"}})
    st.add({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kube-root-ca.crt", "namespace": NS}, "data": {"ca.crt": "-----BEGIN CERTIFICATE-----"}})
    release = {"name": "gpu-operator-1758912452", "namespace": NS, "version": 3, "info": {"status": "deployed"},
               "chart": {"metadata": {"name": "gpu-operator", "version": "v25.3.4", "appVersion": "v25.3.4"}, "values": {"toolkit": {"enabled": True}},
                         "templates": [{"name": "templates/x.yaml", "data": "e30="}]},
               "config": {"toolkit": {"env": []}, "driver": {"licensingConfig": {"nlsEnabled": True}}, "ngcApiKey": "planted-secret-ngc-0123456789"},
               "manifest": "---\nkind: Secret\n"}
    for rev in (2, 3):
        st.add({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
                "metadata": {"name": f"sh.helm.release.v1.gpu-operator-1758912452.v{rev}", "namespace": NS,
                             "labels": {"owner": "helm", "name": "gpu-operator-1758912452", "status": "deployed" if rev == 3 else "superseded", "version": str(rev)}},
                "data": {"release": encode_release({**release, "version": rev})}})
    for i in range(min(nodes, 50)):
        st.add({"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"ev-{i}", "namespace": NS},
                "involvedObject": {"kind": "Pod", "name": f"nvidia-driver-daemonset-x{i}", "namespace": NS}, "reason": "BackOff",
                "message": "Back-off restarting failed container", "type": "Warning", "count": 3,
                "firstTimestamp": rfc3339(now - timedelta(minutes=30)), "lastTimestamp": rfc3339(now - timedelta(minutes=1))})
    return st
