"""Host facts parsers: lsmod, modinfo, uname, os-release, /proc files, mokutil, NVRM version, MOFED version."""

from __future__ import annotations

import pytest

from gpusleuth.analysis.engine import sniff
from gpusleuth.model.document import Document
from gpusleuth.parsers.base import LIKELY, NO, SURE
from gpusleuth.parsers.host_facts import (
    parse_cmdline,
    parse_driver_version,
    parse_kernel_release,
    parse_modinfo,
    parse_modules,
    parse_mofed,
    parse_os_release,
    parse_secure_boot,
    parse_uptime,
)
from gpusleuth.parsers.host_processes import parse_probe
from tests.conftest import doc_from_text, docs_from_text


def _probe(text: str, name: str, command: str | None = None, path: str | None = None, node: str = "gpu-node-07") -> Document:
    """A node-probe artifact as a bundle gives it: provenance and node from the manifest record."""
    lines = tuple(text.rstrip("\n").split("\n"))
    return Document(f"nodes/{node}/{name}", lines, 1, command=command or (f"cat {path}" if path else None), path_hint=path,
                    meta={"source": "probe", "node": node, "command": command, "path": path})


def _kind(doc: Document) -> str | None:
    score, p = sniff(doc)
    return p.kind if p else None


# ---------------------------------------------------------------------------------------------- lsmod

LSMOD = """\
Module                  Size  Used by
nvidia_peermem         16384  0
nvidia_uvm           1794048  4
nvidia_drm            122880  0
nvidia_modeset       1355776  1 nvidia_drm
nvidia              56717312  550 nvidia_uvm,nvidia_peermem,nvidia_modeset
ib_core               434176  9 rdma_cm,ib_ipoib,nvidia_peermem,iw_cm,ib_umad,rdma_ucm,ib_uverbs,mlx5_ib,ib_cm
mlx_compat             69632  15 rdma_cm,ib_ipoib,mlx4_core,iw_cm,ib_umad,ib_core,rdma_ucm,ib_uverbs,mlx4_ib,mlx5_ib,ib_cm,mlx5_core,auxiliary,mlxdevm,mlxfw
drm_kms_helper        311296  1 nvidia_drm
"""


def test_lsmod_kmod_with_long_used_by_lists():
    doc = _probe(LSMOD, "commands/lsmod.txt", "lsmod")
    assert _kind(doc) == "host.modules"
    (ml,) = parse_modules.parse(doc)
    assert ml.node == "gpu-node-07" and ml.source == "lsmod" and not ml.filtered
    nvidia = ml.get("nvidia")
    assert (nvidia.size, nvidia.use_count, nvidia.used_by) == (56717312, 550, ("nvidia_uvm", "nvidia_peermem", "nvidia_modeset"))
    assert len(ml.get("mlx_compat").used_by) == 15 and ml.get("mlx_compat").evidence.line == 8
    assert ml.get("nvidia_peermem").used_by == () and ml.loaded("nouveau") is False


BUSYBOX_LSMOD = """\
Module                  Size  Used by    Tainted: P  
nvidia_uvm           1794048  0 
nvidia              56717312  2 nvidia_uvm,nvidia_modeset
nouveau              2433024  0 
"""

PROC_MODULES = """\
nvidia_uvm 1794048 0 - Live 0x0000000000000000 (POE)
nvidia_modeset 1355776 1 nvidia_drm, Live 0x0000000000000000 (POE)
nvidia 56717312 550 nvidia_uvm,nvidia_peermem,nvidia_modeset, Live 0x0000000000000000 (POE)
ip_tables 32768 0 [permanent], Live 0x0000000000000000
"""


def test_busybox_lsmod_and_proc_modules():
    (bb,) = parse_modules.parse(_probe(BUSYBOX_LSMOD, "commands/lsmod.txt", "lsmod"))
    assert [m.name for m in bb.modules] == ["nvidia_uvm", "nvidia", "nouveau"] and bb.loaded("nouveau")
    assert bb.get("nvidia").used_by == ("nvidia_uvm", "nvidia_modeset")
    doc = _probe(PROC_MODULES, "files/proc/modules", path="/proc/modules")
    assert _kind(doc) == "host.modules"
    (pm,) = parse_modules.parse(doc)
    assert pm.source == "/proc/modules" and pm.get("nvidia").state == "Live"
    assert pm.get("nvidia").used_by == ("nvidia_uvm", "nvidia_peermem", "nvidia_modeset") and pm.get("ip_tables").used_by == ()
    assert pm.loaded("nvidia_peermem") is False  # a full listing: what is not there is not loaded


def test_proc_modules_of_a_kernel_without_module_unloading():
    """/proc/modules as a real H100 node's kernel (6.18, CONFIG_MODULE_UNLOAD off) printed it: no use counts."""
    text = "nvidia_uvm 1830912 - - Live 0xffffffffc080c000 (O)\nnvidia 14299136 - - Live 0xffffffffc0400000 (O)\n"
    doc = _probe(text, "files/proc/modules", "cat /proc/modules", path="/proc/modules")
    assert _kind(doc) == "host.modules"
    (pm,) = parse_modules.parse(doc)
    assert pm.loaded("nvidia") and pm.get("nvidia").use_count is None and pm.get("nvidia").used_by == ()
    assert pm.loaded("nouveau") is False


def test_lsmod_through_grep_only_speaks_for_what_the_grep_lets_through():
    text = "root@gpu-node-07:~# lsmod | grep -E 'nvidia|nouveau'\nnvidia_uvm           1794048  0\nnvidia              56717312  2 nvidia_uvm\n"
    (ml,) = parse_modules.parse(doc_from_text(text))
    assert ml.loaded("nvidia") is True and ml.loaded("nvidia_peermem") is False and ml.loaded("nouveau") is False
    assert ml.loaded("ib_core") is None  # the grep hides it
    assert ml.evidence.line == 1
    (plain,) = parse_modules.parse(doc_from_text("$ lsmod | grep nvidia\nnvidia              56717312  2 nvidia_uvm\n"))
    assert plain.loaded("nvidia_peermem") is False and plain.loaded("nouveau") is None
    (basic,) = parse_modules.parse(doc_from_text("$ lsmod | grep -i 'NVIDIA\\|nouveau'\nnouveau              2433024  0\n"))
    assert basic.loaded("nvidia") is False and basic.loaded("nouveau") is True
    (head,) = parse_modules.parse(doc_from_text("$ lsmod | head -3\nModule                  Size  Used by\nnvidia              56717312  2\n"))
    assert head.loaded("nouveau") is None  # head cut it: absence proves nothing


def test_headerless_rows_without_provenance_are_a_partial_listing():
    doc = Document("lsmod-paste.txt", ("nvidia_uvm           1794048  0", "nvidia              56717312  2 nvidia_uvm"))
    assert _kind(doc) == "host.modules"
    (ml,) = parse_modules.parse(doc)
    assert ml.loaded("nvidia") and ml.loaded("nouveau") is None


# ---------------------------------------------------------------------------------------------- modinfo

MODINFO = """\
filename:       /lib/modules/5.15.0-91-generic/updates/dkms/nvidia.ko
firmware:       nvidia/535.129.03/gsp_ga10x.bin
alias:          char-major-195-*
version:        535.129.03
supported:      external
license:        NVIDIA
srcversion:     B5C9BA0C4B7B3E5C8F1A2D3
alias:          pci:v000010DEd*sv*sd*bc06sc80i00*
depends:        drm
retpoline:      Y
name:           nvidia
vermagic:       5.15.0-91-generic SMP mod_unload modversions 
parm:           NvSwitchRegDwords:NvSwitch regkey (charp)
parm:           NVreg_RegistryDwordsPerDevice:charp
parm:           NVreg_EnableGpuFirmware:Enable GSP firmware on
supported GPUs: 0 = disabled, 1 = enabled (default)
parm:           rm_firmware_active:charp
"""

SIGNED = """\
filename:       /lib/modules/5.15.0-94-generic/kernel/nvidia-535srv/nvidia.ko
version:        535.154.05
license:        NVIDIA
name:           nvidia
vermagic:       5.15.0-94-generic SMP mod_unload modversions 
sig_id:         PKCS#7
signer:         Canonical Ltd. Kernel Module Signing
sig_key:        4B:A9:D7:9B:3C:2F:7D:16:1D:0C:1B:4D:66:70:2E:06:8A:5C:E1:8E
sig_hashalgo:   sha512
signature:      5B:C0:A6:47:02:1F:6F:4C:BB:71:3C:7E:13:B0:2A:8C:55:49:9F:0B:
\t\tE7:18:A4:2E:14:0B:3C:C5:42:9D:6B:2E:7E:C4:5A:A1:3F:0D:9E:3B:
\t\t8C:22
parm:           NVreg_OpenRmEnableUnsupportedGpus:int
"""


def test_modinfo_unsigned_with_multiline_parm():
    doc = _probe(MODINFO, "commands/modinfo-nvidia.txt", "chroot /run/nvidia/driver modinfo nvidia")
    assert _kind(doc) == "host.modinfo"
    (mi,) = parse_modinfo.parse(doc)
    assert (mi.name, mi.version, mi.built_for, mi.root, mi.node) == ("nvidia", "535.129.03", "5.15.0-91-generic", "/run/nvidia/driver", "gpu-node-07")
    assert mi.signed is False and mi.signer is None and mi.depends == ("drm",)
    assert mi.ev("vermagic").line == 12 and mi.ev("filename").line == 1


def test_modinfo_signed_with_wrapped_signature():
    (mi,) = parse_modinfo.parse(doc_from_text("root@n:~# modinfo nvidia\n" + SIGNED))
    assert mi.signed is True and mi.signer == "Canonical Ltd. Kernel Module Signing" and mi.sig_key.startswith("4B:A9")
    assert mi.ev("signer").line == 8 and mi.built_for == "5.15.0-94-generic"


def test_modinfo_empty_signer_field_and_two_modules():
    text = MODINFO + """\
filename:       /lib/modules/5.15.0-91-generic/updates/dkms/nvidia-peermem.ko
version:        535.129.03
depends:        nvidia,ib_core
vermagic:       5.15.0-91-generic SMP mod_unload modversions 
signat:         PKCS#7
signer:         
sig_key:        
"""
    nvidia, peermem = parse_modinfo.parse(doc_from_text("$ modinfo nvidia nvidia-peermem\n" + text))
    assert nvidia.name == "nvidia" and nvidia.signed is False
    assert peermem.name == "nvidia_peermem" and peermem.depends == ("nvidia", "ib_core") and peermem.signed is True


def test_modinfo_not_found_and_grep_of_one_field():
    (gone,) = parse_modinfo.parse(_probe("modinfo: ERROR: Module nvidia not found.", "commands/modinfo-nvidia.txt", "modinfo nvidia"))
    assert gone.found is False and gone.ev("error").line == 1
    doc = Document("nvidia-bug-report.log", ("vermagic:       5.15.0-91-generic SMP mod_unload modversions",), 4120,
                   command="modinfo nvidia | grep vermagic", meta={"node": "gpu-node-07"})
    assert _kind(doc) == "host.modinfo"
    (mi,) = parse_modinfo.parse(doc)
    assert mi.name == "nvidia" and mi.built_for == "5.15.0-91-generic" and mi.signed is None and mi.ev("vermagic").line == 4120


# ---------------------------------------------------------------------------------------------- os-release

UBUNTU = """\
PRETTY_NAME="Ubuntu 22.04.4 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.4 LTS (Jammy Jellyfish)"
VERSION_CODENAME=jammy
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
"""
RHCOS = """\
NAME="Red Hat Enterprise Linux CoreOS"
ID="rhcos"
ID_LIKE="rhel fedora"
VERSION="418.94.202510230424-0"
VERSION_ID="4.18"
PRETTY_NAME="Red Hat Enterprise Linux CoreOS 418.94.202510230424-0"
OPENSHIFT_VERSION="4.18"
RHEL_VERSION=9.4
"""


@pytest.mark.parametrize("text,ident,version,tag", [
    (UBUNTU, "ubuntu", "22.04", "ubuntu22.04"),
    (RHCOS, "rhcos", "4.18", "rhcos4.18"),
    ("NAME=Debian GNU/Linux\nID=debian\nVERSION_ID='12'\nPRETTY_NAME='Debian GNU/Linux 12 (bookworm)'\n", "debian", "12", "debian12"),
])
def test_os_release_quoted_or_not(text, ident, version, tag):
    doc = _probe(text, "files/etc/os-release", path="/etc/os-release")
    assert _kind(doc) == "host.os-release"
    (osr,) = parse_os_release.parse(doc)
    assert (osr.id, osr.version_id, osr.tag) == (ident, version, tag)
    assert osr.evidence.text.startswith("ID=")


def test_os_release_pasted_with_lsb_release():
    text = "$ cat /etc/*release\nDISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=24.04\nDISTRIB_DESCRIPTION=\"Ubuntu 24.04.1 LTS\"\n" + UBUNTU.replace("22.04", "24.04")
    (osr,) = parse_os_release.parse(doc_from_text(text))
    assert (osr.id, osr.version_id, osr.pretty_name) == ("ubuntu", "24.04", "Ubuntu 24.04.4 LTS") and osr.id_like == ("debian",)


# ---------------------------------------------------------------------------------------------- /proc files, uname, mokutil


def test_uptime_and_cmdline():
    doc = _probe("350735.47 5567911.20", "files/proc/uptime", path="/proc/uptime")
    assert _kind(doc) == "host.uptime"
    (up,) = parse_uptime.parse(doc)
    assert up.seconds == 350735.47 and up.idle == 5567911.20 and up.node == "gpu-node-07" and up.read_at is None
    timed = Document(doc.artifact, doc.lines, 1, path_hint="/proc/uptime", meta={**doc.meta, "server_time": "2025-09-26T18:47:49+00:00"})
    (up,) = parse_uptime.parse(timed)
    assert up.read_at.isoformat() == "2025-09-26T18:47:49+00:00"
    line = "BOOT_IMAGE=/vmlinuz-5.15.0-91-generic root=UUID=1c2d ro modprobe.blacklist=nouveau,nvidiafb rd.driver.blacklist=nouveau nouveau.modeset=0 quiet splash"
    doc = _probe(line, "files/proc/cmdline", path="/proc/cmdline")
    assert _kind(doc) == "host.cmdline"
    (cl,) = parse_cmdline.parse(doc)
    assert cl.blacklisted("nouveau") == ["modprobe.blacklist=nouveau,nvidiafb", "rd.driver.blacklist=nouveau"]
    assert cl.blacklisted("nvidia") == [] and cl.values("nouveau.modeset") == ["0"]
    assert _kind(Document("cmdline.txt", ("BOOT_IMAGE=(hd0,gpt2)/vmlinuz-6.8.0-45-generic root=/dev/sda2 ro",))) == "host.cmdline"


@pytest.mark.parametrize("command,text,release,source", [
    ("uname -r", "5.15.0-91-generic", "5.15.0-91-generic", "uname -r"),
    ("uname -a", "Linux gpu-node-07 5.14.0-284.30.1.el9_2.x86_64 #1 SMP PREEMPT_DYNAMIC Fri Aug 25 10:52:03 EDT 2023 x86_64 x86_64 x86_64 GNU/Linux",
     "5.14.0-284.30.1.el9_2.x86_64", "uname -a"),
    (None, "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) (x86_64-linux-gnu-gcc-13 (Ubuntu 13.2.0-23ubuntu4) 13.2.0, GNU ld (GNU Binutils for Ubuntu) 2.42) #45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC 2024",
     "6.8.0-45-generic", "/proc/version"),
])
def test_kernel_release(command, text, release, source):
    doc = _probe(text, "commands/uname.txt", command)
    assert _kind(doc) == "host.uname"
    (k,) = parse_kernel_release.parse(doc)
    assert (k.release, k.source) == (release, source)
    if source == "uname -a":
        assert (k.hostname, k.arch) == ("gpu-node-07", "x86_64")


def test_a_bare_version_line_is_not_taken_for_a_kernel():
    assert parse_kernel_release.sniff(Document("v.txt", ("535.129.03",))) == NO
    assert parse_kernel_release.sniff(Document("v.txt", ("6.8.0-45-generic",))) == LIKELY


@pytest.mark.parametrize("text,enabled,line", [
    ("SecureBoot enabled", True, 1),
    ("SecureBoot disabled\nPlatform is in Setup Mode", False, 1),
    ("SecureBoot enabled\nSecureBoot validation is disabled in shim", False, 2),
    ("EFI variables are not supported on this system", False, 1),
])
def test_mokutil(text, enabled, line):
    doc = _probe(text, "commands/mokutil-sb-state.txt", "mokutil --sb-state")
    assert _kind(doc) == "host.secure-boot"
    (sb,) = parse_secure_boot.parse(doc)
    assert sb.enabled is enabled and sb.evidence.line == line


# ---------------------------------------------------------------------------------------------- driver and MOFED versions


@pytest.mark.parametrize("text,version,is_open,arch", [
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04) ",
     "535.129.03", False, "x86_64"),
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U22-I3-B17-02-5)  Tue Sep 23 09:55:41 UTC 2025\n"
     "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04.2) ", "580.95.05", True, "x86_64"),
    ("NVRM version: NVIDIA UNIX aarch64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 11.4.1 20231218 (Red Hat 11.4.1-3) (GCC) ",
     "550.54.15", False, "aarch64"),
])
def test_proc_driver_nvidia_version(text, version, is_open, arch):
    doc = _probe(text, "files/proc/driver/nvidia/version", path="/proc/driver/nvidia/version")
    assert _kind(doc) == "host.nvidia-version"
    (dv,) = parse_driver_version.parse(doc)
    assert (dv.version, dv.open, dv.arch) == (version, is_open, arch)
    assert dv.gcc.startswith("gcc version 11.4") and dv.gcc_evidence.line == 2


def test_sys_module_versions():
    doc = _probe("535.129.03", "files/sys/module/nvidia/version", path="/sys/module/nvidia/version")
    assert _kind(doc) == "host.nvidia-version"
    (dv,) = parse_driver_version.parse(doc)
    assert (dv.version, dv.source) == ("535.129.03", "/sys/module/nvidia/version")
    doc = _probe("24.10-1.1.4", "files/sys/module/mlx5_core/version", path="/sys/module/mlx5_core/version")
    assert _kind(doc) == "host.mofed-version"
    (mv,) = parse_mofed.parse(doc)
    assert (mv.version, mv.source) == ("24.10-1.1.4", "/sys/module/mlx5_core/version")


@pytest.mark.parametrize("text,version,dist", [
    ("MLNX_OFED_LINUX-24.10-1.1.4.0:", "24.10-1.1.4.0", "MLNX_OFED_LINUX"),
    ("OFED-internal-24.07-0.6.1:", "24.07-0.6.1", "OFED-internal"),
    ("MLNX_OFED_LINUX-5.8-1.0.1.1 (OFED-5.8-1.0.1):\n\nclusterkit:\nmlnx_ofed_clusterkit-1.8.1-1.58101.x86_64", "5.8-1.0.1.1", "MLNX_OFED_LINUX"),
])
def test_ofed_info(text, version, dist):
    doc = _probe(text, "commands/ofed-info.txt", "chroot /run/mellanox/drivers ofed_info -s")
    assert _kind(doc) == "host.mofed-version"
    (mv,) = parse_mofed.parse(doc)
    assert (mv.version, mv.distribution) == (version, dist)


# ---------------------------------------------------------------------------------------------- listings, and silence elsewhere


def test_bare_ls_of_the_validations_directory():
    doc = _probe("cuda-ready  driver-ready  plugin-ready  toolkit-ready", "commands/ls-validations.txt", "ls /run/nvidia/validations/")
    assert _kind(doc) == "host.file-probe"
    d, *files = parse_probe.parse(doc)
    assert d.path == "/run/nvidia/validations" and d.entries == ("cuda-ready", "driver-ready", "plugin-ready", "toolkit-ready")
    assert d.node == "gpu-node-07" and files[1].path == "/run/nvidia/validations/driver-ready" and files[1].node == "gpu-node-07"


def test_a_paste_of_several_host_commands_splits_into_their_parsers():
    text = ("root@gpu-node-07:~# uname -r\n5.15.0-94-generic\n"
            "root@gpu-node-07:~# cat /proc/driver/nvidia/version\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n"
            "root@gpu-node-07:~# mokutil --sb-state\nSecureBoot enabled\n"
            "root@gpu-node-07:~# lsmod | grep nvidia\n")
    kinds = [_kind(d) for d in docs_from_text(text)]
    assert kinds == ["host.uname", "host.nvidia-version", "host.secure-boot"]


@pytest.mark.parametrize("text", [
    "NAME                READY   STATUS    RESTARTS   AGE\nnvidia-driver-x    1/1     Running   0          5m",
    "I0121 12:04:24.655909 1 main.go:154] Starting FS watcher.",
    "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]",
    "Thu Oct 19 18:56:32 2023",
])
def test_host_sniffers_stay_quiet_on_other_artifacts(text):
    doc = Document("x.txt", tuple(text.split("\n")))
    for p in (parse_modules, parse_modinfo, parse_os_release, parse_uptime, parse_cmdline, parse_secure_boot,
              parse_driver_version, parse_kernel_release, parse_mofed):
        assert p.sniff(doc) == NO, p.kind


def test_sure_scores():
    assert parse_modules.sniff(_probe(LSMOD, "commands/lsmod.txt", "lsmod")) == SURE
    assert parse_modinfo.sniff(Document("m.txt", tuple(MODINFO.split("\n")))) == SURE


def test_readiness_markers_with_content():
    from gpusleuth.parsers.host_facts import parse_marker

    text = "IS_HOST_DRIVER=false\nNVIDIA_DRIVER_ROOT=/run/nvidia/driver\nDRIVER_ROOT_CTR_PATH=/driver-root\nNVIDIA_DEV_ROOT=/\nDEV_ROOT_CTR_PATH=/host"
    doc = _probe(text, "files/run/nvidia/validations/driver-ready", path="/run/nvidia/validations/driver-ready")
    assert _kind(doc) == "host.ready-marker"
    marker, path = parse_marker.parse(doc)
    assert marker.value("IS_HOST_DRIVER") == "false" and marker.value("NVIDIA_DRIVER_ROOT") == "/run/nvidia/driver"
    assert (path.path, path.exists, path.node) == ("/run/nvidia/validations/driver-ready", True, "gpu-node-07")
    ctr = _probe("GDRCOPY_ENABLED: false\nGDS_ENABLED: false\nGPU_DIRECT_RDMA_ENABLED: true", "files/run/nvidia/validations/.driver-ctr-ready",
                 path="/run/nvidia/validations/.driver-ctr-ready")
    assert _kind(ctr) == "host.ready-marker"
    marker, _ = parse_marker.parse(ctr)
    assert marker.value("GPU_DIRECT_RDMA_ENABLED") == "true" and marker.fields["GPU_DIRECT_RDMA_ENABLED"][1].line == 3


def test_commands_run_through_kubectl_debug_and_sh_c():
    text = ("$ kubectl debug node/gpu-node-1 -it --image=busybox -- chroot /host sh -c 'lsmod | grep -i nouveau; cat /proc/cmdline'\n"
            "nouveau              2433024  0\n")
    (ml,) = parse_modules.parse(doc_from_text(text))
    assert ml.loaded("nouveau") is True and ml.loaded("nvidia") is None  # a second command's output is mixed in: no absence
    doc = doc_from_text("$ kubectl exec -n gpu-operator nvidia-driver-daemonset-x -c nvidia-driver-ctr -- cat /proc/driver/nvidia/version\n"
                        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n")
    assert _kind(doc) == "host.nvidia-version"


def test_ls_la_of_the_mofed_directory_shows_its_ready_marker():
    text = ("total 4\ndrwxr-xr-x  5 root root  160 Nov 21 11:58 .\ndrwxr-xr-x  3 root root   60 Nov 21 11:50 ..\n"
            "-rw-r--r--  1 root root    0 Nov 21 11:58 .driver-ready\ndrwxr-xr-x  4 root root   80 Nov 21 11:51 usr")
    d, ready, usr = parse_probe.parse(_probe(text, "commands/ls-mellanox.txt", "ls -la /run/mellanox/drivers/"))
    assert d.entries == (".driver-ready", "usr")
    assert (ready.path, ready.exists, ready.evidence.line, ready.node) == ("/run/mellanox/drivers/.driver-ready", True, 4, "gpu-node-07")


def test_lspci_k_gives_the_driver_bound_to_each_nvidia_device():
    from gpusleuth.parsers.host_facts import parse_lspci

    text = ("$ lspci -nnk -d 10de:\n"
            "3b:00.0 3D controller [0302]: NVIDIA Corporation GA100 [A100 PCIe 40GB] [10de:20f1] (rev a1)\n"
            "\tSubsystem: NVIDIA Corporation Device [10de:145f]\n"
            "\tKernel driver in use: nouveau\n"
            "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n"
            "00:1f.6 Ethernet controller [0200]: Intel Corporation Ethernet Connection [8086:15bc]\n"
            "\tKernel driver in use: e1000e\n")
    docs = docs_from_text(text)
    [doc] = [d for d in docs if d.command]
    assert parse_lspci.sniff(doc) >= 90
    [mods] = list(parse_lspci.parse(doc))
    assert [m.name for m in mods.modules] == ["nouveau"] and mods.modules[0].evidence.line == 4
    assert mods.loaded("nouveau") is True and mods.loaded("nvidia") is None  # a driver list proves presence only


@pytest.mark.parametrize("text, name, mode, line", [
    ("$ getenforce\nEnforcing\n", "selinux", "enforcing", 2),
    ("$ sestatus\nSELinux status:                 enabled\nSELinuxfs mount:                /sys/fs/selinux\n"
     "Current mode:                   permissive\n", "selinux", "permissive", 4),
    ("$ sudo aa-status\napparmor module is loaded.\n42 profiles are loaded.\n38 profiles are in enforce mode.\n", "apparmor", "enforcing", 2),
])
def test_security_modules(text, name, mode, line):
    from gpusleuth.parsers.host_facts import parse_security

    doc = doc_from_text(text)  # the prompt line stays in the document: the source does not split at these programs
    assert parse_security.sniff(doc) >= 90
    [m] = list(parse_security.parse(doc))
    assert (m.name, m.mode, m.evidence.line) == (name, mode, line)


def test_security_modules_reach_the_node_in_host_facts(facts_of):
    from gpusleuth.facts import HostFacts

    facts = facts_of({"getenforce.txt": "$ getenforce\nEnforcing\n"})
    [node] = facts.get(HostFacts).nodes
    assert node.security["selinux"].mode == "enforcing"


def test_device_cgroup_rules_and_what_is_not_one():
    from gpusleuth.parsers.host_facts import parse_device_cgroup

    doc = _probe("c 1:3 rwm\nc 195:* m\na *:* rwm\n", "devices.list", "cat /sys/fs/cgroup/devices/devices.list")
    assert _kind(doc) == "host.device-cgroup"
    (rules,) = parse_device_cgroup.parse(doc)
    assert [(r.kind, r.major, r.minor, r.access) for r in rules.rules] == [("c", "1", "3", "rwm"), ("c", "195", "*", "m"), ("a", "*", "*", "rwm")]
    assert rules.allows_all() and rules.rules[1].evidence.line == 2
    assert _kind(_probe("c 195:* m\nsome other line of a log\n", "log.txt")) != "host.device-cgroup"  # one rule among other lines
