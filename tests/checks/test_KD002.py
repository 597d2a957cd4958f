"""KD002 precompiled-package-missing-modules: a contributing finding citing the mkprecompiled line."""

import operand_seed as seed

from gpusleuth.analysis.engine import run_checks
from gpusleuth.checks import get_check
from gpusleuth.model.finding import Role, Severity

# must-gather's gpu_operand_pod_<pod>.log: every line prefixed by `kubectl logs --all-containers --prefix`
P = f"[pod/{seed.DRIVER}/openshift-driver-toolkit-ctr] "
Q = f"[pod/{seed.DRIVER}/nvidia-driver-ctr] "
MUST_GATHER = f"""\
{P}Skipping BTF generation for nvidia-peermem.ko due to unavailability of vmlinux
{P}+ ../mkprecompiled --pack nvidia-modules-5.14.0-builtin --description 5.14.0-427.96.1.el9_4.aarch64+64k --kernel-module nvidia.ko --kernel-module nvidia-modeset.ko --kernel-module nvidia-uvm.ko --target-directory .
{P}Packing precompiled kernel interface...
{Q}nvidia-installer log file '/var/log/nvidia-installer.log'
{Q}Required file 'nvidia-drm.ko' not found in package
{Q}Required file 'nvidia-peermem.ko' not found in package
{Q}Installing 'NVIDIA Accelerated Graphics Driver for Linux-aarch64' (570.172.08):
"""
LOG = f"gpu_operand_pod_{seed.DRIVER}.log"


def _run(files):
    findings, _ = run_checks(seed.facts_from(files), checks=[get_check("KD002")])
    return findings


def test_missing_modules_are_a_contributing_finding_citing_the_pack_line():
    [f] = _run({LOG: MUST_GATHER, "pods.txt": seed.PODS})
    assert f.role == Role.CONTRIBUTING and f.severity == Severity.WARNING
    assert f.facts["missing"] == ["nvidia-drm.ko", "nvidia-peermem.ko"] and f.facts["pod"] == seed.DRIVER
    assert [e.cite() for e in f.evidence] == [f"{LOG}:2", f"{LOG}:5", f"{LOG}:6"]
    assert "--kernel-module nvidia-peermem.ko" in f.fixes[0].snippet


def test_silent_when_the_package_has_every_module():
    complete = "\n".join(ln for ln in MUST_GATHER.splitlines() if "Required file" not in ln) + "\n"
    assert _run({LOG: complete}) == []
