"""knowledge/attribution.toml: every row's real example matches its own pattern, and shapes name a layer."""

from __future__ import annotations

import re

import pytest

from gpusleuth.facts.errors import error_level, error_rows, rules, shape_of
from gpusleuth.knowledge import table
from gpusleuth.model.layers import Layer

ROWS = [(kind, row) for kind in ("shape", "file", "error", "kernel", "retry", "noise", "success", "health")
        for row in (error_rows() if kind == "error" else table("attribution").get(kind, []))]


@pytest.mark.parametrize("kind, row", ROWS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(ROWS)])
def test_each_row_matches_its_example(kind, row):
    assert re.search(row["pattern"], row["example"]), f"[[{kind}]] {row['pattern']!r} does not match {row['example']!r}"


def test_shapes_name_real_layers_and_are_tried_in_order():
    for row in table("attribution")["shape"]:
        Layer(row["layer"])
    assert shape_of("nvidia-container-cli: initialization error: driver rpc error") == ("nvidia-container-cli", Layer.CONTAINER_TOOLKIT)
    assert shape_of("some text nobody wrote a shape for") is None


def test_error_shapes_without_a_level_word():
    assert error_level("Failed to initialize NVML: Unknown Error") == "error"
    assert error_level("panic: runtime error: index out of range [0] with length 0") == "fatal"
    assert error_level("RuntimeError: CUDA error: no kernel image is available for execution on the device") == "error"
    assert error_level("Starting FS watcher.") is None
    assert error_level("the failed attempts were retried") is None


def test_a_failed_calls_errno_message_ends_an_error_line():
    """glibc's strerror text after ": " at the end of a line, in either case (Go prints it in lower case)."""
    for line in ("/sys/module/firmware_class/parameters/path: Read-only file system",
                 "Startup probe failed: Query Status returned error code: 14 - failed to connect to all addresses; last error: "
                 "UNKNOWN: ipv6:%5B::%5D:50005: Address family not supported by protocol",
                 "open /run/nvidia/validations/toolkit-ready: no such file or directory",
                 "mount: /run/nvidia/driver: device or resource busy.", "ls: cannot access '/dev/nvidia0': No such file or directory"):
        assert error_level(line) == "error", line
    for line in ("The device is busy and the pipe is broken", "Operation now in progress",
                 "level=info msg=\"Connection refused counter reset\"", "No such file or directory was expected here, and none was"):
        assert error_level(line) is None, line


def test_every_tracker_row_is_a_url():
    rows = table("attribution")["tracker"]
    assert all(r["url"].startswith("https://github.com/") for r in rows)
    assert not rows[-1].get("components") and not rows[-1].get("layers"), "the last row is the default"
    assert rules().retry.search("failed to get driver pod status, retrying in 5s")
