"""TK001 reads each failing toolkit pod's lines from an index of logs by the pods their lines name: the lines it
reads, and so the decisive line, are those a pass over every line of every log gives."""

from __future__ import annotations

import sys
from pathlib import Path

from gpusleuth.analysis.diagnose import build_facts
from gpusleuth.checks.container_toolkit import TOOLKIT_CONTAINER, _decisive, _failures, _lines_of, _toolkit_lines
from gpusleuth.facts.logs import Logs
from gpusleuth.model.logs import ContainerLog, LogLine
from gpusleuth.sources import examples_root, open_source

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


def _every_line(logs: Logs, pod: str) -> list[LogLine]:
    """The pod's lines and the toolkit lines that name no pod, in the artifacts' order, by walking every line."""
    return [ln for log in logs.logs for ln in log.lines
            if (who := ln.pod or log.pod) == pod or (who is None and (ln.container or log.container) == TOOLKIT_CONTAINER)]


def _check(logs: Logs) -> int:
    index = _toolkit_lines(logs)
    pods = {ln.pod or log.pod for log in logs.logs for ln in log.lines} | {"no-such-pod"}
    for pod in pods - {None}:
        assert _lines_of(index, pod) == _every_line(logs, pod), pod
        want = None
        for row, rx in _failures():
            hit = next((ln for ln in _every_line(logs, pod) if rx.search(ln.message)), None)
            if hit is not None:
                want = hit.evidence()
                break
        got = _decisive(index, pod)
        assert (got[1] if got else None) == want, pod
    return len(pods)


def test_a_log_of_several_pods_and_toolkit_lines_that_name_none():
    def line(n, msg, pod=None, ctr=None):
        return LogLine("mixed.log", n, msg, msg, pod=pod, container=ctr)

    restart = 'level=error msg="unable to restart containerd: unable to signal process: no such process"'
    mixed = ContainerLog("mixed.log", (line(1, "start", "tk-a", TOOLKIT_CONTAINER), line(2, restart, None, TOOLKIT_CONTAINER),
                                       line(3, restart, "tk-b", TOOLKIT_CONTAINER), line(4, "other", None, "other")))
    own = ContainerLog("own.log", (line(1, restart, None, None),), pod="tk-c", container=TOOLKIT_CONTAINER)
    nobody = ContainerLog("nobody.log", (line(1, restart, None, None), line(2, restart, None, "other")),  # a line of another container
                          container=TOOLKIT_CONTAINER)
    logs = Logs([own, mixed, nobody])
    assert _check(logs) == 5  # tk-a, tk-b, tk-c, a pod no line names, and None
    every, by_pod, shared = _toolkit_lines(logs)
    assert dict(by_pod) == {"tk-c": [0], "tk-a": [1], "tk-b": [1]} and shared == [1, 2]


def test_examples_and_a_fleet(tmp_path):
    from bench_scale import generate

    generate(tmp_path, nodes=9, failing=0.67, lines=30)
    sources = [str(d) for d in sorted(examples_root().iterdir()) if d.is_dir()] + [str(tmp_path)]
    for src in sources:
        facts = build_facts(open_source(src))
        try:
            logs = facts.get(Logs)
        except Exception:  # noqa: BLE001 - a source without logs
            continue
        _check(logs)
