"""Sniffers that moved their per-line tests into compiled patterns answer as the Python tests they replace."""

import random

from gpusleuth.parsers.helm import _OBJECT_LINE
from gpusleuth.parsers.kubectl_describe import _EVENTS_HEADER


def test_object_line_is_lstrip_startswith_and_not_a_space():
    rnd = random.Random(1)
    parts = [" ", "\t", "\u3000", "\x0b", "apiVersion:", "kind:", "kind", "x", ":", "\xa0", "\x1c"]
    for _ in range(50000):
        s = "".join(rnd.choice(parts) for _ in range(rnd.randint(0, 5)))
        old = s.lstrip().startswith(("apiVersion:", "kind:")) and not s.startswith(" ")
        assert old == bool(_OBJECT_LINE.match(s)), repr(s)


def test_events_header_is_the_first_five_words():
    rnd = random.Random(2)
    ws = [" ", "\t", "\u3000", "\xa0", "\x1c", "\x85", "\x0b", "", "  "]
    toks = ["Type", "Reason", "Age", "From", "Message", "Messages", "x", "Message:"]
    hits = 0
    for _ in range(50000):
        seq = (["Type", "Reason", "Age", "From"] if rnd.random() < 0.7 else []) + [rnd.choice(toks) for _ in range(rnd.randint(0, 3))]
        s = rnd.choice(ws) + "".join(t + rnd.choice(ws) for t in seq)
        old = s.split()[:5] == ["Type", "Reason", "Age", "From", "Message"]
        hits += old
        assert old == bool(_EVENTS_HEADER.match(s)), repr(s)
    assert hits > 1000


def test_document_head_is_the_first_non_blank_lines_whatever_was_asked_before():
    from itertools import islice

    from gpusleuth.model.document import Document

    rnd = random.Random(4)
    docs = [Document(f"d{i}", tuple(rnd.choice(["", "  ", "x", "y z", "\t"]) for _ in range(rnd.randint(0, 300)))) for i in range(40)]
    for _ in range(3000):
        d = rnd.choice(docs)
        n = rnd.choice([0, 1, 2, 3, 40, 80, 100, 127, 128, 129, 200, 400])
        got = d.head(n)
        assert got == list(islice(filter(str.strip, d.lines), max(n, 1)))
        got.append("changed")  # a caller's list is its own
        assert d.head(n) == list(islice(filter(str.strip, d.lines), max(n, 1)))
