"""The seed 000-002 incident from pasted artifacts (not the bundled example): the whole pipeline gives
the same diagnosis whatever the files are called, when pasted as Markdown quotes, or tarred."""

import json
import tarfile

import operand_seed as seed
import pytest
from golden import MODPROBE

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.report.json_report import render
from gpusleuth.sources import open_source

MOFED_LOG = f"""\
$ oc logs {seed.MOFED} -n {seed.NET} -c mofed-container
[21-Nov-25_11:51:06] Unsetting driver ready state
[21-Nov-25_11:58:39] Setting driver ready state
"""
FILES = {**seed.FILES, "mofed.log": MOFED_LOG}


def _write(tmp_path, rename=False, quote=False):
    root = tmp_path / "paste"
    root.mkdir()
    for i, (name, text) in enumerate(sorted(FILES.items())):
        if quote:
            text = "".join("> " + ln for ln in text.splitlines(keepends=True))
        (root / (f"f{i}" if rename else name)).write_text(text, encoding="utf-8")
    return root


def _tar(tmp_path):
    root = _write(tmp_path)
    out = tmp_path / "bundle.tgz"
    with tarfile.open(out, "w:gz") as tar:
        tar.add(root, arcname="bundle")
    return out


def _diagnosis(spec) -> dict:
    return json.loads(render(diagnose(open_source(str(spec)))))


@pytest.mark.parametrize("variant", ["as-is", "renamed", "markdown-quoted", "tarred"])
def test_same_root_cause_and_cascade_for_every_way_of_pasting(tmp_path, variant):
    spec = {"as-is": lambda: _write(tmp_path), "renamed": lambda: _write(tmp_path, rename=True),
            "markdown-quoted": lambda: _write(tmp_path, quote=True), "tarred": lambda: _tar(tmp_path)}[variant]()
    rep = _diagnosis(spec)
    root = rep["root_causes"][0]
    assert (root["code"], root["layer"], root["facts"]["cause"]) == ("KD001", "kernel-driver", "mofed-not-ready")
    assert root["facts"]["pod"] == seed.DRIVER
    modprobe = [e for e in root["evidence"] if MODPROBE.search(e["text"])]
    assert modprobe and modprobe[0]["line"] == seed.ERROR_LINE
    states = [c["state"] for c in rep["components"]]
    assert (states.count("failed"), states.count("blocked"), states.count("degraded")) == (1, 7, 1)
    assert all(c["blocked_by"] for c in rep["components"] if c["state"] == "blocked")
    assert rep["verdict"] == "broken"
