"""UD012 two-driver-library-versions: a library directory with two driver versions of libnvidia-ml or libcuda."""

from failure_fixtures import cites, facts_from, run

# `ls -lah | grep libnvidia-ml` inside a container whose image ships its own NVML (sizes as -h prints them)
LISTING = """\
root@da0fd684b11a:/lib/x86_64-linux-gnu# ls -lah | grep libnvidia-ml
lrwxrwxrwx  1 root root    26 Jul 29 07:59 libnvidia-ml.so.1 -> libnvidia-ml.so.525.105.17
-rw-r--r--  1 root root  1.8M May 12  2022 libnvidia-ml.so.470.129.06
-rw-r--r--  1 root root  1.8M Jul 25 08:32 libnvidia-ml.so.525.105.17
"""
SMI = """\
$ nvidia-smi
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.129.06   Driver Version: 470.129.06   CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
"""


def test_the_image_copy_is_linked_while_the_node_runs_the_other():
    [f] = run("UD012", facts_from({"ls.txt": LISTING, "smi.txt": SMI}))
    assert f.severity.value == "error" and f.layer.value == "workload"
    assert f.facts == {"versions": ["470.129.06", "525.105.17"], "link": "525.105.17", "driver": "470.129.06"}
    assert cites(f)[:3] == ["ls.txt:2", "ls.txt:3", "ls.txt:4"]


def test_without_the_running_driver_it_still_says_two_copies():
    [f] = run("UD012", facts_from({"ls.txt": LISTING}))
    assert f.severity.value == "error" and f.facts["driver"] is None


def test_when_the_link_is_the_drivers_the_stray_copy_is_a_warning():
    [f] = run("UD012", facts_from({"ls.txt": LISTING.replace("-> libnvidia-ml.so.525.105.17", "-> libnvidia-ml.so.470.129.06"), "smi.txt": SMI}))
    assert f.severity.value == "warning"


def test_silent_with_one_version():
    one = "\n".join(ln for ln in LISTING.splitlines() if "470.129.06" not in ln) + "\n"
    assert run("UD012", facts_from({"ls.txt": one})) == []


TICKET = ("nvidia-smi inside one of our images fails with \"Failed to initialize NVML: Driver/library version mismatch\".\n"
          "In the container libnvidia-ml.so.1 points at libnvidia-ml.so.525.105.17, which comes with the image, and the host's\n"
          "libnvidia-ml.so.470.129.06 sits next to it. Other images work on the same host.\n"
          "We start it with NVIDIA_VISIBLE_DEVICES=1 and NVIDIA_DRIVER_CAPABILITIES=compute,utility.\n")


def test_a_ticket_naming_two_versions_of_the_library_is_a_stated_finding():
    [f] = run("UD012", facts_from({"words.txt": TICKET}))
    assert f.title.startswith("Stated: two versions of libnvidia-ml") and f.confidence == 0.5 and f.layer.value == "workload"
    assert cites(f)[0] == "words.txt:1" and "as at words.txt:1" in f.explanation


def test_a_ticket_naming_one_version_states_nothing_here():
    assert run("UD012", facts_from({"words.txt": "The host driver library is libnvidia-ml.so.470.129.06.\n"})) == []
