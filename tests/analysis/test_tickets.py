"""Tickets as people write them (tests/cases/tickets/README.md names the public thread behind each): each reaches
the right layer, and the fix names the platform's real paths."""

from pathlib import Path

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.sources.loose import read_directory

TICKETS = Path(__file__).parent.parent / "cases" / "tickets"


def _report(name: str, tmp_path: Path):
    for f in (TICKETS / name).iterdir():
        (tmp_path / f.name).write_text(f.read_text())
    return diagnose(read_directory(tmp_path))


def _roots(report):
    return [f for f in report.findings if f.role.value == "root-cause"]


def _fix_text(f) -> str:
    return "\n".join(x.description + "\n" + "\n".join(x.commands) + "\n" + (x.snippet or "") for x in f.fixes)


def test_prose_only_k3s(tmp_path):
    r = _report("k3s-prose", tmp_path)
    first = _roots(r)[0]
    assert first.code == "RT080" and first.layer.value == "container-runtime" and first.confidence < 0.5
    assert "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl" in _fix_text(first)
    assert {a["kind"] for a in r.artifacts} == {"prose"}  # the report says the ticket contributed only prose
    assert any("read as prose only" in str(g) for g in r.gaps)


def test_prose_plus_one_log_on_microk8s(tmp_path):
    r = _report("microk8s-prose-and-log", tmp_path)
    roots = _roots(r)
    # the log line alone points at the runtime setup (toolkit or runtime); the sentences say which containerd
    assert roots[0].code == "RT111" and roots[0].layer.value == "container-runtime"
    assert "/var/snap/microk8s/current/args/containerd-template.toml" in _fix_text(roots[0])
    assert "/var/snap/microk8s/common/run/containerd.sock" in _fix_text(roots[0])
    assert "RT080" in {f.code for f in r.findings}  # the sentences still count, behind the plugin's own line


def test_values_fragment_inside_prose_on_rke2(tmp_path):
    r = _report("rke2-values-fragment", tmp_path)
    first = _roots(r)[0]
    assert first.code == "TK003" and first.layer.value == "container-toolkit"
    assert [e.cite() for e in first.evidence][0] == "ticket.md:6"
    assert "config.toml.tmpl" in _fix_text(first) and "/run/k3s/containerd/containerd.sock" in _fix_text(first)


def test_set_flags_on_eks(tmp_path):
    r = _report("eks-set-flags", tmp_path)
    assert [a["kind"] for a in r.artifacts] == ["prose", "helm.set-flags"]
    first = _roots(r)[0]
    assert first.code == "TK002" and first.layer.value == "container-toolkit"
    assert first.evidence[0].cite() == "install.txt:12" and "--set-string" in _fix_text(first)


@pytest.mark.parametrize("content, recognised", [(b"", 0), (b"\x00\x01\x02binary", 0), (b"The GPU nodes are new.\n", 1)])
def test_only_empty_or_binary_input_is_unreadable(tmp_path, content, recognised):
    (tmp_path / "paste.txt").write_bytes(content)
    assert diagnose(read_directory(tmp_path)).source.get("recognised", 0) == recognised
