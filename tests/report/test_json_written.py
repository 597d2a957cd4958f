"""`diagnose --format json` writes the report as it is encoded; what it writes, to stdout or to a file, is render()."""

import re

from click.testing import CliRunner

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.cli import cli
from gpusleuth.report.json_report import render
from gpusleuth.sources import open_source


def _blank(text: str) -> str:
    return re.sub(r'"analysed_at": "[^"]*"', '"analysed_at": ""', text, count=1)


def test_cli_json_is_the_rendered_report(tmp_path):
    expected = _blank(render(diagnose(open_source("example:peermem-race"))))
    out = CliRunner().invoke(cli, ["diagnose", "example:peermem-race", "--format", "json"])
    assert out.exit_code in (0, 1), out.output
    assert _blank(out.stdout) == expected
    target = tmp_path / "r.json"
    out = CliRunner().invoke(cli, ["diagnose", "example:peermem-race", "--format", "json", "-o", str(target)])
    assert out.exit_code in (0, 1), out.output
    assert _blank(target.read_text(encoding="utf-8")) == expected
