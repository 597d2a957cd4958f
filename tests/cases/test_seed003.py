"""Seed 003 end to end: pods stuck in ContainerCreating because the toolkit configured the other containerd.

The fixture folder holds what the write-up shows: `k get pods -A` (prompt, wide padding), the describe of
gpu-textgen with its FailedCreatePodSandBox event, both containerd configs from `cat` prompts, the
grep'd `helm get values --all`, and `ps -ef` with both containerd instances and kubelet.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from gpusleuth.report import renderer

SEED = Path(__file__).parent.parent / "fixtures" / "seed003"


def test_seed003_root_cause_is_the_containerd_kubelet_uses(diagnose_dir):
    report = diagnose_dir(SEED)
    assert report.verdict == "broken"
    top = report.root_causes[0]
    assert (top.code, top.layer.value, top.node) == ("RT002", "container-runtime", "192-18-132-31")
    cited = {e.cite() for e in top.evidence}
    assert "containerd-configs.txt:39" in cited  # /var/lib/k8s-containerd/.../config.toml: runc only
    assert "containerd-configs.txt:69" in cited  # /etc/containerd/config.toml: runtimes.nvidia
    assert "helm-values.txt:22" in cited  # toolkit.env: [] -> defaults
    assert "ps.txt:4" in cited  # kubelet --container-runtime-endpoint
    assert "describe-gpu-textgen.txt:64" in cited  # no runtime for "nvidia" is configured
    fix = next(f for f in top.fixes if f.kind.value == "permanent")
    values = yaml.safe_load(fix.snippet)
    assert values == {"toolkit": {"env": [
        {"name": "CONTAINERD_CONFIG", "value": "/var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml"},
        {"name": "CONTAINERD_SOCKET", "value": "/var/lib/k8s-containerd/k8s-containerd/run/containerd/containerd.sock"},
        {"name": "CONTAINERD_RUNTIME_CLASS", "value": "nvidia"},
    ]}}
    assert fix.commands == ("helm upgrade gpu-operator-1758912452 nvidia/gpu-operator -n gpu-operator --reuse-values "
                            "-f gpusleuth-toolkit-values.yaml",)


def test_seed003_symptoms_point_at_the_cause(diagnose_dir):
    report = diagnose_dir(SEED)
    by_code = {f.code: f for f in report.findings}
    assert by_code["RT001"].role.value == "symptom" and by_code["RT001"].caused_by == ("RT002",)
    assert by_code["RT001"].facts["pods"] == ["gpu-textgen"]
    assert by_code["TK001"].role.value == "symptom" and by_code["TK001"].caused_by == ("RT002",)
    assert "RT003" not in by_code  # RT002 already carries the misdirected toolkit


def test_seed003_reads_in_the_terminal(diagnose_dir):
    text = renderer("text")(diagnose_dir(SEED), color=False)
    assert "snap.k8s.containerd.service" in text and "CONTAINERD_SOCKET" in text
    assert "helm upgrade gpu-operator-1758912452" in text


def test_seed003_pasted_as_markdown_quotes_under_other_names(tmp_path, diagnose_dir):
    for i, p in enumerate(sorted(SEED.iterdir())):
        text = p.read_text(encoding="utf-8")
        (tmp_path / f"paste{i}.md").write_text("".join("> " + ln for ln in text.splitlines(keepends=True)), encoding="utf-8")
    report = diagnose_dir(tmp_path)
    top = report.root_causes[0]
    assert top.code == "RT002" and {e.artifact for e in top.evidence} >= {"paste0.md", "paste1.md", "paste2.md", "paste4.md"}
