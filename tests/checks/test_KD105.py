"""KD105 module-built-for-another-kernel: version magic / exec format / no module for uname -r."""

from failure_fixtures import cites, facts_from, run

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
