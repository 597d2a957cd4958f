"""HostFacts: per node, the host's own facts joined with the Node object and nvidia-smi; the conditions
failure classes read."""

from __future__ import annotations

import pytest

from gpusleuth.analysis.engine import ingest
from gpusleuth.errors import NotApplicable
from gpusleuth.facts import Facts, HostFacts
from gpusleuth.model.document import Document

DESCRIBE = """\
$ kubectl describe node gpu-node-07
Name:               gpu-node-07
Roles:              <none>
Labels:             nvidia.com/gpu.present=true
Annotations:        node.alpha.kubernetes.io/ttl: 0
CreationTimestamp:  Mon, 02 Sep 2024 10:12:01 +0000
Taints:             <none>
Unschedulable:      false
System Info:
  Machine ID:                 4c4c4544004b3910804bc4c04f4b4c32
  Kernel Version:             5.15.0-94-generic
  OS Image:                   Ubuntu 22.04.4 LTS
  Operating System:           linux
  Architecture:               amd64
  Container Runtime Version:  containerd://1.7.12
  Kubelet Version:            v1.29.2
"""
LSMOD = "$ lsmod\nModule                  Size  Used by\nnouveau              2433024  0\ndrm_kms_helper        311296  1 nouveau\n"
MODINFO = """\
$ modinfo nvidia
filename:       /lib/modules/5.15.0-91-generic/updates/dkms/nvidia.ko
version:        535.129.03
name:           nvidia
vermagic:       5.15.0-91-generic SMP mod_unload modversions 
"""


def test_a_one_node_paste_is_that_node_and_joins_the_node_object(facts_of):
    facts = facts_of({"describe-node.txt": DESCRIBE, "host.txt": LSMOD + "$ cat /proc/cmdline\nBOOT_IMAGE=/vmlinuz root=/dev/sda2 ro quiet\n" + MODINFO})
    (h,) = facts.get(HostFacts).nodes
    assert h.node == "gpu-node-07" and h.assumed_node
    assert h.running_kernel()[0] == "5.15.0-94-generic" and h.node_kernel_evidence.artifact == "describe-node.txt"
    assert h.loaded("nouveau") is True and h.loaded("nvidia") is False
    conds = {c.id: c for c in h.conditions()}
    assert set(conds) == {"host.nouveau-loaded", "host.module-vermagic-mismatch"}
    assert "does not blacklist it" in conds["host.nouveau-loaded"].text
    vm = conds["host.module-vermagic-mismatch"]
    assert vm.groups == {"module": "nvidia", "built": "5.15.0-91-generic", "kernel": "5.15.0-94-generic"}
    assert [e.cite() for e in vm.evidence] == ["host.txt:11", "describe-node.txt:11", "host.txt:8"]


def _doc(name, text, node, command=None, path=None):
    return Document(f"nodes/{node}/{name}", tuple(text.split("\n")), 1, command=command or (f"cat {path}" if path else None),
                    path_hint=path, meta={"node": node, "source": "probe"})


def test_bundle_records_place_each_fact_on_its_node():
    facts = Facts()
    ingest([
        _doc("commands/uname-r.txt", "5.15.0-91-generic", "gpu-a", "uname -r"),
        _doc("commands/modinfo-nvidia.txt", MODINFO.split("\n", 1)[1].rstrip(), "gpu-a", "chroot /run/nvidia/driver modinfo nvidia"),
        _doc("commands/uname-r.txt", "5.15.0-94-generic", "gpu-b", "uname -r"),
        _doc("files/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023", "gpu-b",
             path="/proc/driver/nvidia/version"),
        _doc("commands/mokutil.txt", "SecureBoot enabled", "gpu-b", "mokutil --sb-state"),
        _doc("commands/ls.txt", "-rw-r--r-- 1 root root 0 Sep 26 18:40 /run/nvidia/validations/driver-ready", "gpu-b",
             "ls -la /run/nvidia/validations/*"),
    ], facts)
    hf = facts.get(HostFacts)
    a, b = hf.for_node("gpu-a"), hf.for_node("gpu-b")
    assert not a.assumed_node and a.modinfo["nvidia"].root == "/run/nvidia/driver" and a.conditions() == []  # built for the kernel it runs
    assert b.driver.version == "535.129.03" and b.secure_boot.enabled and b.modinfo == {}
    assert b.path("/run/nvidia/validations/driver-ready").exists and b.conditions() == []  # no modinfo: nothing says it is unsigned


def test_secure_boot_with_an_unsigned_module_that_is_not_loaded(facts_of):
    text = "$ mokutil --sb-state\nSecureBoot enabled\n" + MODINFO.replace("91", "94") + "$ lsmod | grep nvidia\nnvidia_wmi_ec          12345  0\n"
    (h,) = facts_of({"host.txt": text}).get(HostFacts).nodes
    (c,) = h.conditions()
    assert c.id == "host.secure-boot-unsigned-module" and "it is not loaded" in c.text
    assert [e.cite() for e in c.evidence] == ["host.txt:2", "host.txt:4", "host.txt:8"]


def test_weak_updates_and_loaded_modules_are_no_mismatch(facts_of):
    rhel = MODINFO.replace("/lib/modules/5.15.0-91-generic/updates/dkms/", "/lib/modules/4.18.0-513.el8.x86_64/weak-updates/nvidia/")
    (h,) = facts_of({"host.txt": "$ uname -r\n4.18.0-513.el8.x86_64\n" + rhel.replace("5.15.0-91-generic", "4.18.0-477.el8.x86_64")}).get(HostFacts).nodes
    assert h.conditions() == []
    loaded = "$ uname -r\n5.15.0-94-generic\n" + MODINFO + "$ lsmod\nModule                  Size  Used by\nnvidia              56717312  2\n"
    (h,) = facts_of({"host.txt": loaded}).get(HostFacts).nodes
    assert h.conditions() == []


def test_no_host_facts_is_not_applicable(facts_of):
    with pytest.raises(NotApplicable):
        facts_of({"describe-node.txt": DESCRIBE}).get(HostFacts)
