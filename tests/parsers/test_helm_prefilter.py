"""The Helm values sniffer's byte test on a big text (no line led by an ASCII letter: no top-level key) answers as
the line-by-line sniff does."""

from __future__ import annotations

import random

from gpusleuth.model.document import Document
from gpusleuth.parsers import helm
from gpusleuth.sources.text import byte_lines, normalise


def test_no_top_key_only_where_no_line_is_a_key():
    rnd = random.Random(5)
    parts = ["  a: 1", "{", '"k": 1,', "\tkey: v", "driver: {}", "toolkit:", "é: x", "_x: 1", "- a", "", "# c", "Zz: 2", "9: x"]
    decided = 0
    for _ in range(3000):
        lines = [rnd.choice(parts) for _ in range(rnd.randint(1, 12))]
        text = "\n".join(lines) + rnd.choice(["", "\n"]) + rnd.choice(["", "x"]) * (not lines[-1] and rnd.random() < 0.2)
        as_lines = tuple(normalise(text, paste=False)[0])  # a piece of a bigger file is not a paste
        big = byte_lines(text, piece=True)  # as a piece of a huge file: any size
        if big is None:
            continue
        assert tuple(big) == as_lines
        if helm._no_top_key(big):
            decided += 1
            assert not helm._top_keys(as_lines), text
        doc_b, doc_s = Document("values.yaml", big), Document("values.yaml", as_lines)
        assert helm.sniff_values(doc_b) == helm.sniff_values(doc_s), text
    assert decided > 300
    assert not helm._no_top_key(("{",))  # only big texts are told from their bytes
