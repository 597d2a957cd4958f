"""KD102 kernel-headers-unavailable: the driver container finds no headers for the running kernel."""

from failure_fixtures import cites, facts_from, run

RHEL = """\
$ oc logs nvidia-driver-daemonset-412.86.202301061548-0-x7r2m -n nvidia-gpu-operator -c nvidia-driver-ctr --previous
========== NVIDIA Software Installer ==========

Starting installation of NVIDIA driver version 450.80.02 for Linux kernel version 4.18.0-240.23.2.el8_3.x86_64

Installing Linux kernel headers...
+ echo 'Installing Linux kernel headers...'
+ dnf -q -y --releasever=8.3 install kernel-headers-4.18.0-240.23.2.el8_3.x86_64 kernel-devel-4.18.0-240.23.2.el8_3.x86_64
Error: Unable to find a match: kernel-headers-4.18.0-240.23.2.el8_3.x86_64 kernel-devel-4.18.0-240.23.2.el8_3.x86_64
"""

UBUNTU = """\
$ kubectl logs -n gpu-operator nvidia-driver-daemonset-cs2sr --previous
Starting installation of NVIDIA driver version 460.32.03 for Linux kernel version 5.4.0-1068-fips
Stopping NVIDIA persistence daemon...
Unloading NVIDIA driver kernel modules...
Unmounting NVIDIA driver rootfs...
Checking NVIDIA driver packages...
Updating the package cache...
Resolving Linux kernel version...
Could not resolve Linux kernel version
Stopping NVIDIA persistence daemon...
"""


def test_dnf_without_headers_points_at_entitlement_and_fills_the_pod():
    [f] = run("KD102", facts_from({"driver.log": RHEL}))
    assert cites(f) == ["driver.log:4", "driver.log:9"]  # the kernel it runs, then the failure
    assert "entitled repositories" in f.explanation
    assert f.fixes[0].commands[0] == ("kubectl logs nvidia-driver-daemonset-412.86.202301061548-0-x7r2m -n nvidia-gpu-operator "
                                      "-c nvidia-driver-ctr --previous")
    assert len(f.fixes[0].commands) == 1  # the kernel version command needs the node name, which no artifact shows


def test_unresolved_kernel_version_on_a_fips_kernel():
    """NVIDIA/gpu-operator#457: the FIPS kernel's headers live only in the Ubuntu Pro FIPS repository."""
    [f] = run("KD102", facts_from({"driver.log": UBUNTU}))
    assert cites(f) == ["driver.log:2", "driver.log:9"] and "Could not resolve Linux kernel version" in f.title
    assert "FIPS kernel 5.4.0-1068-fips" in f.explanation
    assert f.fixes[0].kind.value == "workaround" and "Ubuntu Pro FIPS apt source for 5.4.0-1068-fips" in f.fixes[0].description


def test_a_generic_kernel_is_named_with_the_headers_package_it_needs():
    generic = UBUNTU.replace("5.4.0-1068-fips", "5.15.0-1028-gke")
    [f] = run("KD102", facts_from({"driver.log": generic}))
    assert "needs linux-headers-5.15.0-1028-gke" in f.explanation and "FIPS" not in f.explanation


def test_silent_when_headers_install():
    ok = RHEL.replace("Error: Unable to find a match: kernel-headers-4.18.0-240.23.2.el8_3.x86_64 kernel-devel-4.18.0-240.23.2.el8_3.x86_64",
                      "Installing Linux kernel module files...\nGenerating Linux kernel version string...\nCompiling NVIDIA driver kernel modules...")
    assert run("KD102", facts_from({"driver.log": ok})) == []
