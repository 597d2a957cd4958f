"""KD101 nouveau-holds-the-gpu: nouveau owns the GPU (installer line, NVRM probe lines, dmesg nouveau)."""

from failure_fixtures import cites, facts_from, pod, run

from gpusleuth.model.finding import Role

DRIVER_LOG = """\
$ kubectl logs -n gpu-operator nvidia-driver-daemonset-7xk2p -c nvidia-driver-ctr --previous
DRIVER_ARCH is x86_64
Creating directory NVIDIA-Linux-x86_64-550.127.05
Verifying archive integrity... OK

========== NVIDIA Software Installer ==========

Starting installation of NVIDIA driver version 550.127.05 for Linux kernel version 6.8.0-45-generic

Stopping NVIDIA persistence daemon...
Unloading NVIDIA driver kernel modules...
Unmounting NVIDIA driver rootfs...
Checking NVIDIA driver packages...
Loading NVIDIA driver kernel modules...
+ modprobe nvidia
modprobe: ERROR: could not insert 'nvidia': No such device
"""

DMESG = """\
$ dmesg -T | grep -i -e nvrm -e nouveau
[Tue Mar 11 10:02:11 2025] nouveau 0000:3b:00.0: NVIDIA GA100 (170000a1)
[Tue Mar 11 10:02:11 2025] nouveau 0000:3b:00.0: bios: version 92.00.45.00.05
[Tue Mar 11 10:14:52 2025] NVRM: The NVIDIA probe routine was not called for 1 device(s).
[Tue Mar 11 10:14:52 2025] NVRM: This can occur when a driver such as:
                           NVRM: nouveau, rivafb, nvidiafb or rivatv
                           NVRM: was loaded and obtained ownership of the NVIDIA device(s).
[Tue Mar 11 10:14:52 2025] NVRM: No NVIDIA devices probed.
"""

INSTALLER = """\
$ kubectl logs nvidia-driver-daemonset-q2wz9 -n gpu-operator -c nvidia-driver-ctr
ERROR: The Nouveau kernel driver is currently in use by your system.  This driver is incompatible with the NVIDIA driver, and must be disabled before proceeding.  Please consult the NVIDIA driver README and your Linux distribution's documentation for details on how to correctly disable the Nouveau kernel driver.
ERROR: Installation has failed.  Please see the file '/var/log/nvidia-installer.log' for details.
"""


def test_kernel_probe_lines_are_placed_on_the_only_node_and_fill_its_commands():
    facts = facts_from({"driver.log": DRIVER_LOG, "dmesg.txt": DMESG},
                       pod("nvidia-driver-daemonset-7xk2p", status="CrashLoopBackOff", ready="0/1", restarts=9))
    [f] = run("KD101", facts)
    assert f.role == Role.ROOT_CAUSE and f.node == "gpu-node-1" and f.layer.value == "kernel-driver"
    assert cites(f) == ["dmesg.txt:4", "dmesg.txt:5"]
    immediate = f.fixes[0]
    assert immediate.commands == ("kubectl debug node/gpu-node-1 -it --image=busybox -- chroot /host sh -c 'lsmod | grep -i nouveau; cat /proc/cmdline'",)
    assert "blacklist nouveau" in f.fixes[1].snippet


def test_installer_line_alone_names_the_pod_and_says_what_to_fill_in():
    [f] = run("KD101", facts_from({"driver.log": INSTALLER}))
    assert cites(f) == ["driver.log:2"]
    assert f.facts["pod"] == "nvidia-driver-daemonset-q2wz9" and f.component == "nvidia-driver-daemonset"
    assert f.fixes[0].commands == () and "node's name" in f.fixes[0].description


def test_silent_on_a_clean_driver_install_and_a_kernel_cmdline_that_blacklists_nouveau():
    ok = DRIVER_LOG.replace("modprobe: ERROR: could not insert 'nvidia': No such device", "Done, now waiting for signal")
    dmesg = ("$ dmesg\n[    0.000000] Command line: BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=/dev/sda1 rd.driver.blacklist=nouveau nouveau.modeset=0\n"
             "[   12.331245] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.127.05  Tue Oct  8 03:24:45 UTC 2024\n")
    assert run("KD101", facts_from({"driver.log": ok, "dmesg.txt": dmesg})) == []


PROBE_LSMOD = """\
root@gpu-node-1:~# lsmod
Module                  Size  Used by
nouveau              2433024  0
mxm_wmi                16384  1 nouveau
drm_ttm_helper         16384  1 nouveau
ttm                    86016  2 drm_ttm_helper,nouveau
root@gpu-node-1:~# cat /proc/cmdline
BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=0c2f6a7e ro quiet splash
"""


def test_nouveau_in_lsmod_without_nvidia_fires_from_the_host_alone():
    [f] = run("KD101", facts_from({"host.txt": PROBE_LSMOD}, pod("nvidia-driver-daemonset-7xk2p", status="CrashLoopBackOff", ready="0/1")))
    assert f.node == "gpu-node-1" and f.role == Role.ROOT_CAUSE
    assert cites(f) == ["host.txt:1", "host.txt:3", "host.txt:8"]  # the lsmod command, nouveau's row, the cmdline
    assert "nouveau is loaded and nvidia is not; /proc/cmdline does not blacklist it" in f.explanation
    assert f.facts["signatures"] == ["host.nouveau-loaded"]


def test_nouveau_next_to_a_loaded_nvidia_is_not_this_class():
    both = PROBE_LSMOD.replace("nouveau              2433024  0\n", "nouveau              2433024  0\nnvidia              56717312  2\n")
    assert run("KD101", facts_from({"host.txt": both})) == []


def test_a_long_wrapped_kernel_line_is_cut_at_a_word_in_the_title():
    """The probe message spans three dmesg lines; the title quotes it without cutting a word in half."""
    [f] = run("KD101", facts_from({"dmesg.txt": DMESG}))
    assert len(f.title) <= 160
    quoted = f.title.split(": ", 1)[1]
    assert quoted.endswith("…") or quoted.endswith("device(s).")
    assert not quoted.rstrip("…").endswith(("loa", "was lo", "obtain")), f.title


def test_clip_keeps_whole_words():
    from gpusleuth.checks.classes import clip

    assert clip("short line", 40) == "short line"
    assert clip("NVRM: was loaded and obtained ownership of the NVIDIA device(s).", 30) == "NVRM: was loaded and obtained…"
    assert clip("a" * 50, 20) == "a" * 19 + "…"
