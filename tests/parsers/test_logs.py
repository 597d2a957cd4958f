"""The log parser on the shapes real GPU Operator / Network Operator incidents produce.

Samples are modelled on must-gather output and on lines quoted in NVIDIA/gpu-operator,
Mellanox/network-operator and NVIDIA/k8s-device-plugin issue threads.
"""

import re
from datetime import datetime, timezone

import pytest

from gpusleuth.analysis.engine import sniff as best_parser
from gpusleuth.parsers.base import LIKELY, WEAK
from gpusleuth.parsers.logs import parse_log, sniff
from tests.conftest import doc_from_text, docs_from_text

UTC = timezone.utc
POD = "nvidia-driver-daemonset-418.94.202510230424-0-564xm"

DRIVER_POD_LOG = f"""\
[pod/{POD}/k8s-driver-manager] time=2025-11-21T11:51:06Z level=info msg=Getting current value of the "nvidia.com/gpu.deploy.operator-validator" node label
[pod/{POD}/k8s-driver-manager] time=2025-11-21T11:51:06Z level=info msg=Shutting down all GPU clients on the current node by disabling their component-specific nodeSelector labels
[pod/{POD}/k8s-driver-manager] time=2025-11-21T11:51:41Z level=info msg=Mellanox device found at 0000:01:00.0
[pod/{POD}/k8s-driver-manager] time=2025-11-21T11:51:41Z level=info msg=GPUDirectRDMA is enabled, validating MOFED driver installation
[pod/{POD}/k8s-driver-manager] time=2025-11-21T11:51:41Z level=info msg=Waiting for MOFED to be installed
[pod/{POD}/nvidia-driver-ctr] + modprobe nvidia NVreg_CoherentGPUMemoryMode=driver
[pod/{POD}/nvidia-driver-ctr] + modprobe nvidia-uvm
[pod/{POD}/nvidia-driver-ctr] + modprobe nvidia-modeset
[pod/{POD}/nvidia-driver-ctr] + set +o xtrace -o nounset
[pod/{POD}/nvidia-driver-ctr] Mellanox device found at 0000:01:00.0
[pod/{POD}/nvidia-driver-ctr] Loading NVIDIA Peer Memory kernel module...
[pod/{POD}/nvidia-driver-ctr] + modprobe -a nvidia-peermem
[pod/{POD}/nvidia-driver-ctr] modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument
[pod/{POD}/nvidia-driver-ctr] WARNING: The nvidia-drm module will not be installed. As a result, DRM-KMS will not function with this
[pod/{POD}/nvidia-driver-ctr]          installation of the NVIDIA driver.
[pod/{POD}/nvidia-driver-ctr] Fri Nov 21 11:56:05 UTC 2025
"""

MOFED_POD_LOG = """\
[pod/mofed-rhcos4.18-554bdbd7cf-ds-x7k2p/openshift-driver-toolkit-ctr] [21-Nov-25_11:51:13] DTK driver build script start
[pod/mofed-rhcos4.18-554bdbd7cf-ds-x7k2p/openshift-driver-toolkit-ctr] Build kernel-mft 4.33.0 RPM
[pod/mofed-rhcos4.18-554bdbd7cf-ds-x7k2p/openshift-driver-toolkit-ctr] [21-Nov-25_11:51:23] Starting compilation of driver version 25.07-0.9.7.0
[pod/mofed-rhcos4.18-554bdbd7cf-ds-x7k2p/openshift-driver-toolkit-ctr] [21-Nov-25_11:53:43] DTK driver build script end
[pod/mofed-rhcos4.18-554bdbd7cf-ds-x7k2p/mofed-container] [21-Nov-25_11:51:06] NVIDIA driver container exec start
[pod/mofed-rhcos4.18-554bdbd7cf-ds-x7k2p/mofed-container] [21-Nov-25_11:51:06] Unsetting driver ready state[21-Nov-25_11:51:06] Query VFs info from [4] devices
[pod/mofed-rhcos4.18-554bdbd7cf-ds-x7k2p/mofed-container] Loading HCA driver and Access Layer:[60G[  OK  ]
[pod/mofed-rhcos4.18-554bdbd7cf-ds-x7k2p/mofed-container] [21-Nov-25_11:58:39] Setting driver ready state
"""


def lines_of(text, artifact="paste.log"):
    return parse_log(doc_from_text(text, artifact)).lines


def test_must_gather_prefix_gives_each_line_its_container():
    doc = doc_from_text(DRIVER_POD_LOG, f"gpu_operand_pod_{POD}.previous.log")
    log = parse_log(doc)
    assert log.pod == POD and log.previous and log.container is None and log.kind == "container"
    by_ctr = {ln.container for ln in log.lines}
    assert by_ctr == {"k8s-driver-manager", "nvidia-driver-ctr"}
    wait = next(ln for ln in log.lines if "Waiting for MOFED" in ln.message)
    assert wait.time == datetime(2025, 11, 21, 11, 51, 41, tzinfo=UTC) and wait.time_format == "logrus" and wait.level == "info"
    assert wait.message == "Waiting for MOFED to be installed" and wait.line == 5 and wait.pod == POD


def test_set_x_traces_and_errors_keep_text_and_line_numbers():
    lines = lines_of(DRIVER_POD_LOG)
    trace = next(ln for ln in lines if ln.message == "+ modprobe -a nvidia-peermem")
    assert trace.time is None and trace.line == 12
    fail = next(ln for ln in lines if "could not insert" in ln.message)
    assert fail.level == "error" and fail.line == 13 and fail.evidence().cite() == "paste.log:13"


def test_installer_continuation_lines_fold_into_their_paragraph():
    lines = lines_of(DRIVER_POD_LOG)
    warn = next(ln for ln in lines if ln.message.startswith("WARNING: The nvidia-drm"))
    assert warn.message.endswith("will not function with this installation of the NVIDIA driver.")
    assert warn.level == "warning" and warn.line == 14
    assert not any(ln.line == 15 for ln in lines)


def test_date_lines_printed_by_scripts_are_zone_aware_times():
    date = lines_of(DRIVER_POD_LOG)[-1]
    assert date.time_format == "date" and date.time == datetime(2025, 11, 21, 11, 56, 5, tzinfo=UTC)


def test_mofed_entrypoint_lines_are_zone_less_and_glued_messages_stay_whole():
    log = parse_log(doc_from_text(MOFED_POD_LOG, "network_operand_pod_mofed-rhcos4.18-554bdbd7cf-ds-x7k2p.log"))
    assert log.pod == "mofed-rhcos4.18-554bdbd7cf-ds-x7k2p" and not log.previous
    ready = next(ln for ln in log.lines if ln.message == "Setting driver ready state")
    assert ready.time == datetime(2025, 11, 21, 11, 58, 39) and ready.time.tzinfo is None and ready.time_format == "mofed"
    unset = next(ln for ln in log.lines if ln.message.startswith("Unsetting driver ready state"))
    assert "Query VFs info" in unset.message
    hca = next(ln for ln in log.lines if ln.message.startswith("Loading HCA driver"))
    assert hca.time is None and hca.container == "mofed-container"


def test_kubectl_logs_command_names_pod_namespace_container_previous():
    text = """root@bastion:~# kubectl logs -n nvidia-gpu-operator nvidia-device-plugin-daemonset-v46gq -c nvidia-device-plugin --previous --timestamps
2025-11-21T11:59:02.881112000Z I1121 11:59:02.881112       1 main.go:279] Starting FS watcher.
2025-11-21T11:59:03.011552000Z I1121 11:59:03.011552       1 server.go:146] Registered device plugin for 'nvidia.com/gpu' with Kubelet
2025-11-21T11:59:03.500000000Z E1121 11:59:03.500000       1 main.go:132] error starting plugins: failed to initialize NVML
"""
    docs = docs_from_text(text, "paste.md")
    assert len(docs) == 1 and docs[0].command.startswith("kubectl logs")
    assert sniff(docs[0]) > LIKELY
    log = parse_log(docs[0])
    assert (log.pod, log.namespace, log.container, log.previous) == (
        "nvidia-device-plugin-daemonset-v46gq", "nvidia-gpu-operator", "nvidia-device-plugin", True)
    reg = log.lines[1]
    # the outer --timestamps stamp is complete (year, zone); the inner klog header only gives the level
    assert reg.time == datetime(2025, 11, 21, 11, 59, 3, 11552, UTC) and reg.time_format == "rfc3339"
    assert reg.message == "Registered device plugin for 'nvidia.com/gpu' with Kubelet" and reg.line == 3
    assert log.lines[2].level == "error"


def test_defaulted_container_line_names_the_container():
    text = """Defaulted container "mofed-container" out of: mofed-container, openshift-driver-toolkit-ctr, network-operator-init-container (init)
[23-Oct-25_15:28:32] NVIDIA driver container exec start
ID="rhcos"
[23-Oct-25_15:28:32] Container full version: 25.07-0.9.7.0-0
"""
    log = parse_log(doc_from_text(text, "mofed.log"))
    assert log.container == "mofed-container"
    assert all(ln.container == "mofed-container" for ln in log.lines)


def test_cri_log_file_joins_partial_lines():
    text = """2025-11-21T11:58:40.100000000Z stdout F time="2025-11-21T11:58:40Z" level=info msg="Loading config from /runtime/config-dir/config.toml"
2025-11-21T11:58:41.000000000+00:00 stderr P time="2025-11-21T11:58:41Z" level=error msg="error running nvidia-toolkit: unable to setup runtime: unable to restart
2025-11-21T11:58:41.000000100+00:00 stderr F  containerd: exit status 1"
2025-11-21T11:58:42.000000000Z stdout F Restarting containerd
"""
    artifact = "var/log/pods/gpu-operator_nvidia-container-toolkit-daemonset-sxfkr_5b7c1e3a-0f7e-4e8e-9f3a-2b1c4d5e6f70/nvidia-container-toolkit-ctr/0.log"
    log = parse_log(doc_from_text(text, artifact))
    assert (log.pod, log.namespace, log.container) == ("nvidia-container-toolkit-daemonset-sxfkr", "gpu-operator", "nvidia-container-toolkit-ctr")
    assert [ln.line for ln in log.lines] == [1, 2, 4]
    joined = log.lines[1]
    assert joined.level == "error" and "unable to restart containerd: exit status 1" in joined.message
    assert joined.time == datetime(2025, 11, 21, 11, 58, 41, tzinfo=UTC) and joined.time_format == "cri"
    assert log.lines[0].message == "Loading config from /runtime/config-dir/config.toml"


def test_logrus_quoted_escaped_fields_and_terminal_form():
    text = r"""time="2025-11-21T11:58:40Z" level=warning msg="failed to validate:\n \"driver\" not ready" error="exit status 1"
ERRO[0003] failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND
INFO[0000] Loading config from /etc/nvidia-container-runtime/config.toml
"""
    lines = lines_of(text)
    assert lines[0].message == 'failed to validate:  "driver" not ready error="exit status 1"' and lines[0].level == "warning"
    assert lines[1].time is None and lines[1].elapsed == 3.0 and lines[1].level == "error" and lines[1].time_format == "logrus-tty"
    assert lines[1].message == "failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND"


def test_json_lines_with_epoch_and_iso():
    text = """{"level":"info","ts":1763725866.123456,"logger":"controllers.ClusterPolicy","msg":"Reconciling ClusterPolicy","Request.Name":"gpu-cluster-policy"}
{"level":"error","ts":"2025-11-21T11:56:05.123Z","logger":"controllers.ClusterPolicy","msg":"Failed to apply transformation","error":"nvidia-driver-daemonset not ready"}
"""
    lines = lines_of(text)
    assert lines[0].time == datetime(2025, 11, 21, 11, 51, 6, 123456, UTC) and lines[0].message == "Reconciling ClusterPolicy"
    assert lines[1].level == "error" and lines[1].message == "Failed to apply transformation error=nvidia-driver-daemonset not ready"


XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\): (?P<xid>\d+)"
    r"(?:, pid=(?P<pid>'?[^,]*?'?))?(?:, name=(?P<name>[^,]*))?, (?P<msg>.*)$"
)


@pytest.mark.parametrize(
    "text, fid, elapsed, node",
    [
        ("[  101.234567] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
         "[  101.300000] NVRM: GPU 0000:18:00.0: GPU has fallen off the bus.\n", "dmesg", 101.234567, None),
        ("[Tue Sep  8 04:12:33 2020] NVRM: Xid (PCI:0000:3b:00.0): 48, pid=1021, name=python, An uncorrectable double bit error\n"
         "[Tue Sep  8 04:12:34 2020] NVRM: GPU at PCI:0000:3b:00: GPU-5a1f...\n", "dmesg-T", None, None),
        ("2025-11-21T11:57:55+0000 gpu-node-1 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
         "2025-11-21T11:57:56+0000 gpu-node-1 kernel: mlx5_core 0000:01:00.0: firmware version: 28.39.1002\n", "journal", None, "gpu-node-1"),
        ("Nov 21 11:57:55 gpu-node-1 kernel: [  101.234567] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
         "Nov 21 11:57:56 gpu-node-1 kernel: [  102.000000] mlx5_core 0000:01:00.0: firmware version: 28.39.1002\n", "syslog", 101.234567, "gpu-node-1"),
    ],
)
def test_kernel_logs_keep_the_raw_message_for_the_xid_pattern(text, fid, elapsed, node):
    log = parse_log(doc_from_text(text, "node/dmesg.txt"))
    assert log.kind == "kernel" and log.node == node
    first = log.lines[0]
    assert first.time_format == fid and first.elapsed == elapsed
    m = XID.search(first.message)
    assert m and m.group("xid") in ("79", "48")


def test_journal_of_services_is_a_journal_not_kernel():
    text = """Nov 21 11:58:40 gpu-node-1 containerd[2211]: time="2025-11-21T11:58:40.123456Z" level=info msg="Start cri plugin with config {...}"
Nov 21 11:58:41 gpu-node-1 systemd[1]: Stopping containerd container runtime...
Nov 21 11:58:41 gpu-node-1 kernel: mlx5_core 0000:01:00.0: E-Switch: Total vports 2
"""
    log = parse_log(doc_from_text(text, "journal.txt"))
    assert log.kind == "journal" and log.node == "gpu-node-1"
    assert log.lines[0].time == datetime(2000, 11, 21, 11, 58, 40)  # year and zone are the timeline's to infer


def test_go_log_package_lines():
    text = """2021/02/26 07:03:48 Loading NVML
2021/02/26 07:03:48 Failed to initialize NVML: could not load NVML library.
2021/02/26 07:03:48 If this is a GPU node, did you set the docker default runtime to `nvidia`?
"""
    lines = lines_of(text)
    assert lines[1].time == datetime(2021, 2, 26, 7, 3, 48) and lines[1].time_format == "go-log"
    assert lines[1].message == "Failed to initialize NVML: could not load NVML library."


def test_malformed_stamps_keep_the_line_and_drop_only_the_time():
    text = """[21-Nov-25_11:51:13] DTK driver build script start
[31-Feb-25_11:51:14] Starting compilation of driver version 25.07-0.9.7.0
I1341 11:51:06.123456       1 main.go:154] month thirteen
\x00\x01garbage \ufffd\ufffd
[21-Nov-25_11:53:43] DTK driver build script end
"""
    lines = lines_of(text)
    assert [ln.line for ln in lines] == [1, 2, 3, 4, 5]
    assert lines[1].time is None and lines[1].message.startswith("Starting compilation")
    assert lines[2].time is None and lines[4].time == datetime(2025, 11, 21, 11, 53, 43)


def test_one_container_of_a_pod_file_stays_in_its_own_stream():
    log = parse_log(doc_from_text(MOFED_POD_LOG + DRIVER_POD_LOG, "mixed.log"))
    assert log.pod is None  # two pods in one file: per-line only
    assert {ln.pod for ln in log.lines} == {POD, "mofed-rhcos4.18-554bdbd7cf-ds-x7k2p"}


def test_continuation_does_not_cross_containers_or_blank_lines():
    text = f"""[pod/{POD}/nvidia-driver-ctr] ERROR: Unable to load the kernel module 'nvidia.ko'.
[pod/{POD}/nvidia-peermem-ctr]     indented line of another container

    indented after a blank line
"""
    lines = lines_of(text)
    assert len(lines) == 3


def test_a_quote_that_quotes_names_is_read_whole():
    """A reporter quotes a message that itself quotes names: the flat reading paired the first two marks."""
    from gpusleuth.parsers.logs import parse_text

    text = ('kubectl refuses it: "The Job "multi-gpu-test-0" is invalid: spec.template.spec.containers[0].resources.requests:\n'
            'Invalid value: "1": must be equal to nvidia.com/gpu limit". Kubernetes 1.15.2.\n')
    msgs = [ln.message for ln in parse_text(doc_from_text(text, "words.txt")).lines]
    assert ('The Job "multi-gpu-test-0" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "1": '
            "must be equal to nvidia.com/gpu limit") in msgs
    plain = [ln.message for ln in parse_text(doc_from_text('it fails with "could not load NVML library" and "exit status 1" here\n', "w.txt")).lines]
    assert plain.count("could not load NVML library") == 1  # a flat quote is read once, as before


def test_a_bare_stamp_takes_the_line_below_as_its_message():
    """logrus prints `ERRO[0003]` alone when the message starts with a newline: the message is the next line."""
    text = ("ERRO[0003]\nThe following GPUs could not be reset:\n  GPU 00000000:01:00.0: In use by another client\n"
            "FATA[0008] Error applying MIG configuration with hooks: error resetting all GPUs: exit status 255\n")
    head, gpu, fatal = lines_of(text)
    assert (head.line, head.level, head.message) == (1, "error", "The following GPUs could not be reset:")
    assert head.raw == "ERRO[0003] The following GPUs could not be reset:" and head.elapsed == 3.0
    assert gpu.line == 3 and fatal.message.startswith("Error applying MIG configuration")


def test_a_stamped_line_with_a_message_does_not_take_an_unindented_line_below():
    head, nxt = lines_of("ERRO[0003] could not reset\nThe following GPUs could not be reset:\n")
    assert head.message == "could not reset" and nxt.line == 2


@pytest.mark.parametrize(
    "text, artifact",
    [
        ("NAME                                                  READY   STATUS             RESTARTS        AGE\n"
         f"{POD}   1/4     CrashLoopBackOff   64 (4m7s ago)   3h28m\n"
         "nvidia-container-toolkit-daemonset-sxfkr              0/1     Init:0/1           0               3h28m\n", "pods.txt"),
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  creationTimestamp: \"2025-11-21T11:51:02Z\"\n  name: x\n", "pod.yaml"),
        ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "nvidia"\n', "config.toml"),
        ("Name:         nvidia-driver-daemonset-x\nNamespace:    nvidia-gpu-operator\nStart Time:   Fri, 21 Nov 2025 11:51:02 -0500\n", "describe.txt"),
        ("LAST SEEN   TYPE      REASON    OBJECT        MESSAGE\n23m         Warning   BackOff   pod/nvidia-driver-daemonset-x   Back-off restarting failed container\n", "events.txt"),
    ],
)
def test_other_artifacts_are_not_claimed_as_logs(text, artifact):
    doc = doc_from_text(text, artifact)
    _score, chosen = best_parser(doc)
    assert sniff(doc) <= WEAK and (chosen is None or chosen.kind != "logs")


def test_sniff_levels():
    assert sniff(doc_from_text(MOFED_POD_LOG, "x.txt")) > LIKELY
    klog = "I1121 11:59:02.881112       1 main.go:279] Starting FS watcher.\nI1121 11:59:02.881390       1 main.go:287] Starting OS watcher.\n"
    assert sniff(doc_from_text(klog, "x.txt")) == LIKELY
    free = "Verifying archive integrity... OK\nUncompressing NVIDIA Accelerated Graphics Driver for Linux-aarch64 580.95.05\n"
    assert sniff(doc_from_text(free, "nvidia-driver-ctr.log")) == WEAK
    assert sniff(doc_from_text(free, "notes.md")) < WEAK
    score, chosen = best_parser(doc_from_text(MOFED_POD_LOG, "x.txt"))
    assert chosen.kind == "logs"


def test_huge_lines_and_empty_documents_do_not_break_parsing():
    long = "[21-Nov-25_11:51:13] " + "x" * 16000
    lines = lines_of(long + "\n" + "    " + "y" * 5000 + "\n")
    assert lines[0].time == datetime(2025, 11, 21, 11, 51, 13)


def test_free_text_with_a_known_signature_is_a_weak_log():
    text = "some notes from the on-call\nmodprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument\nthat was all\n"
    assert sniff(doc_from_text(text, "notes.md")) == WEAK
    assert sniff(doc_from_text("some notes from the on-call\nnothing known here\n", "notes.md")) < WEAK


def test_a_bundle_record_names_the_node_of_its_logs():
    from gpusleuth.model.document import Document

    dmesg = Document("nodes/gpu-node-07/commands/dmesg-nvidia.txt", ("[  101.230000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03",),
                     command="dmesg | grep -E 'NVRM|Xid'", meta={"source": "probe", "node": "gpu-node-07"})
    log = parse_log(dmesg)
    assert (log.kind, log.node) == ("kernel", "gpu-node-07")
    ctr = Document("namespaces/gpu-operator/logs/nvidia-driver-daemonset-x/nvidia-driver-ctr.log",
                   ("2025-09-26T18:40:01.000000000Z + modprobe nvidia",), command="kubectl logs -n gpu-operator nvidia-driver-daemonset-x -c nvidia-driver-ctr",
                   meta={"kind": "container-log", "node": "gpu-node-07"})
    assert parse_log(ctr).node == "gpu-node-07"
    journal = "Sep 26 18:40:01 ip-10-0-0-7 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus."
    assert parse_log(Document("j.log", (journal,), meta={"node": "gpu-node-07"})).node == "gpu-node-07"  # the record wins over the host name
    assert parse_log(Document("j.log", (journal,))).node == "ip-10-0-0-7"


WRAPPED_NVRM = """\
[  124.562051] nvidia-nvlink: Nvlink Core is being initialized, major device number 241
[  124.562483] NVRM: This can occur when a driver such as: 
               NVRM: nouveau, rivafb, nvidiafb or rivatv 
               NVRM: was loaded and obtained ownership of the NVIDIA device(s).
[  124.562484] NVRM: Try unloading the conflicting kernel module (and/or
               NVRM: reconfigure your kernel without the conflicting
               NVRM: driver(s)), then try loading the NVIDIA kernel module
               NVRM: again.
[  124.562657] nvidia-nvlink: Unregistered the Nvlink Core,
               nvidia-nvlink: major device number 241
               NVRM: is another subsystem's prefix and stays
"""


def test_a_wrapped_kernel_message_drops_the_repeated_subsystem_prefix():
    lines = lines_of(WRAPPED_NVRM)
    by_line = {ln.line: ln for ln in lines}
    assert sorted(by_line) == [1, 2, 5, 9]  # folded lines keep the first line's number
    assert by_line[2].message == ("NVRM: This can occur when a driver such as: nouveau, rivafb, nvidiafb or rivatv "
                                  "was loaded and obtained ownership of the NVIDIA device(s).")
    assert by_line[5].message == ("NVRM: Try unloading the conflicting kernel module (and/or reconfigure your kernel without the "
                                  "conflicting driver(s)), then try loading the NVIDIA kernel module again.")
    assert by_line[9].message == ("nvidia-nvlink: Unregistered the Nvlink Core, major device number 241 "
                                  "NVRM: is another subsystem's prefix and stays")
    assert by_line[2].raw == "[  124.562483] NVRM: This can occur when a driver such as:"  # the line as read, unfolded (a paste's trailing blanks dropped)


INSTALLER_QUOTING_DMESG = """\
Installing NVIDIA driver kernel modules...
Kernel messages:
[  118.046271] IPVS: ftp: loaded support on port[0] = 21
[  124.562051] nvidia-nvlink: Nvlink Core is being initialized, major device number 241
[  124.562482] NVRM: The NVIDIA probe routine was not called for 1 device(s).
[  124.562484] NVRM: No NVIDIA devices probed.
[  124.562657] nvidia-nvlink: Unregistered the Nvlink Core, major device number 241
Kernel module load error: No such device
"""


@pytest.mark.parametrize("artifact, command, pod", [
    ("driver.log", "kubectl logs pod/nvidia-driver-daemonset-jdr89 -n gpu-operator-resources", "nvidia-driver-daemonset-jdr89"),
    ("driver.log", "oc logs ds/nvidia-driver-daemonset -n nvidia-gpu-operator", None),
    ("must-gather/gpu_operand_pod_nvidia-driver-daemonset-jdr89.log", None, "nvidia-driver-daemonset-jdr89"),
])
def test_a_pods_log_that_quotes_kernel_lines_stays_a_container_log(artifact, command, pod):
    from gpusleuth.model.document import Document

    log = parse_log(Document(artifact, tuple(INSTALLER_QUOTING_DMESG.splitlines()), command=command))
    assert log.kind == "container" and log.pod == pod
    assert sum(ln.time_format == "dmesg" for ln in log.lines) == 5  # the quoted lines still carry their uptime


def test_must_gather_prefixed_kernel_lines_are_the_pods_log():
    text = "".join(f"[pod/{POD}/nvidia-driver-ctr] {ln}\n" for ln in INSTALLER_QUOTING_DMESG.splitlines())
    assert parse_log(doc_from_text(text, "paste.log")).kind == "container"


def test_the_same_lines_without_a_pod_are_a_kernel_log():
    assert parse_log(doc_from_text(INSTALLER_QUOTING_DMESG, "paste.log")).kind == "kernel"


def test_a_quote_a_ticket_wraps_over_two_lines_is_read_whole():
    """Prose quotes the machine line it saw; a ticket's paragraph is wrapped, so the quote can go on over the next
    line. The quoted message is a line of its own for error levels, citing the line the quote opens on."""
    from gpusleuth.parsers.logs import parse_text

    text = ("On the host nvidia-smi works, but in the container the toolkit debug log shows \"could not start\n"
            "/sbin/ldconfig: process execution failed: no such file or directory\" right after it executes ldconfig.\n"
            "\n"
            "It says \"this quote never closes and the paragraph ends here\n")
    log = parse_text(doc_from_text(text, "ticket.txt"))
    quoted = [ln for ln in log.lines if ln.message.startswith("could not start")]
    assert [(ln.line, ln.message) for ln in quoted] == [(1, "could not start /sbin/ldconfig: process execution failed: no such file or directory")]
    assert not [ln for ln in log.lines if ln.message.startswith("this quote never closes")]
    assert [ln.line for ln in log.lines if ln not in quoted] == [1, 2, 4]  # every line of the ticket, in order


def test_a_kubectl_command_other_than_logs_gives_its_namespace_and_nothing_else():
    from gpusleuth.parsers.logs import _hints_of_command

    assert _hints_of_command("kubectl create -f gpu-job.yaml -n ml-team") == {"namespace": "ml-team"}
    assert _hints_of_command("kubectl --namespace=ml apply -f x.yaml") == {"namespace": "ml"}
    assert _hints_of_command("kubectl exec trainer-0 -- nvidia-smi -n 3") == {}  # after `--`: the remote command's flags
    assert _hints_of_command("kubectl get pods -A") == {}
