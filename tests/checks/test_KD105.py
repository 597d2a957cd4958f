"""KD105 module-built-for-another-kernel: version magic / exec format / no module for uname -r."""

from failure_fixtures import cites, facts_from, pod, run

DMESG = """\
$ dmesg | grep nvidia
[   31.224519] nvidia: version magic '5.15.0-91-generic SMP mod_unload modversions ' should be '5.15.0-94-generic SMP mod_unload modversions '
[   31.301127] nvidia: version magic '5.15.0-91-generic SMP mod_unload modversions ' should be '5.15.0-94-generic SMP mod_unload modversions '
"""
MODPROBE = """\
root@gpu-worker-3:~# modprobe nvidia
modprobe: FATAL: Module nvidia not found in directory /lib/modules/5.15.0-94-generic
"""


def test_version_magic_names_built_and_running_kernel():
    [f] = run("KD105", facts_from({"dmesg.txt": DMESG}))
    assert cites(f) == ["dmesg.txt:2", "dmesg.txt:3"]
    assert "second the kernel running" in f.explanation


def test_module_missing_for_the_running_kernel():
    [f] = run("KD105", facts_from({"modprobe.txt": MODPROBE}))
    assert cites(f) == ["modprobe.txt:2"] and f.facts["signatures"] == ["kmod.module-not-found"]


def test_silent_when_the_module_loads():
    ok = "$ dmesg | grep NVRM\n[   31.22] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.07  Sat Feb 17 22:55:48 UTC 2024\n"
    assert run("KD105", facts_from({"dmesg.txt": ok})) == []


HOST = """\
$ uname -r
5.15.0-94-generic
$ modinfo nvidia
filename:       /lib/modules/5.15.0-94-generic/updates/dkms/nvidia.ko
version:        535.129.03
vermagic:       5.15.0-91-generic SMP mod_unload modversions 
"""


def test_vermagic_of_another_kernel_on_the_host():
    [f] = run("KD105", facts_from({"host.txt": HOST}))
    assert cites(f) == ["host.txt:2", "host.txt:4", "host.txt:6"]
    assert f.title.startswith("The NVIDIA module does not match the running kernel (host.txt): nvidia.ko")
    assert "built for kernel 5.15.0-91-generic (vermagic), but the node runs 5.15.0-94-generic" in f.explanation


def test_host_and_dmesg_of_one_node_make_one_finding():
    [f] = run("KD105", facts_from({"host.txt": HOST, "dmesg.txt": DMESG}, pod("nvidia-driver-daemonset-x", node="gpu-worker-3")))
    assert f.node == "gpu-worker-3" and {"dmesg.txt:2", "host.txt:6"} <= set(cites(f))


def test_silent_when_the_module_is_built_for_the_running_kernel():
    assert run("KD105", facts_from({"host.txt": HOST.replace("5.15.0-91-generic", "5.15.0-94-generic")})) == []
