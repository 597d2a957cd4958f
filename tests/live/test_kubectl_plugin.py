"""`kubectl gpusleuth ...`: the kubectl-gpusleuth console script, with kubectl's global flags."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpusleuth.cli import kubectl_args
from tests.live.helpers import serving

SRC = str(Path(__file__).resolve().parents[2] / "src")
DEPLOY = Path(__file__).parents[2] / "deploy" / "krew"


@pytest.mark.parametrize("argv, want", [
    (["diagnose", "--context", "prod"], ["diagnose", "--context", "prod"]),
    (["--context", "prod", "diagnose", "--format", "json"], ["diagnose", "--context", "prod", "--format", "json"]),
    (["--context=prod", "-n", "gpu-operator", "--kubeconfig", "/k", "collect"],
     ["collect", "--context", "prod", "--namespace", "gpu-operator", "--kubeconfig", "/k"]),
    (["-ngpu-operator", "diagnose"], ["diagnose", "--namespace", "gpu-operator"]),
    (["diagnose", "-s", "http://127.0.0.1:8080", "--request-timeout=1m30s"],
     ["diagnose", "--server", "http://127.0.0.1:8080", "--request-timeout", "90"]),
    (["diagnose", "--request-timeout", "0"], ["diagnose", "--request-timeout", "3600"]),
    (["diagnose", "./incident/", "--format", "sarif"], ["diagnose", "./incident/", "--format", "sarif"]),
    (["--help"], ["--help"]),
    ([], []),
])
def test_kubectl_flags_become_gpusleuth_options(argv, want):
    assert kubectl_args(argv) == want


def _plugin_path(tmp_path: Path) -> str:
    """A bin folder holding kubectl-gpusleuth as pip would install it (the console script calls kubectl_main)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "kubectl-gpusleuth"
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {SRC!r})\n"
                      "from gpusleuth.cli import kubectl_main\nkubectl_main()\n")
    script.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def test_kubectl_gpusleuth_diagnose_honours_context_and_kubeconfig(small_cluster, tmp_path):
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    env = {**os.environ, "PATH": _plugin_path(tmp_path), "GPUSLEUTH_DEBUG": "", "KUBECONFIG": str(tmp_path / "absent")}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    with serving(small_cluster) as srv:
        config = {"apiVersion": "v1", "kind": "Config", "current-context": "unreachable",
                  "clusters": [{"name": "lab", "cluster": {"server": srv.url}},
                               {"name": "nowhere", "cluster": {"server": "http://127.0.0.1:9"}}],
                  "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "anon"}},
                               {"name": "unreachable", "context": {"cluster": "nowhere", "user": "anon"}}],
                  "users": [{"name": "anon", "user": {}}]}
        kc = tmp_path / "kubeconfig"
        kc.write_text(yaml.safe_dump(config))
        runs = {}
        for name, args in {
            "after": ["gpusleuth", "diagnose", "--kubeconfig", str(kc), "--context", "lab", "-n", "gpu-operator", "--format", "json"],
            "before": ["gpusleuth", "--kubeconfig", str(kc), "--context=lab", "diagnose", "--format", "json", "--request-timeout=10s"],
            "current": ["gpusleuth", "diagnose", "--kubeconfig", str(kc), "--request-timeout", "1s"],
        }.items():
            runs[name] = subprocess.run([kubectl, *args], capture_output=True, text=True, env=env, timeout=180)
    for name in ("after", "before"):
        proc = runs[name]
        assert proc.returncode in (0, 1), proc.stderr
        report = json.loads(proc.stdout)
        assert report["source"]["description"] == "live:lab" and report["source"]["kind"] == "live", name
    assert runs["current"].returncode == 2 and "cannot read the cluster" in runs["current"].stderr  # the current context is used
    assert "Traceback" not in runs["current"].stderr


def test_kubectl_gpusleuth_help_names_the_plugin(tmp_path):
    proc = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {SRC!r}); sys.argv = ['kubectl-gpusleuth', '--help'];"
                           "from gpusleuth.cli import kubectl_main; kubectl_main()"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Usage: kubectl gpusleuth" in proc.stdout


def test_krew_manifest_is_complete_and_matches_the_launcher_archive(tmp_path):
    manifest = yaml.safe_load((DEPLOY / "gpusleuth.yaml").read_text())
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2" and manifest["kind"] == "Plugin"
    assert manifest["metadata"]["name"] == "gpusleuth"
    spec = manifest["spec"]
    for key in ("version", "shortDescription", "description", "homepage", "platforms"):
        assert spec.get(key), key
    from gpusleuth import __version__

    assert spec["version"] == f"v{__version__}"
    sys.path.insert(0, str(DEPLOY))
    try:
        import package
    finally:
        sys.path.remove(str(DEPLOY))
    archive, digest = package.build(tmp_path)
    oses = set()
    for p in spec["platforms"]:
        assert p["bin"] == "kubectl-gpusleuth" and p["sha256"] == digest, "run python deploy/krew/package.py --update-manifest"
        assert p["uri"].startswith("https://") and p["uri"].endswith(archive.name)
        oses |= {v for e in p["selector"]["matchExpressions"] for v in e["values"]}
    assert {"linux", "darwin"} <= oses
    launcher = DEPLOY / "kubectl-gpusleuth"
    assert subprocess.run(["sh", "-n", str(launcher)]).returncode == 0
    assert f'VERSION="{__version__}"' in launcher.read_text()
