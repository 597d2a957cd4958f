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
