"""The real containerd as an oracle: what `containerd config dump` makes of the configs gpusleuth reasons
about, compared with what gpusleuth concludes from the same files.

Runs only where a containerd binary is installed (Debian/Ubuntu: `apt-get install containerd`, 1.6.x on
bookworm); CI installs Python dependencies only, so these tests skip there. What they showed is recorded in
docs/containerd-oracle.md.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from failure_fixtures import facts_from, run

CONTAINERD = shutil.which("containerd")
pytestmark = pytest.mark.skipif(CONTAINERD is None, reason="no containerd binary on this machine (apt-get install containerd)")

MAIN = """\
version = 2
imports = ["{dir}/conf.d/*.toml"]

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.9"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = true
"""
DROP_IN = """\
version = 2

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
    BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
"""
V3 = """\
version = 3
[plugins.'io.containerd.cri.v1.runtime'.containerd]
  default_runtime_name = "nvidia"
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia]
    runtime_type = "io.containerd.runc.v2"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia.options]
      BinaryName = "/usr/bin/nvidia-container-runtime"
"""
TYPO = """\
version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_imgae = "registry.k8s.io/pause:3.9"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    defualt_runtime_name = "nvidia"
"""


def _version() -> tuple[str, tuple[int, int]]:
    out = subprocess.run([CONTAINERD, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    m = re.search(r"\s(v?(\d+)\.(\d+)\.\d+\S*)", out)
    assert m, out
    return out, (int(m.group(2)), int(m.group(3)))


def _dump(config: Path) -> str:
    return subprocess.run([CONTAINERD, "--config", str(config), "config", "dump"], capture_output=True, text=True, check=True).stdout


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.format(dir=tmp_path), encoding="utf-8")
    return path


def _pasted(path: Path) -> str:
    return f"root@gpu-node-1:~# cat {path}\n{path.read_text()}"


def test_drop_in_replaces_the_cri_section_before_2_0_and_rt007_agrees(tmp_path):
    version_line, (major, _) = _version()
    main = _write(tmp_path, "config.toml", MAIN)
    drop = _write(tmp_path, "conf.d/99-nvidia.toml", DROP_IN)
    dump = _dump(main)
    lost = "pause:3.9" not in dump and "SystemdCgroup = true" not in dump
    assert "runtimes.nvidia]" in dump
    assert lost == (major < 2), f"containerd {version_line}: expected {'replace' if major < 2 else 'merge'}"
    facts = facts_from({"main.txt": _pasted(main), "dropin.txt": _pasted(drop), "version.txt": f"$ containerd --version\n{version_line}\n"})
    findings = run("RT007", facts)
    assert bool(findings) == lost
    if findings:  # gpusleuth names exactly what the oracle lost
        assert {"sandbox_image", "containerd.runtimes.runc.options.SystemdCgroup"} <= set(findings[0].facts["lost"])


def test_version_3_file_is_ignored_before_2_0_and_rt005_agrees(tmp_path):
    version_line, (major, _) = _version()
    v3 = _write(tmp_path, "config.toml", V3)
    dump = _dump(v3)
    ignored = "runtimes.nvidia" not in dump and 'default_runtime_name = "runc"' in dump
    assert ignored == (major < 2)
    facts = facts_from({"v3.txt": _pasted(v3), "version.txt": f"$ containerd --version\n{version_line}\n"})
    assert bool(run("RT005", facts)) == ignored


def test_misspelt_typed_keys_vanish_from_the_dump(tmp_path):
    dump = _dump(_write(tmp_path, "config.toml", TYPO))
    assert "sandbox_imgae" not in dump and "defualt_runtime_name" not in dump
    assert 'default_runtime_name = "runc"' in dump  # the default is used, without a word
