"""TK102 nvidia-devices-revoked-in-device-cgroup: a container's devices.list gives the NVIDIA devices only `m`."""

from failure_fixtures import cites, facts_from, run

# cat of the container's cgroup v1 devices.list after `systemctl daemon-reload` on a systemd-cgroup node
REVOKED = """\
$ cat /sys/fs/cgroup/devices/devices.list
c 1:3 rwm
c 1:5 rwm
c 5:0 rwm
c 136:* rwm
c 195:* m
c 508:* m
"""


def test_the_nvidia_devices_may_be_created_but_not_opened():
    [f] = run("TK102", facts_from({"devices.txt": REVOKED}))
    assert cites(f) == ["devices.txt:6"] and f.layer.value == "container-toolkit"
    assert f.facts["rules"] == ["c 195:* m"]
    assert any("nvidia-ctk system create-dev-char-symlinks --create-all" in c for fx in f.fixes for c in fx.commands)


def test_a_bare_cat_line_and_an_elided_paste_are_read_too():
    [f] = run("TK102", facts_from({"paste.txt": "cat /sys/fs/cgroup/devices/devices.list\n...\nc 195:* m\n"}))
    assert cites(f) == ["paste.txt:3"] and f.facts["partial"] is True


def test_silent_when_the_devices_are_readable_or_everything_is_allowed():
    assert run("TK102", facts_from({"devices.txt": REVOKED.replace("c 195:* m", "c 195:* rwm")})) == []
    assert run("TK102", facts_from({"devices.txt": "$ cat /sys/fs/cgroup/devices/devices.list\na *:* rwm\n"})) == []


def test_not_applicable_without_a_devices_list():
    assert run("TK102", facts_from({"notes.txt": "c 195 is the NVIDIA major number, used by /dev/nvidia0 and the others\n"})) == []
