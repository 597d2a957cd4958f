"""The merged timeline on a seed-001/002-shaped incident, and its clock inferences.

The fixture (tests/fixtures/peermem_race) is a must-gather's two operand pod logs (GPU driver pod with
k8s-driver-manager, openshift-driver-toolkit-ctr, nvidia-driver-ctr, nvidia-peermem-ctr; MOFED pod with its
DTK side-car and mofed-container), the node's kernel journal and the `date` printed when it was captured.
"""

import random
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from gpusleuth.analysis.engine import ingest
from gpusleuth.analysis.ordering import Ordering
from gpusleuth.facts import Facts, Timeline
from gpusleuth.facts.timeline import when
from gpusleuth.model.evidence import Evidence
from gpusleuth.model.k8s import ContainerStatus, Event, Pod
from gpusleuth.model.logs import ContainerLog, LogLine
from tests.conftest import docs_from_text

UTC = timezone.utc
FIXTURE = Path(__file__).parent.parent / "fixtures" / "peermem_race"
def facts_with(*objs) -> Facts:
    """Facts holding these model objects, as parsers would have produced them."""
    facts = Facts("test")
    for o in objs:
        facts.add(o)
    return facts


DRIVER_LOG = "gpu_operand_pod_nvidia-driver-daemonset-418.94.202510230424-0-564xm.log"
MOFED_LOG = "network_operand_pod_mofed-rhcos4.18-554bdbd7cf-ds-x7k2p.log"


def fixture_files() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(FIXTURE.iterdir())}


def facts_from(files: dict[str, str], order: list[str] | None = None) -> Facts:
    facts = Facts("test")
    docs = []
    for name in order or sorted(files):
        docs.extend(docs_from_text(files[name], name))
    return ingest(docs, facts)


def at(h, m, s=0):
    return datetime(2025, 11, 21, h, m, s, tzinfo=UTC)


def entry(tl: Timeline, needle: str):
    hits = [e for e in tl.entries if needle in e.text and e.tag]
    assert hits, f"no tagged entry with {needle!r}"
    return hits[0]


def test_the_seed_sequence_is_in_order():
    tl = facts_from(fixture_files()).get(Timeline)
    mofed_start = entry(tl, "NVIDIA driver container exec start")
    gpu_start = entry(tl, "Starting driver uninstallation process")
    assert mofed_start.time == gpu_start.time == at(11, 51, 6)  # both operators start together
    assert mofed_start.source == "network-operator/mofed" and gpu_start.source == "gpu-operator/nvidia-driver-daemonset"
    assert entry(tl, "Starting compilation of driver version").time == at(11, 51, 23)
    assert entry(tl, "DTK driver build script end").time == at(11, 53, 43)
    assert entry(tl, "Apply blacklisted mofed modules").time == at(11, 56, 8)  # install/reload from 11:56:08
    hca = entry(tl, "Loading HCA driver and Access Layer")
    assert hca.approximate and hca.earliest == at(11, 56, 8) and hca.latest == at(11, 57, 55)  # HCA loaded by 11:57:55
    ready = entry(tl, "Setting driver ready state")
    assert ready.time == at(11, 58, 39) and ready.tag == "marker-set"
    failure = entry(tl, "could not insert 'nvidia_peermem'")
    assert failure.latest < ready.time and failure.approximate
    # the entries come in time order, the race's two sides included
    order = [e for e in tl.entries if e.tag]
    assert order.index(failure) < order.index(ready)
    assert order.index(mofed_start) < order.index(entry(tl, "DTK driver build script end")) < order.index(ready)


def test_every_entry_keeps_artifact_and_line_and_a_lane():
    tl = facts_from(fixture_files()).get(Timeline)
    ready = entry(tl, "Setting driver ready state")
    assert (ready.artifact, ready.line) == (MOFED_LOG, 28)
    assert ready.signature == "mofed.driver-ready.set" and ready.container == "mofed-container"
    lines = FIXTURE.joinpath(MOFED_LOG).read_text().splitlines()
    assert "Setting driver ready state" in lines[ready.line - 1]
    assert all(e.artifact and e.line for e in tl.entries)


def test_untimed_lines_take_the_interval_of_their_neighbours_and_say_so():
    tl = facts_from(fixture_files()).get(Timeline)
    compile_ = entry(tl, "Compiling NVIDIA driver kernel modules")
    assert (compile_.earliest, compile_.latest) == (at(11, 54, 2), at(11, 56, 1))
    assert when(compile_) == "~11:54–11:56"
    assert "after line 3" in compile_.note and "before line 13" in compile_.note
    # the neighbours that bound it are kept as (untagged) entries, so the evidence for the interval is there
    assert any(e.tag is None and e.line == 3 and e.artifact == DRIVER_LOG for e in tl.entries)
    # an app container with no stamp before it starts after the pod's init container ended
    start = entry(tl, "Starting installation of NVIDIA driver")
    assert start.earliest == at(11, 51, 41) and "init containers" in start.note


def test_the_kernel_record_of_the_failed_insert_places_the_modprobe_error():
    tl = facts_from(fixture_files()).get(Timeline)
    failure = entry(tl, "could not insert 'nvidia_peermem'")
    assert failure.earliest == failure.latest == at(11, 56, 41) and when(failure) == "≈11:56:41"
    assert "journal-kernel.log:2" in failure.note
    load = entry(tl, "Loading NVIDIA Peer Memory kernel module")
    assert load.earliest == at(11, 56, 5) and load.latest == at(11, 56, 41)


def test_phases_are_measured():
    phases = {p.name: p.describe() for p in facts_from(fixture_files()).get(Timeline).phases}
    assert phases["Network Operator"].startswith("Network Operator: 7m33s from start to .driver-ready")
    assert phases["MOFED compile"].startswith("MOFED compile: 2m20s")
    assert phases["MOFED install"].startswith("MOFED install: 2m31s from package install to .driver-ready")


def test_zone_less_sources_are_assumed_consistent_and_the_inference_is_stated():
    tl = facts_from(fixture_files()).get(Timeline)
    notes = " ".join(tl.notes)
    assert "mofed times of" in notes and "have no zone; UTC is consistent" in notes
    assert "capture time 15:19:01 UTC from the `date` output at date.txt:1" in notes


def _shift_mofed(text: str, hours: int) -> str:
    def move(m):
        t = datetime.strptime(m.group(1), "%d-%b-%y_%H:%M:%S") + timedelta(hours=hours)
        return "[" + t.strftime("%d-%b-%y_%H:%M:%S") + "]"

    return re.sub(r"\[(\d{2}-\w{3}-\d{2}_\d{2}:\d{2}:\d{2})\]", move, text)


def test_a_zone_less_source_printed_in_another_zone_is_realigned():
    files = fixture_files()
    files[MOFED_LOG] = _shift_mofed(files[MOFED_LOG], -5)  # the MOFED container printed US Eastern time
    facts = facts_from(files)
    tl = facts.get(Timeline)
    assert entry(tl, "Setting driver ready state").time == at(11, 58, 39)
    assert entry(tl, "NVIDIA driver container exec start").time == at(11, 51, 6)
    assert "UTC-05:00 inferred" in " ".join(tl.notes)
    v = facts.get(Ordering).violations()[0]
    assert v.certain and v.gap == (118.0, 118.0)


def _to_eastern(text: str) -> str:
    """Rewrite RFC 3339 Z stamps as the same instants in -05:00."""
    def move(m):
        t = datetime.fromisoformat(m.group(1).replace("Z", "+00:00")).astimezone(timezone(timedelta(hours=-5)))
        return t.isoformat()

    return re.sub(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)", move, text)


def test_zone_aware_sources_written_in_another_zone_give_the_same_instants():
    files = fixture_files()
    files[DRIVER_LOG] = _to_eastern(files[DRIVER_LOG])
    files["date.txt"] = "Fri Nov 21 10:19:01 EST 2025\n"
    files[DRIVER_LOG] = files[DRIVER_LOG].replace("11:54:02 UTC", "06:54:02 EST").replace("11:56:01 UTC", "06:56:01 EST").replace(
        "11:56:05 UTC", "06:56:05 EST")
    tl = facts_from(files).get(Timeline)
    assert entry(tl, "Waiting for MOFED to be installed").time == at(11, 51, 41)
    compile_ = entry(tl, "Compiling NVIDIA driver kernel modules")
    assert (compile_.earliest, compile_.latest) == (at(11, 54, 2), at(11, 56, 1))
    assert tl.capture == at(15, 19, 1)


def _signature(facts: Facts):
    tl = facts.get(Timeline)
    seq = [(when(e), e.source, e.text) for e in tl.entries if e.tag]
    v = facts.get(Ordering).violations()
    return seq, [(x.rule.id, x.certain, x.gap, x.then.text, x.first.text) for x in v]


def test_file_order_and_names_do_not_change_the_answer():
    files = fixture_files()
    expected = _signature(facts_from(files))
    rnd = random.Random(2025)
    names = list(files)
    for trial in range(12):
        order = names[:]
        rnd.shuffle(order)
        renamed = {f"incident/{trial}-{i}-{rnd.choice(['a', 'zz', 'logs', 'paste'])}.{rnd.choice(['txt', 'log', 'out'])}": files[n]
                   for i, n in enumerate(order)}
        got = _signature(facts_from(renamed, order=list(renamed)))
        assert got == expected, f"trial {trial}: {order}"


def test_removing_one_sources_timestamps_never_gives_a_wrong_order():
    files = fixture_files()
    files[MOFED_LOG] = re.sub(r"\[\d{2}-\w{3}-\d{2}_\d{2}:\d{2}:\d{2}\] ", "", files[MOFED_LOG])
    facts = facts_from(files)
    assert not facts.get(Ordering).violations()
    assert any("peermem-after-mofed-ready" in str(g) and "carries no time" in str(g) for g in facts.gaps)


def test_without_the_kernel_line_the_race_is_only_probable():
    files = fixture_files()
    del files["journal-kernel.log"]
    facts = facts_from(files)
    (v,) = facts.get(Ordering).violations()
    assert not v.certain and v.confidence < 0.6
    assert "probably" in v.describe() and "11:58:39" in v.describe()


def _line(artifact, n, text, time=None, fmt=None, elapsed=None, pod=None, ctr=None):
    return LogLine(artifact, n, text, text, time, fmt, None, pod, ctr, elapsed)


def test_year_less_klog_takes_the_year_of_the_other_sources_across_new_year():
    plugin = ContainerLog("plugin.log", (
        _line("plugin.log", 1, "Registered device plugin for 'nvidia.com/gpu' with Kubelet", datetime(2000, 12, 31, 23, 59, 50), "klog"),
    ), pod="nvidia-device-plugin-daemonset-v46gq")
    toolkit = ContainerLog("toolkit.log", (
        _line("toolkit.log", 1, "Starting 'setup' for nvidia-toolkit", datetime(2026, 1, 1, 0, 0, 5, tzinfo=UTC), "logrus"),
    ), pod="nvidia-container-toolkit-daemonset-sxfkr")
    tl = facts_with(plugin, toolkit).get(Timeline)
    reg = entry(tl, "Registered device plugin")
    assert reg.time == datetime(2025, 12, 31, 23, 59, 50, tzinfo=UTC)
    assert any("carry no year; 2025" in n for n in tl.notes)


def test_dmesg_uptime_becomes_wall_clock_only_when_the_same_boot_is_seen():
    rel = ContainerLog("dmesg.txt", (
        _line("dmesg.txt", 1, "mlx5_core 0000:01:00.0: firmware version: 28.39.1002", None, "dmesg", 101.5),
        _line("dmesg.txt", 2, "nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)", None, "dmesg", 160.25),
    ), kind="kernel")
    wall = ContainerLog("dmesg-T.txt", (
        _line("dmesg-T.txt", 1, "mlx5_core 0000:01:00.0: firmware version: 28.39.1002", datetime(2025, 11, 21, 11, 57, 54), "dmesg-T"),
    ), kind="kernel")
    tl = facts_with(rel, wall, ContainerLog("date.txt", (_line("date.txt", 1, "x", at(15, 0), "date"),))).get(Timeline)
    e = entry(tl, "Unknown symbol")
    assert e.time == at(11, 57, 54) + timedelta(seconds=160.25 - 101.5)
    assert any("boot time 2025-11-21T11:56:12" in n for n in tl.notes)
    alone = facts_with(rel).get(Timeline)
    e = entry(alone, "Unknown symbol")
    assert e.time is None and "after boot" in e.note and when(e) == "?"
    assert any("stay relative to boot" in n for n in alone.notes)


def test_dmesg_uptime_is_anchored_by_the_probed_proc_uptime_of_the_same_node():
    from gpusleuth.model.host import Uptime

    rel = ContainerLog("nodes/gpu-node-3/commands/dmesg-nvidia.txt", (
        _line("nodes/gpu-node-3/commands/dmesg-nvidia.txt", 1, "nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)",
              None, "dmesg", 160.25),
    ), node="gpu-node-3", kind="kernel")
    up = Uptime(3600.0, Evidence("nodes/gpu-node-3/files/proc/uptime", 1, "3600.00 1200.00"), "gpu-node-3", read_at=at(15, 0))
    tl = facts_with(rel, up).get(Timeline)
    e = entry(tl, "Unknown symbol")
    assert e.time == at(14, 0) + timedelta(seconds=160.25)
    assert any("/proc/uptime of node gpu-node-3 (nodes/gpu-node-3/files/proc/uptime:1: 3600 s)" in n for n in tl.notes)
    other = Uptime(3600.0, up.evidence, "gpu-node-4", read_at=at(15, 0))
    assert entry(facts_with(rel, other).get(Timeline), "Unknown symbol").time is None  # another node's boot says nothing


def test_event_ages_are_anchored_to_the_capture_time_and_say_from_where():
    ev = Event("BackOff", "Back-off restarting failed container nvidia-driver-ctr in pod nvidia-driver-daemonset-x",
               type="Warning", namespace="nvidia-gpu-operator", object="pod/nvidia-driver-daemonset-418.94.202510230424-0-564xm",
               age="4m7s (x64 over 3h27m)", evidence=Evidence("events.txt", 7, "..."))
    date = ContainerLog("date.txt", (_line("date.txt", 1, "Fri Nov 21 15:19:01 UTC 2025", at(15, 19, 1), "date"),))
    tl = facts_with(ev, date, Pod("nvidia-driver-daemonset-418.94.202510230424-0-564xm", "nvidia-gpu-operator", node="gpu-node-1")).get(Timeline)
    e = entry(tl, "Back-off restarting")
    assert e.tag == "container-crash" and e.approximate
    assert e.latest == at(15, 19, 1) - timedelta(hours=3, minutes=27) and e.earliest == e.latest - timedelta(minutes=1)
    assert e.node == "gpu-node-1" and "(x64)" in e.note
    assert any("anchored to the capture time from the `date` output at date.txt:1" in n for n in tl.notes)


def test_container_status_times_are_entries_and_bound_untimed_lines():
    cs = ContainerStatus("nvidia-driver-ctr", state="waiting", reason="CrashLoopBackOff", restarts=64,
                         last_reason="Error", last_exit_code=1,
                         last_started_at=at(11, 56, 2), last_finished_at=at(11, 56, 50), evidence=Evidence("pod.descr", 40, "Last State: Terminated"))
    pod = Pod("nvidia-driver-daemonset-418.94.202510230424-0-564xm", "nvidia-gpu-operator", node="gpu-node-1", containers=(cs,))
    log = ContainerLog("prev.log", (_line("prev.log", 1, "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument"),),
                       pod=pod.name, container="nvidia-driver-ctr", previous=True)
    tl = facts_with(pod, log).get(Timeline)
    failure = entry(tl, "could not insert")
    assert (failure.earliest, failure.latest) == (at(11, 56, 2), at(11, 56, 50)) and failure.node == "gpu-node-1"
    crash = [e for e in tl.entries if e.signature == "status.terminated"]
    assert crash and crash[0].tag == "container-crash" and crash[0].time == at(11, 56, 50) and crash[0].line == 40


def test_nothing_to_put_on_a_timeline_is_not_applicable():
    from gpusleuth.errors import NotApplicable

    with pytest.raises(NotApplicable):
        Facts("empty").get(Timeline)


def test_a_pasted_date_command_is_the_capture_time():
    files = fixture_files()
    del files["date.txt"]
    files["session.md"] = ("root@bastion:~# date\nFri Nov 21 15:19:01 UTC 2025\nroot@bastion:~# kubectl get pods -n nvidia-network-operator\n"
                           "NAME                                  READY   STATUS    RESTARTS   AGE\n"
                           "mofed-rhcos4.18-554bdbd7cf-ds-x7k2p   2/2     Running   0          2d22h\n")
    tl = facts_from(files).get(Timeline)
    assert tl.capture == at(15, 19, 1) and "`date` output at session.md:2" in tl.capture_source


def test_without_any_capture_time_the_newest_stamp_stands_in_and_is_named():
    files = fixture_files()
    del files["date.txt"]
    tl = facts_from(files).get(Timeline)
    assert tl.capture == at(11, 58, 39)
    assert any("no capture time was recorded" in n and "may come out early" in n for n in tl.notes)


def test_a_polling_loop_keeps_its_first_and_last_line():
    rows = [_line("validator.log", i, "waiting for nvidia container stack to be setup", at(12, 0, 5 * i), "rfc3339",
                  pod="nvidia-device-plugin-daemonset-v46gq", ctr="toolkit-validation") for i in range(1, 8)]
    tl = facts_with(ContainerLog("validator.log", tuple(rows), pod="nvidia-device-plugin-daemonset-v46gq")).get(Timeline)
    waits = [e for e in tl.entries if e.tag == "waiting"]
    assert [e.line for e in waits] == [1, 7]
    assert "seen 7 times in this container, the last at line 7" in waits[0].note


def test_a_container_start_time_in_the_pod_status_fixes_the_zone():
    cs = ContainerStatus("mofed-container", state="running", started_at=at(11, 51, 5), evidence=Evidence("mofed.descr", 30, "Started"))
    pod = Pod("mofed-rhcos4.18-554bdbd7cf-ds-x7k2p", "nvidia-network-operator", node="gpu-node-1", containers=(cs,))
    log = ContainerLog("mofed.log", (
        _line("mofed.log", 1, "NVIDIA driver container exec start", datetime(2025, 11, 21, 6, 51, 6), "mofed",
              pod=pod.name, ctr="mofed-container"),
        _line("mofed.log", 2, "Setting driver ready state", datetime(2025, 11, 21, 6, 58, 39), "mofed", pod=pod.name, ctr="mofed-container"),
    ), pod=pod.name, container="mofed-container")
    tl = facts_with(pod, log).get(Timeline)
    assert entry(tl, "Setting driver ready state").time == at(11, 58, 39)
    assert any("UTC-05:00 puts its first line 1 s after the container's start time" in n for n in tl.notes)


XID79 = Path(__file__).parent.parent / "cases" / "incidents" / "xid79-one-of-eight" / "full"


def test_kubectl_describe_offset_puts_local_dmesg_before_the_plugin_that_reacted_to_it():
    """xid79: `dmesg -T` printed +09:00 local time; no zone-aware span overlaps it, and describe's `Start Time:`
    shows the site's +0900. Read as UTC, the Xid came nine hours after the plugin marked the GPU unhealthy."""
    tl = facts_from({p.name: p.read_text(encoding="utf-8") for p in sorted(XID79.iterdir()) if p.suffix != ".toml"}).get(Timeline)
    xid = entry(tl, "NVRM: Xid (PCI:0000:c1:00): 79")
    unhealthy = entry(tl, "device marked unhealthy")
    assert xid.time == datetime(2026, 9, 15, 12, 47, 12, tzinfo=UTC)
    assert xid.time <= unhealthy.time and tl.entries.index(xid) < tl.entries.index(unhealthy)
    note = next(n for n in tl.notes if n.startswith("dmesg-T times of dmesg.txt"))
    assert "UTC+09:00 preferred over UTC" in note and "describe-pod.txt:7" in note
    # the device plugin's container clock is not moved by the client's zone, and the note says why
    assert any(n.startswith("klog times of device-plugin.log") and "container's clock is UTC" in n for n in tl.notes)


def _host_dmesg(*stamps: datetime) -> ContainerLog:
    rows = tuple(_line("dmesg.txt", i, "NVRM: Xid (PCI:0000:c1:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
                       t, "dmesg-T") for i, t in enumerate(stamps, 1))
    return ContainerLog("dmesg.txt", rows, kind="kernel")


def _started_pod(name: str, start: datetime, line: int) -> Pod:
    return Pod(name, "inference", start_time=start, start_evidence=Evidence(f"{name}.txt", line, f"Start Time: {start:%a, %d %b %Y %H:%M:%S %z}"))


def test_two_different_kubectl_offsets_give_no_preference_and_say_so():
    tokyo, eastern = timezone(timedelta(hours=9)), timezone(timedelta(hours=-5))
    pods = (_started_pod("a", datetime(2026, 9, 17, 9, 10, 58, tzinfo=tokyo), 7), _started_pod("b", datetime(2026, 9, 17, 9, 0, tzinfo=eastern), 5))
    tl = facts_with(*pods, _host_dmesg(datetime(2026, 9, 15, 21, 47, 12))).get(Timeline)
    assert entry(tl, "NVRM: Xid").time == datetime(2026, 9, 15, 21, 47, 12, tzinfo=UTC)
    note = next(n for n in tl.notes if n.startswith("dmesg-T times"))
    assert "UTC assumed" in note and "2 different offsets (UTC-05:00 at b.txt:5, UTC+09:00 at a.txt:7)" in note
    assert "no client zone is preferred" in note


def test_the_kubectl_offset_never_overrides_a_zone_the_overlap_proves():
    """The dmesg lines fall inside a zone-aware log's span in UTC and nowhere near it in +09:00: UTC stays."""
    tokyo = timezone(timedelta(hours=9))
    aware = ContainerLog("toolkit.log", tuple(
        _line("toolkit.log", i, "Starting 'setup' for nvidia-toolkit", datetime(2026, 9, 15, 12, 40 + i, tzinfo=UTC), "logrus",
              pod="nvidia-container-toolkit-daemonset-sxfkr") for i in (0, 9)), pod="nvidia-container-toolkit-daemonset-sxfkr")
    pod = _started_pod("embed", datetime(2026, 9, 15, 21, 40, tzinfo=tokyo), 7)
    tl = facts_with(pod, aware, _host_dmesg(datetime(2026, 9, 15, 12, 42), datetime(2026, 9, 15, 12, 45))).get(Timeline)
    assert entry(tl, "NVRM: Xid").time == datetime(2026, 9, 15, 12, 42, tzinfo=UTC)
    assert any(n.startswith("dmesg-T times") and "UTC is consistent" in n for n in tl.notes)


def test_a_single_kubectl_offset_is_preferred_for_host_logs_only_when_overlap_cannot_decide():
    tokyo = timezone(timedelta(hours=9))
    tl = facts_with(_started_pod("embed", datetime(2026, 9, 17, 9, 10, 58, tzinfo=tokyo), 7),
                    _host_dmesg(datetime(2026, 9, 15, 21, 47, 12))).get(Timeline)
    assert entry(tl, "NVRM: Xid").time == datetime(2026, 9, 15, 12, 47, 12, tzinfo=UTC)
    assert any("UTC+09:00 preferred over UTC" in n and "embed.txt:7" in n for n in tl.notes)


def test_lines_of_another_artifact_in_a_log_are_looked_up_by_their_own_key():
    """The timeline looks a stream's signatures up by line number when every line is of the log's artifact, which
    the grouping of a log's lines tells; a line of another artifact inside a log (no parser makes one) is looked
    up by its (artifact, line) key, and a line number of the log's artifact matches nothing of the other's."""
    from gpusleuth.facts.logs import Logs
    from gpusleuth.facts.timeline import _recognised

    t0 = datetime(2026, 1, 1, 0, 0, 5, tzinfo=UTC)
    loaded = "Starting 'setup' for nvidia-toolkit"
    mixed = ContainerLog("toolkit.log", (
        _line("toolkit.log", 1, "nothing to see", t0, "rfc3339"),
        _line("other.log", 2, loaded, t0 + timedelta(seconds=1), "rfc3339"),
        _line("toolkit.log", 3, loaded, t0 + timedelta(seconds=2), "rfc3339"),
    ), pod="nvidia-container-toolkit-daemonset-sxfkr")
    plain = ContainerLog("plugin.log", (
        _line("plugin.log", 2, "nothing to see either", t0, "rfc3339"),
        _line("plugin.log", 3, loaded, t0 + timedelta(seconds=3), "rfc3339"),
    ), pod="nvidia-container-toolkit-daemonset-abcde")
    facts = facts_with(mixed, plain)
    tl = facts.get(Timeline)
    keys = {(e.artifact, e.line) for e in tl.entries if e.signature and not e.signature.startswith("status.")}
    assert {("other.log", 2), ("toolkit.log", 3), ("plugin.log", 3)} <= keys
    assert ("toolkit.log", 2) not in keys and ("toolkit.log", 1) not in keys
    by_line = facts.get(Logs).signatures_at()
    by_artifact: dict = {}
    for (artifact, number), sigs in by_line.items():
        by_artifact.setdefault(artifact, {})[number] = sigs
    for log in (mixed, plain):
        told = _recognised(list(log.lines), log.artifact, by_artifact, by_line, log is plain)
        assert told == _recognised(list(log.lines), log.artifact, by_artifact, by_line)
        assert told[0] == [i for i, ln in enumerate(log.lines) if (ln.artifact, ln.line) in by_line]
