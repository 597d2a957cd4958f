"""KD108 host-driver-conflicts-with-driver-container: host driver 535 loaded, container wants 550."""

from failure_fixtures import cites, facts_from, pod, run

DRIVER = """\
$ kubectl logs -n gpu-operator nvidia-driver-daemonset-6d97v -c nvidia-driver-ctr
========== NVIDIA Software Installer ==========

Starting installation of NVIDIA driver version 550.127.05 for Linux kernel version 5.15.0-1034-aws

Stopping NVIDIA persistence daemon...
Unloading NVIDIA driver kernel modules...
Could not unload NVIDIA driver kernel modules, driver is in use
"""
DMESG = """\
$ dmesg -T | grep NVRM
[Mon Jan  4 08:02:11 2021] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024
"""


def test_host_driver_of_another_version_is_loaded():
    p = pod("nvidia-driver-daemonset-6d97v", node="ip-10-0-1-9", status="CrashLoopBackOff", ready="0/1", restarts=14)
    [f] = run("KD108", facts_from({"driver.log": DRIVER, "dmesg.txt": DMESG}, p))
    assert f.facts["host_driver"] == "535.183.01" and f.facts["container_driver"] == "550.127.05"
    assert cites(f) == ["driver.log:4", "dmesg.txt:2", "driver.log:8"]
    assert f.fixes[0].commands == ("kubectl label node ip-10-0-1-9 nvidia.com/gpu.deploy.driver=false --overwrite",)


def test_silent_when_the_loaded_module_is_the_containers_own():
    same = DMESG.replace("535.183.01", "550.127.05")
    assert run("KD108", facts_from({"driver.log": DRIVER, "dmesg.txt": same})) == []


def test_silent_when_driver_manager_found_the_preinstalled_driver():
    mgr = "$ kubectl logs -n gpu-operator nvidia-driver-daemonset-6d97v -c k8s-driver-manager\nNVIDIA GPU driver is already pre-installed on the node, disabling the containerized driver on the node\n"
    assert run("KD108", facts_from({"driver.log": DRIVER, "dmesg.txt": DMESG, "mgr.log": mgr})) == []
