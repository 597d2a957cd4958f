"""Start-up: the command line imports only what the command it runs uses (docs/performance.md, "Start-up").

Each check runs in a fresh interpreter, because this test process has long since imported everything. Nothing
here is timed; `bench/bench_startup.py` measures the time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).parent.parent / "src"
# Heavy third-party modules, each needed by one path only: the terminal report (rich), the live cluster
# (lightkube, httpx), the HTML report and SVG timeline (jinja2), YAML inputs (yaml), Seen-before line
# alignment (rapidfuzz), metrics scrapes (prometheus_client), the node probe (pynvml).
HEAVY = ("rich", "lightkube", "httpx", "jinja2", "yaml", "rapidfuzz", "prometheus_client", "pynvml")
LIVE_ONLY = ("lightkube", "httpx", "jinja2", "prometheus_client", "pynvml")


def _loaded_after(code: str) -> set[str]:
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)), file=sys.__stderr__)\n"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    last = proc.stderr.strip().splitlines()[-1]
    return {m.split(".")[0] for m in json.loads(last)}


def test_importing_the_command_line_loads_no_heavy_module():
    loaded = _loaded_after("import gpusleuth.cli")
    assert "gpusleuth" in loaded  # the probe did import it
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_version_loads_no_heavy_module():
    loaded = _loaded_after(
        "import sys\nfrom gpusleuth.cli import main\nsys.argv = ['gpusleuth', '--version']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert "click" in loaded
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_offline_diagnosis_loads_none_of_the_live_modules():
    loaded = _loaded_after(
        "import sys\nfrom gpusleuth.cli import main\n"
        "sys.argv = ['gpusleuth', 'diagnose', 'example:peermem-race', '--format', 'json', '-o', '/dev/null']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert "re2" in loaded  # the diagnosis did run
    assert not loaded & set(LIVE_ONLY), sorted(loaded & set(LIVE_ONLY))
    assert "rich" not in loaded  # JSON output: the terminal renderer is never imported


def test_yaml_and_rapidfuzz_still_load_where_they_are_used():
    """The lazy imports still happen: a YAML input is parsed, and a line comparison uses rapidfuzz."""
    loaded = _loaded_after(
        "from gpusleuth.parsers.yamlsafe import safe_load\nassert safe_load('a: [1, 2]') == {'a': [1, 2]}\n"
        "from gpusleuth.analysis.seen_before import similarity\nassert similarity('abc def', 'xx abc def yy') == 1.0"
    )
    assert {"yaml", "rapidfuzz"} <= loaded


def test_an_input_without_yaml_never_loads_the_yaml_parser(tmp_path):
    (tmp_path / "dmesg.txt").write_text(
        "[  102.123456] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
        "[  102.123999] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n", encoding="utf-8")
    loaded = _loaded_after(
        "import sys\nfrom gpusleuth.cli import main\n"
        f"sys.argv = ['gpusleuth', 'diagnose', {str(tmp_path)!r}, '--format', 'json', '-o', '/dev/null']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert "re2" in loaded
    assert "yaml" not in loaded


# Standard-library modules that only some inputs need (archives, TOML and XML files, compressed Helm releases), and
# ones gpusleuth no longer uses at all on this path (its knowledge files are found next to the package, hashed with
# blake2b alone, and a median is computed without statistics).
INPUT_ONLY = ("tarfile", "zipfile", "gzip", "tomllib", "xml", "statistics", "hashlib", "importlib.resources")


def _diagnosed(target: str, then: str = "") -> str:
    return ("import sys\nfrom gpusleuth.cli import main\n"
            f"sys.argv = ['gpusleuth', 'diagnose', {target!r}, '--format', 'json', '-o', '/dev/null']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n" + then)


def _loaded_modules_after(code: str) -> set[str]:
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)), file=sys.__stderr__)\n"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_a_directory_of_logs_and_kubectl_output_loads_no_archive_toml_or_xml_module(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSLEUTH_CACHE_DIR", str(tmp_path))  # its own knowledge cache, written by a first run:
    _loaded_modules_after(_diagnosed("example:peermem-race"))  # tomllib is what a cold cache imports, once
    loaded = _loaded_modules_after(_diagnosed("example:peermem-race"))
    assert "gpusleuth.analysis.diagnose" in loaded  # the diagnosis did run
    assert not loaded & set(INPUT_ONLY), sorted(loaded & set(INPUT_ONLY))
    assert not any(m.startswith("xml.") for m in loaded)


def test_archives_and_toml_still_load_their_modules_where_they_are_read(tmp_path):
    """(XML: tests/parsers/test_nvidia_smi.py reads nvidia-smi -q -x, which needs ElementTree where it parses.)"""
    import tarfile

    (tmp_path / "config.toml").write_text('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
                                          'default_runtime_name = "nvidia"\n', encoding="utf-8")
    with tarfile.open(tmp_path / "bundle.tar.gz", "w:gz") as tf:
        tf.add(tmp_path / "config.toml", arcname="etc/containerd/config.toml")
    loaded = _loaded_modules_after(_diagnosed(str(tmp_path / "bundle.tar.gz")))
    assert {"tarfile", "tomllib"} <= loaded


def test_the_command_line_process_settles_its_objects_and_a_caller_keeps_its_collector():
    """In its own process the command freezes what it built (no collection walks it again, none at exit); a program
    that runs the command in-process keeps the collector as it was: enabled, nothing frozen."""
    probe = _diagnosed("example:peermem-race", "import gc\nprint('FROZEN', gc.get_freeze_count(), gc.isenabled())\n")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120).stdout
    frozen, enabled = out.split("FROZEN", 1)[1].split()
    assert int(frozen) > 10_000 and enabled == "True"  # the modules at least

    import gc

    from click.testing import CliRunner

    from gpusleuth.cli import cli

    before = gc.get_freeze_count()
    result = CliRunner().invoke(cli, ["diagnose", "example:peermem-race", "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    assert gc.isenabled() and gc.get_freeze_count() == before


def test_markdown_and_html_reports_do_not_load_rich_and_the_terminal_one_loads_no_table_it_does_not_draw():
    """`decisive` lives in report/decisive.py, so the Markdown and HTML reports no longer import the terminal
    renderer (and rich) for it; the terminal report imports rich's tables only for the fleet and component tables."""
    for fmt in ("markdown", "html"):
        loaded = _loaded_modules_after(_diagnosed("example:peermem-race").replace("'json'", repr(fmt)))
        assert f"gpusleuth.report.{'markdown' if fmt == 'markdown' else 'html'}" in loaded
        assert not {m for m in loaded if m == "rich" or m.startswith("rich.")}, fmt
    loaded = _loaded_modules_after(_diagnosed("example:peermem-race").replace("'json'", "'text'"))
    assert "rich.console" in loaded and "gpusleuth.report.text" in loaded
    assert "rich.table" not in loaded  # this report has a cascade, no component table and no fleet
