"""Artifact text shared by the RT/TK check tests: the seed-003 node (two containerd instances, kubelet on
the k8s snap's, toolkit left at its defaults) and variants of it."""

from __future__ import annotations

from pathlib import Path

from gpusleuth.analysis.diagnose import build_facts
from gpusleuth.analysis.engine import Selection, run_checks
from gpusleuth.facts import Facts
from gpusleuth.model.finding import Finding
from gpusleuth.sources.loose import read_directory

SEED003 = Path(__file__).parent / "fixtures" / "seed003"

PS_TWO = (SEED003 / "ps.txt").read_text()
CONFIGS_TWO = (SEED003 / "containerd-configs.txt").read_text()
HELM_DEFAULTS = (SEED003 / "helm-values.txt").read_text()

SNAP_CONFIG = CONFIGS_TWO.split("root@192-18-132-31:~# cat /etc/containerd/config.toml\n")[0]
ETC_CONFIG = "root@192-18-132-31:~# cat /etc/containerd/config.toml\n" + CONFIGS_TWO.split("root@192-18-132-31:~# cat /etc/containerd/config.toml\n")[1]

HELM_FIXED = """\
root@192-18-132-31:~# helm get values gpu-operator-1758912452 -n gpu-operator
USER-SUPPLIED VALUES:
toolkit:
  env:
  - name: CONTAINERD_CONFIG
    value: /var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml
  - name: CONTAINERD_SOCKET
    value: /var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock
  - name: CONTAINERD_RUNTIME_CLASS
    value: nvidia
"""

SNAP_DROP_IN = """\
root@192-18-132-31:~# cat /var/lib/k8s-containerd/k8s-containerd/etc/containerd/conf.d/99-nvidia.toml
version = 2

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
  BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
"""


def facts_from(files: dict[str, str], tmp_path: Path, extra: list | None = None) -> Facts:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    facts = build_facts(read_directory(tmp_path))
    for obj in extra or ():
        facts.add(obj)
    return facts


def fired(facts: Facts, code: str) -> list[Finding]:
    findings, outcomes = run_checks(facts, Selection((code,)))
    errors = [o for o in outcomes if o.status == "error"]
    assert not errors, errors
    return [f for f in findings if f.code == code]
