"""KD104 secure-boot-rejects-driver-module: Secure Boot refuses the unsigned module."""

from failure_fixtures import cites, facts_from, pod, run

DRIVER = """\
$ kubectl logs -n gpu-operator nvidia-driver-daemonset-vz6lq -c nvidia-driver-ctr --previous
Starting installation of NVIDIA driver version 580.65.06 for Linux kernel version 6.8.0-1029-gke
Compiling NVIDIA driver kernel modules...
Loading NVIDIA driver kernel modules...
+ modprobe nvidia NVreg_CoherentGPUMemoryMode=driver
modprobe: ERROR: could not insert 'nvidia': Key was rejected by service
"""
JOURNAL = """\
$ journalctl -k --no-pager | tail -3
Sep 24 07:12:09 gke-gb200-pool-7d1c kernel: Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7
Sep 24 07:12:09 gke-gb200-pool-7d1c kernel: Loading of unsigned module is rejected
"""


def test_key_rejected_and_lockdown_lines_on_the_same_node():
    facts = facts_from({"driver.log": DRIVER, "journal.txt": JOURNAL},
                       pod("nvidia-driver-daemonset-vz6lq", node="gke-gb200-pool-7d1c", status="CrashLoopBackOff", ready="0/1", restarts=21))
    [f] = run("KD104", facts)
    assert f.node == "gke-gb200-pool-7d1c"
    assert {"driver.log:6", "journal.txt:2", "journal.txt:3"} <= set(cites(f))
    assert "mokutil --sb-state" in f.fixes[0].commands[0] and "-signed" in f.fixes[1].description


def test_silent_for_an_unrelated_module_error():
    other = DRIVER.replace("Key was rejected by service", "Unknown symbol in module, or unknown parameter (see dmesg)")
    assert run("KD104", facts_from({"driver.log": other})) == []


UNSIGNED = """\
root@gpu-node-1:~# mokutil --sb-state
SecureBoot enabled
root@gpu-node-1:~# chroot /run/nvidia/driver modinfo nvidia
filename:       /lib/modules/6.8.0-45-generic/kernel/drivers/video/nvidia.ko
version:        550.127.05
license:        NVIDIA
name:           nvidia
vermagic:       6.8.0-45-generic SMP preempt mod_unload modversions 
parm:           NVreg_EnableGpuFirmware:int
"""


def test_secure_boot_and_an_unsigned_module_on_the_host():
    [f] = run("KD104", facts_from({"host.txt": UNSIGNED}, pod("nvidia-driver-daemonset-vz6lq", status="CrashLoopBackOff", ready="0/1")))
    assert f.node == "gpu-node-1" and cites(f) == ["host.txt:2", "host.txt:4"]  # Secure Boot, the module file
    assert "carries no signature" in f.explanation and f.fixes[0].commands[0].startswith("kubectl debug node/gpu-node-1")


def test_silent_when_the_module_is_signed_or_secure_boot_is_off():
    signed = UNSIGNED.replace("parm:", "signer:         Canonical Ltd. Kernel Module Signing\nparm:")
    assert run("KD104", facts_from({"host.txt": signed})) == []
    assert run("KD104", facts_from({"host.txt": UNSIGNED.replace("SecureBoot enabled", "SecureBoot disabled")})) == []
