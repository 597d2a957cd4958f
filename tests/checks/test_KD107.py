"""KD107 open-kernel-module-on-unsupported-gpu: open nvidia.ko on a GPU without GSP."""

from failure_fixtures import cites, facts_from, run

JOURNAL = """\
$ journalctl -k -b | grep -A6 NVRM
Aug 14 09:12:01 render-01 kernel: NVRM: The NVIDIA GPU 0000:09:00.0 (PCI ID: 10de:1d01)
                                  NVRM: installed in this system is not supported by open
                                  NVRM: nvidia.ko because it does not include the required GPU
                                  NVRM: System Processor (GSP).
Aug 14 09:12:01 render-01 kernel: nvidia 0000:09:00.0: probe with driver nvidia failed with error -1
Aug 14 09:12:01 render-01 kernel: NVRM: The NVIDIA probe routine failed for 1 device(s).
"""


def test_open_module_on_pascal_switches_to_proprietary():
    [f] = run("KD107", facts_from({"journal.txt": JOURNAL}))
    assert f.node == "render-01" and cites(f) == ["journal.txt:2"]
    assert '"kernelModuleType":"proprietary"' in f.fixes[0].commands[0]


def test_silent_when_the_gpu_is_probed():
    ok = "$ dmesg\n[    9.1] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build  (dvs-builder@U16-I3-B03-4-3)\n"
    assert run("KD107", facts_from({"dmesg.txt": ok})) == []
