"""KD002 precompiled-package-missing-modules: a contributing finding citing the mkprecompiled line."""

from loglines import container_log, facts_with

from gpusleuth.analysis.engine import run_checks
from gpusleuth.checks import get_check
from gpusleuth.model.finding import Role, Severity

POD = "nvidia-driver-daemonset-418.94.202510230424-0-564xm"
BUILD = """\
Skipping BTF generation for nvidia-peermem.ko due to unavailability of vmlinux
+ ../mkprecompiled --pack nvidia-modules-5.14.0-builtin --description 5.14.0-427.96.1.el9_4.aarch64+64k --kernel-module nvidia.ko --kernel-module nvidia-modeset.ko --kernel-module nvidia-uvm.ko --target-directory .
Packing precompiled kernel interface...
"""
INSTALL = """\
nvidia-installer log file '/var/log/nvidia-installer.log'
Required file 'nvidia-drm.ko' not found in package
   Will try to build it during installation.
Required file 'nvidia-peermem.ko' not found in package
"""


def _run(*logs):
    findings, _ = run_checks(facts_with(*logs), checks=[get_check("KD002")])
    return findings


def test_missing_modules_are_a_contributing_finding_citing_the_pack_line():
    build = container_log("driver.log", BUILD, pod=POD, container="openshift-driver-toolkit-ctr", first=989)
    install = container_log("driver.log", INSTALL, pod=POD, container="nvidia-driver-ctr", first=1033)
    [f] = _run(build, install)
    assert f.role == Role.CONTRIBUTING and f.severity == Severity.WARNING
    assert f.facts["missing"] == ["nvidia-drm.ko", "nvidia-peermem.ko"]
    assert [e.cite() for e in f.evidence] == ["driver.log:990", "driver.log:1034", "driver.log:1036"]
    assert "--kernel-module nvidia-peermem.ko" in f.fixes[0].snippet


def test_silent_when_the_package_has_every_module():
    build = container_log("driver.log", BUILD, pod=POD)
    ok = container_log("driver.log", "Installing 'NVIDIA Accelerated Graphics Driver for Linux-x86_64' (570.172.08):\n"
                       "  Installing: [##############################] 100%\nDriver file installation is complete.\n", pod=POD, first=1033)
    assert _run(build, ok) == []
