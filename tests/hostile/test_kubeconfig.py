"""A bad kubeconfig is one line naming the file, never `internal error: ParserError` over five lines."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from gpusleuth.cli import cli

BAD = {
    "flow.yaml": b"apiVersion: v1\nclusters:\n- cluster: [\n  server: x\n",
    "text.yaml": b"just some text\n",
    "binary": b"\x00\x01\xff\xfe\x80",
    "list.yaml": b"- a\n- b\n",
    "no-cluster.yaml": b"apiVersion: v1\nclusters:\n- name: a\ncontexts:\n- name: c\n  context: {cluster: zz}\ncurrent-context: c\n",
    "clusters-a-string.yaml": b"apiVersion: v1\nclusters: nope\ncontexts: []\n",
}


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("command", ["diagnose", "collect"])
def test_a_bad_kubeconfig_is_one_line_naming_the_file(tmp_path, name, command, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    path = tmp_path / name
    path.write_bytes(BAD[name])
    args = [command, "--kubeconfig", str(path)] + (["-o", str(tmp_path / "b.tar.gz")] if command == "collect" else [])
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 2, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0], out.output
    assert "internal error" not in out.output and "Traceback" not in out.output


def test_the_kubeconfig_variable_is_named_too(tmp_path, monkeypatch):
    path = tmp_path / "config"
    path.write_bytes(BAD["flow.yaml"])
    monkeypatch.setenv("KUBECONFIG", str(path))
    out = CliRunner().invoke(cli, ["diagnose"])
    assert out.exit_code == 2 and str(path) in out.output and "internal error" not in out.output
