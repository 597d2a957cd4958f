"""Tickets written as sentences (the shapes people use in public issue threads), read the way a user's paste is."""

from __future__ import annotations

from failure_fixtures import facts_from, run

from gpusleuth.facts.prose import STATED_CONFIDENCE

NOTHING_WRONG = "The cluster runs Ubuntu 22.04 with driver 550.54.15 and GPU Operator v24.9.2.\nWe plan to add two more GPU nodes next month.\n"


def stated(code: str, text: str, name: str = "ticket.txt"):
    """The findings of one stated-symptom check on a ticket that holds nothing but these sentences."""
    return run(code, facts_from({name: text}))


def assert_stated(f, line: int, artifact: str = "ticket.txt") -> None:
    """A finding built on a sentence: low confidence, says so, cites the sentence's line, says how to confirm."""
    assert f.confidence == STATED_CONFIDENCE
    assert f.facts["stated"] is True and "what a person wrote" in f.explanation
    assert f.evidence[0].artifact.endswith(artifact) and f.evidence[0].line == line
    assert any(fx.commands for fx in f.fixes), "names the commands that would confirm it"
