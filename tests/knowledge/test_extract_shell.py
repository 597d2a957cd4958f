"""tools/catalogue/extract_shell.py: draft catalogue rows from a shell script's failure paths."""

from __future__ import annotations

import importlib.util
import io
import tomllib
from contextlib import redirect_stdout
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "catalogue" / "extract_shell.py"
_spec = importlib.util.spec_from_file_location("extract_shell", TOOL)
extract_shell = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(extract_shell)

SCRIPT = r'''#!/bin/bash
set -eu

_resolve_kernel_version() {
    echo "Resolving Linux kernel version..."
    if [ -z "${version}" ]; then
        echo "Could not resolve Linux kernel version" >&2
        return 1
    fi
    echo "Proceeding with Linux kernel version ${KERNEL_VERSION}"
}

_update_package_cache() {
    echo "Updating the package cache..."
    if ! apt-get -qq update; then
        echo "ERROR: Failed to update package cache. "\
             "Ensure that the cluster can access the proper networks."
        exit 1
    fi
}

_drain() {
    echo "Draining node ${NODE_NAME}..."
    kubectl drain ${NODE_NAME}
    if [ "$?" != "0" ]; then
        return 1
    fi
}

_write_conf() {
    echo "options nvidia ${PARAMS} and more text" > /etc/modprobe.d/nvidia.conf
    echo "WARNING: A search path is already configured in $fw_path_config_file"
}
'''


def test_failure_paths_are_kept_with_their_function():
    rows = {r["format"]: r for r in extract_shell.extract(SCRIPT, "nvidia-driver")}
    assert rows["Could not resolve Linux kernel version"]["function"] == "_resolve_kernel_version"
    assert "stderr" in rows["Could not resolve Linux kernel version"]["why"]
    joined = "ERROR: Failed to update package cache.  Ensure that the cluster can access the proper networks."
    assert rows[joined]["function"] == "_update_package_cache" and "fails" in rows[joined]["why"]
    assert rows["WARNING: A search path is already configured in $fw_path_config_file"]["level"] == "warning"


def test_progress_lines_and_file_writes_are_left_out():
    formats = {r["format"] for r in extract_shell.extract(SCRIPT, "nvidia-driver")}
    assert "Resolving Linux kernel version..." not in formats
    assert "Proceeding with Linux kernel version ${KERNEL_VERSION}" not in formats
    assert "Draining node ${NODE_NAME}..." not in formats  # a command, not the exit, follows it
    assert not any(f.startswith("options nvidia") for f in formats)


def test_output_is_toml_rows_with_doing_to_review(tmp_path):
    script = tmp_path / "nvidia-driver"
    script.write_text(SCRIPT)
    out = io.StringIO()
    with redirect_stdout(out):
        assert extract_shell.main([str(script), "--where-prefix", "ubuntu22.04/"]) == 0
    rows = tomllib.loads(out.getvalue())["message"]
    assert {r["doing"] for r in rows} == {"TODO"}
    assert len({r["id"] for r in rows}) == len(rows)
    assert any(r["where"].startswith("ubuntu22.04/") and r["where"].endswith("(_resolve_kernel_version)") for r in rows)
