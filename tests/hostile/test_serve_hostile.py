"""`gpusleuth serve` against bad faults files and idle connections: refuse to start with one line naming the
file and the field; drop silent connections; a bounded number of handler threads."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request

import pytest
from click.testing import CliRunner

from gpusleuth.cli import cli
from gpusleuth.serve.faults import Faults
from gpusleuth.serve.server import App, Handler, Server, _HTTPServer
from gpusleuth.serve.synthetic import build


@pytest.mark.parametrize("row, field", [
    ("delay: -5", "delay"),
    ('delay: "soon"', "delay"),
    ('status: "abc"', "status"),
    ("status: 99999", "status"),
    ("status: 99", "status"),
    ("status: 4.5", "status"),
    ("retry_after: 1.0e+400", "retry_after"),
    ("retry_after: 1e400", "retry_after"),  # YAML 1.1 reads this as a string: still not a number
    ("retry_after: .nan", "retry_after"),
    ("delay: .inf", "delay"),
    ("times: -1", "times"),
    ("drop: maybe", "drop"),
    ('path: "(unclosed"', "path"),
])
def test_a_bad_value_refuses_to_start_naming_file_and_field(tmp_path, row, field):
    faults = tmp_path / "faults.yaml"
    faults.write_text(f'faults:\n  - path: "^/api/v1/pods$"\n    status: 500\n  - path: "/log$"\n    {row}\n')
    with pytest.raises(ValueError) as err:
        Faults.load(faults)
    msg = str(err.value)
    assert "\n" not in msg and str(faults) in msg and f"bad fault 2: {field}:" in msg
    out = CliRunner().invoke(cli, ["serve", "example:peermem-race", "--port", "0", "--faults", str(faults)])
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1
    assert str(faults) in out.output and field in out.output


def test_a_binary_faults_file_is_named(tmp_path):
    faults = tmp_path / "faults.bin"
    faults.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\x00")
    with pytest.raises(ValueError, match="binary") as err:
        Faults.load(faults)
    assert str(faults) in str(err.value) and "\n" not in str(err.value)


def test_a_fifo_as_faults_file_is_refused_without_blocking(tmp_path):
    import os

    fifo = tmp_path / "faults.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file") as err:
        Faults.load(fifo)
    assert str(fifo) in str(err.value)


def test_a_yaml_error_is_one_line(tmp_path):
    faults = tmp_path / "faults.yaml"
    faults.write_text("faults:\n  - path: [\n")
    with pytest.raises(ValueError) as err:
        Faults.load(faults)
    assert str(faults) in str(err.value) and "\n" not in str(err.value)


def test_good_values_still_load(tmp_path):
    faults = tmp_path / "faults.yaml"
    faults.write_text('faults:\n  - path: "/log$"\n    delay: 0.5\n    status: 503\n    retry_after: 2\n    times: 1\n    skip: 0\n    drop: false\n')
    (f,) = Faults.load(faults).faults
    assert (f.delay, f.status, f.retry_after, f.times) == (0.5, 503, 2, 1)


def _threads() -> int:
    return threading.active_count()


def test_idle_half_open_connections_do_not_hold_a_thread_each(monkeypatch):
    monkeypatch.setattr(Handler, "timeout", 1.0)
    with Server(App(build(1), Faults())) as srv:
        host, port = srv.httpd.server_address[:2]
        before = _threads()
        socks = []
        try:
            for _ in range(300):
                s = socket.create_connection((host, port))
                socks.append(s)  # connected, never sends a byte
            time.sleep(0.5)
            held = _threads() - before
            assert held <= _HTTPServer.workers < 100, f"{held} threads for 300 idle connections"
            # a real client is still answered: idle connections are dropped after Handler.timeout
            t0 = time.perf_counter()
            with urllib.request.urlopen(f"{srv.url}/version", timeout=30) as resp:
                assert resp.status == 200
            assert time.perf_counter() - t0 < 20
        finally:
            for s in socks:
                s.close()


def test_an_idle_server_holds_no_handler_thread():
    before = _threads()
    with Server(App(build(1), Faults())) as srv:
        time.sleep(0.2)
        assert _threads() - before == 1  # the accept loop
        with urllib.request.urlopen(f"{srv.url}/version", timeout=10) as resp:
            assert resp.status == 200


def test_a_silent_connection_is_closed_after_the_idle_timeout(monkeypatch):
    monkeypatch.setattr(Handler, "timeout", 0.5)
    with Server(App(build(1), Faults())) as srv:
        s = socket.create_connection(srv.httpd.server_address[:2])
        s.settimeout(5)
        t0 = time.perf_counter()
        assert s.recv(1) == b""  # the server hung up
        assert time.perf_counter() - t0 < 4
        s.close()
