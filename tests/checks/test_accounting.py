"""HW900 ... WL900: every error no other check explains becomes a finding on its component's layer.

Fail fixtures: one error line nobody wrote a check for, printed by a component of each layer (named by its
pod, its words or the log it is in). Pass fixtures: the same paste without the error, and errors that do not
mean a failure now (a retry that later worked, noise of healthy runs, an old error in a pod running and ready).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.checks.accounting import normalise, search_terms
from gpusleuth.model.finding import Role, Severity
from gpusleuth.sources.loose import read_directory, read_file

COVERS = ("HW900", "FW900", "KD900", "UD900", "CU900", "TK900", "RT900", "DP900", "FD900", "OP900", "SC900", "WL900")

ERROR = 'time="2025-11-21T11:51:42Z" level=error msg="frobnicator exploded, cannot continue"'
FINE = 'time="2025-11-21T11:51:42Z" level=info msg="frobnicator started"'

# (layer code, how the paste starts, the error line)
BY_LAYER = [
    ("HW900", "$ dmesg -T", "[Fri Nov 21 11:57:56 2025] nvidia-nvswitch0: NVSwitch frobnicate failed, link 3 down"),
    ("FW900", "$ kubectl logs nvidia-cc-manager-x7k2p -n gpu-operator", ERROR),
    ("KD900", "$ kubectl logs nvidia-driver-daemonset-x7k2p -n gpu-operator", ERROR),
    ("UD900", "$ kubectl logs nvidia-dcgm-x7k2p -n gpu-operator", ERROR),
    ("CU900", "$ kubectl logs nvidia-cuda-validator-x7k2p -n gpu-operator", ERROR),
    ("TK900", "$ kubectl logs nvidia-container-toolkit-daemonset-x7k2p -n gpu-operator", ERROR),
    ("RT900", "root@gpu-node-1:~# journalctl -u containerd | tail",
     'Nov 21 11:51:07 gpu-node-1 containerd[812]: time="2025-11-21T11:51:07Z" level=error msg="containerd frobnicate failed"'),
    ("DP900", "$ kubectl logs nvidia-device-plugin-daemonset-x7k2p -n gpu-operator", ERROR),
    ("FD900", "$ kubectl logs gpu-feature-discovery-x7k2p -n gpu-operator", ERROR),
    ("OP900", "$ kubectl logs gpu-operator-5f7d8c9b6-x7k2p -n gpu-operator", ERROR),
    ("SC900", "$ kubectl logs kube-scheduler-cp-1 -n kube-system",
     'E1121 11:51:07.000000       1 schedule_one.go:1004] "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."'),
    ("WL900", "$ cat train.out", "ERROR: frobnicator exploded, cannot continue"),
]


def _diagnose(tmp_path: Path, text: str, name: str = "paste.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return diagnose(read_file(path))


@pytest.mark.parametrize("code, head, line", BY_LAYER, ids=[c for c, _, _ in BY_LAYER])
def test_an_unknown_error_is_a_finding_on_its_layer(tmp_path, code, head, line):
    report = _diagnose(tmp_path, f"{head}\n{FINE}\n{line}\n")
    hits = [f for f in report.findings if f.code == code]
    assert hits, [(f.code, f.title) for f in report.findings]
    f = hits[0]
    assert f.role is Role.ROOT_CAUSE and f.severity is Severity.ERROR and f.confidence <= 0.5
    assert f.evidence[0].line == 3 and "frobnicat" in f.evidence[0].text or "Insufficient" in f.evidence[0].text
    assert report.verdict == "failing"
    assert any("is%3Aissue" in x.description or "type=issues" in x.description for x in f.fixes), "no tracker search"


@pytest.mark.parametrize("code, head, line", BY_LAYER, ids=[c for c, _, _ in BY_LAYER])
def test_no_error_no_finding(tmp_path, code, head, line):
    report = _diagnose(tmp_path, f"{head}\n{FINE}\n")
    assert not [f for f in report.findings if f.code == code]


def test_the_fatal_line_is_decisive_not_the_retry_banner_after_it(tmp_path):
    report = _diagnose(tmp_path, "\n".join([
        "$ kubectl logs nvidia-device-plugin-daemonset-x7k2p -n gpu-operator",
        'time="2025-11-21T11:51:40Z" level=error msg="frobnicator exploded: device busy"',
        'time="2025-11-21T11:51:41Z" level=fatal msg="cannot start the frobnicator: device busy"',
        'time="2025-11-21T11:51:42Z" level=error msg="failed to reach the frobnicator, retrying in 5s"',
    ]) + "\n")
    f = next(f for f in report.findings if f.code == "DP900")
    assert f.evidence[0].line == 3 and f.facts["lines"] == 3


def test_a_multi_line_message_is_cited_from_its_first_line(tmp_path):
    report = _diagnose(tmp_path, "\n".join([
        "$ kubectl logs nvidia-device-plugin-daemonset-x7k2p -n gpu-operator",
        "I0617 10:38:28.414500       1 main.go:1] Starting the frobnicator",
        "E0617 10:38:28.414571       1 factory.go:115] Frobnicator platform not detected",
        "E0617 10:38:28.414574       1 factory.go:116] If this is a GPU node, did you frobnicate it?",
        "E0617 10:38:28.414576       1 factory.go:117] You can check the frobnication guide online",
    ]) + "\n")
    f = next(f for f in report.findings if f.code == "DP900")
    assert f.evidence[0].line == 3


def test_a_retry_that_later_worked_is_listed_not_failing(tmp_path):
    report = _diagnose(tmp_path, "\n".join([
        "$ kubectl logs nvidia-device-plugin-daemonset-x7k2p -n gpu-operator",
        'time="2025-11-21T11:51:40Z" level=error msg="frobnicator not reachable, retrying in 5s"',
        'time="2025-11-21T11:51:45Z" level=info msg="Registered device plugin for \'nvidia.com/gpu\' with Kubelet"',
    ]) + "\n")
    assert report.verdict == "healthy"
    info = next(f for f in report.findings if f.code == "DP900")
    assert info.role is Role.INFO and "retried" in info.explanation


def test_an_old_error_in_a_running_ready_pod_is_listed_not_failing(tmp_path):
    (tmp_path / "pods.txt").write_text(
        "$ kubectl get pods -n gpu-operator -o wide\n"
        "NAME                                   READY   STATUS    RESTARTS   AGE   IP          NODE\n"
        "nvidia-device-plugin-daemonset-x7k2p   1/1     Running   0          3d    10.0.0.5    gpu-node-1\n")
    (tmp_path / "plugin.log").write_text(
        "$ kubectl logs nvidia-device-plugin-daemonset-x7k2p -n gpu-operator\n"
        'time="2025-11-21T11:51:40Z" level=error msg="frobnicator exploded"\n'
        + "".join(f'time="2025-11-21T11:52:{i:02d}Z" level=info msg="tick {i}"\n' for i in range(10)))
    report = diagnose(read_directory(tmp_path))
    assert report.verdict == "healthy", report.headline
    info = next(f for f in report.findings if f.code == "DP900")
    assert info.role is Role.INFO and "running and ready" in info.explanation


def test_repeats_are_one_finding_and_the_search_has_no_variable_parts(tmp_path):
    lines = [f'time="2025-11-21T11:51:{i:02d}Z" level=error msg="frobnicate GPU-{i:08x}-aaaa-bbbb-cccc-dddddddddddd on 0000:18:00.0 failed: code {i}"'
             for i in range(20)]
    report = _diagnose(tmp_path, "$ kubectl logs nvidia-dcgm-x7k2p -n gpu-operator\n" + "\n".join(lines) + "\n")
    found = [f for f in report.findings if f.code == "UD900"]
    assert len(found) == 1 and found[0].facts["lines"] == 20 and found[0].facts["distinct"] == 1
    assert found[0].facts["search"] == "failed: code" or "GPU-" not in found[0].facts["search"]


def test_a_specific_cause_on_the_node_outranks_the_guess(tmp_path):
    report = _diagnose(tmp_path, "\n".join([
        "$ dmesg",
        "[  101.234567] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        "[  101.300000] nvidia-nvswitch0: NVSwitch frobnicate failed, link 3 down",
    ]) + "\n")
    assert report.root_causes[0].code == "HW001" and report.verdict == "broken"


def test_normalise_and_search_terms():
    a = normalise('failed to open "/dev/nvidia3": device 0000:3b:00.0 busy after 17 tries (pod nvidia-dcgm-x7k2p)')
    b = normalise('failed to open "/dev/nvidia0": device 0000:18:00.0 busy after 2 tries (pod nvidia-dcgm-abcde)')
    assert a == b
    assert search_terms("E0101 main.go:12] failed to open frobnicator device: permission denied") == "failed to open frobnicator device: permission denied"


@pytest.mark.parametrize("name", ["peermem-race", "containerd-wrong-instance", "device-plugin-unregistered"])
def test_the_healthy_half_of_an_example_cluster_stays_quiet(name):
    """Running, ready operands with old errors in their logs are listed at info, never as failures; the
    example's real cause stays first."""
    from gpusleuth.sources import open_source

    report = diagnose(open_source(f"example:{name}"))
    guesses = [f for f in report.findings if f.code.endswith("900") and f.severity is not Severity.INFO]
    assert all(f.role is not Role.ROOT_CAUSE for f in guesses), [(f.code, f.title) for f in guesses]
    assert not report.root_causes[0].code.endswith("900")


def test_a_file_name_is_the_last_hint_of_who_printed_a_line(tmp_path):
    report = _diagnose(tmp_path, "Starting the frobnicator\nERROR: frobnicator exploded, cannot continue\n", name="toolkit.log")
    f = next(f for f in report.findings if f.code == "TK900")
    assert f.facts["attributed_by"] == "file" and "file's name" in f.explanation
    words = _diagnose(tmp_path, "nvidia-container-cli: mount error: frobnicate failed\n", name="driver.log")
    assert next(f for f in words.findings if f.code.endswith("900")).facts["attributed_by"] != "file"  # the words come first


def test_the_catalogue_says_what_the_code_was_doing_and_how_to_tell_the_causes_apart(tmp_path):
    report = _diagnose(tmp_path, "root@gpu-1:~# modprobe nvidia\nmodprobe: ERROR: could not insert 'nvidia': Required key not available\n")
    f = next(f for f in report.findings if f.code == "KD900")
    assert f.facts["catalogue"] == "kernel/required-key" and f.confidence == 0.4
    assert "Secure Boot" in f.explanation
    assert "mokutil --sb-state" in f.fixes[0].commands


def test_running_controllers_are_no_sign_that_a_gpu_works(tmp_path):
    """The operator's and NFD's own pods run whether or not any GPU can be used: alone they earn no HEALTHY."""
    pods = ("$ kubectl get pods -n nvidia-network-operator\n"
            "NAME                                                              READY   STATUS    RESTARTS   AGE\n"
            "network-operator-6597755967-b9rtk                                 1/1     Running   0          7m51s\n"
            "network-operator-node-feature-discovery-worker-5sdfw              1/1     Running   0          7m51s\n")
    assert _diagnose(tmp_path, pods).verdict == "no-verdict"
    plugin = pods + "nvidia-device-plugin-daemonset-x7k2p                              1/1     Running   0          7m51s\n"
    assert _diagnose(tmp_path, plugin).verdict == "healthy"


def test_the_other_errors_of_a_crashing_pod_follow_from_its_finding_and_say_so():
    """The plugin's lines before its decisive one are part of the crash OP001 explains: listed at info as following
    from that finding, not as lines that mean no failure; an old error of a ready pod keeps the other wording."""
    from gpusleuth.sources import open_source

    report = diagnose(open_source("example:device-plugin-unregistered"))
    by = {f.code: f for f in report.findings if f.code.endswith("900")}
    plugin, driver = by["DP900"], by["KD900"]
    assert plugin.role is Role.INFO and "follow from another finding: OP001 is about pod nvidia-device-plugin-daemonset-8qx2n" in plugin.title
    assert "part of that failure" in plugin.explanation and "not failing now" not in plugin.explanation
    assert "do not mean a failure now" in driver.title and "running and ready" in driver.title


def test_a_quoted_message_belongs_to_whom_the_sentences_before_it_name(tmp_path):
    """A ticket quotes the error a pod printed: the sentences up to the quote name the pod (or program) whose it is,
    so the unexplained failure is that component's and on its layer, not 'who printed it is not known'."""
    (tmp_path / "ticket.txt").write_text(
        "Installing the vGPU manager with GPU Operator v24.3.0 on Ubuntu 22.04 with a Tesla T4. The\n"
        "nvidia-vgpu-manager-daemonset pod fails because it can't write the firmware path to\n"
        "/sys/module/firmware_class/parameters/path: \"Read-only file system\". How do I get past this?\n")
    report = diagnose(read_directory(tmp_path))
    (f,) = [f for f in report.findings if f.code.endswith("900") and f.severity.weight >= Severity.ERROR.weight]
    assert f.component == "nvidia-vgpu-manager-daemonset" and f.layer.value == "kernel-driver", (f.component, f.layer)
    assert (f.evidence[0].artifact, f.evidence[0].line) == ("ticket.txt", 3)


def test_a_user_pod_the_kubelet_could_not_allocate_devices_for_is_a_device_plugin_matter(tmp_path):
    """UnexpectedAdmissionError: the kubelet's device manager could not allocate the pod's devices (kubernetes#97131)."""
    report = _diagnose(tmp_path, "bash$ kubectl get pods\nNAME          READY   STATUS                     RESTARTS   AGE\n"
                                 "rojin-2q6ld   0/1     UnexpectedAdmissionError   0          4s\n")
    [f] = report.root_causes
    assert f.code == "DP900" and f.layer.value == "device-plugin" and "rojin-2q6ld" in f.title
