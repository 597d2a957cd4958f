"""The incident corpus (tests/cases/incidents, tests/cases/healthy): its shape, and what gpusleuth must never do on it.

Every failing incident comes in three renditions (the full paste, the one telling artifact, the reporter's
words): none may be answered HEALTHY. A rendition that holds an error-level line may not be answered NO VERDICT
either. Healthy cases must not raise an alarm. bench/accuracy.py scores the layers; the floors below are the
figures this revision reached (docs/acceptance.md), so that a change that loses ground fails here.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

import pytest
from corpus import accuracy


LAYERS = {"hardware", "firmware", "kernel-driver", "userspace-driver", "cuda-runtime", "container-toolkit", "container-runtime",
          "device-plugin", "feature-discovery", "operator", "scheduler", "workload"}
INCIDENTS = accuracy.incidents()
HEALTHY = accuracy.healthy_cases()
# top-1 layer agreement over all renditions (tuned, held out) that this revision reached: never less
FLOOR = {False: 0.82, True: 0.61}


def _meta(folder: Path) -> dict:
    return tomllib.loads((folder / "incident.toml").read_text(encoding="utf-8"))


def test_the_corpus_is_large_and_varied():
    assert len(INCIDENTS) >= 60 and len(HEALTHY) >= 5
    assert len({_meta(f)["layer"] for f in INCIDENTS}) >= 8
    held = [f for f in INCIDENTS if accuracy.held_out(f.name)]
    assert len(INCIDENTS) / 4 < len(held) < len(INCIDENTS) / 2


@pytest.mark.parametrize("folder", INCIDENTS, ids=lambda f: f.name)
def test_an_incident_has_its_three_renditions_and_its_source(folder):
    meta = _meta(folder)
    assert meta["source"].startswith("https://github.com/")
    assert meta["layer"] in LAYERS and set(meta.get("also_layers", [])) <= LAYERS
    assert meta["root_cause"].strip() and meta["fix"].strip() and meta.get("failing", True)
    assert any((folder / "full").iterdir())
    assert len(list((folder / "telling").iterdir())) == 1
    assert (folder / "words.txt").read_text(encoding="utf-8").strip()


@cache
def _answers():
    return accuracy.run()


@pytest.mark.parametrize("folder", INCIDENTS, ids=lambda f: f.name)
def test_a_failing_incident_is_never_answered_healthy(folder):
    failing, _ = _answers()
    mine = [a for a in failing if a.slug == folder.name]
    assert len(mine) == 3
    for a in mine:
        assert a.verdict != "healthy", f"{a.slug} [{a.rendition}] answered HEALTHY"


@pytest.mark.parametrize("folder", HEALTHY, ids=lambda f: f.name)
def test_a_healthy_case_raises_no_alarm(folder):
    _, healthy = _answers()
    a = next(a for a in healthy if a.slug == folder.name)
    assert a.verdict not in ("broken", "failing"), f"{a.slug}: {a.verdict} {a.first}"


@pytest.mark.parametrize("held", [False, True], ids=["tuned", "held-out"])
def test_layer_agreement_does_not_fall_below_its_floor(held):
    failing, _ = _answers()
    mine = [a for a in failing if a.held_out == held]
    assert sum(a.top1 for a in mine) / len(mine) >= FLOOR[held]
