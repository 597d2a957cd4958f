"""`starts` gives the str offsets of an RE2 pattern's matches whether the text is ASCII (searched as bytes) or not."""

from __future__ import annotations

import re2

from gpusleuth.knowledge.message_catalogue import starts


def _expected(pattern: str, text: str) -> list[int]:
    return [m.start() for m in re2.compile(pattern).finditer(text)]


def test_ascii_text_gives_the_same_offsets_as_a_str_search():
    text = "ok\nstat: cannot stat x: No such file\nfine\nFailed to start: exit status 1\n" * 50
    for pattern in (r"(?m)cannot|No such|exit status \d", r"(?m)^Failed", r"(?m)fine$", "never there"):
        assert list(starts(re2.compile(pattern), text)) == _expected(pattern, text)
    assert list(starts(re2.compile(r"(?m)^Failed"), text))[:2] == [text.index("Failed"), text.index("Failed", text.index("Failed") + 1)]


def test_non_ascii_text_gives_character_offsets():
    text = "größe ✓ error one\nnaïve — error two\n"
    got = list(starts(re2.compile("error"), text))
    assert got == [text.index("error"), text.index("error", text.index("error") + 1)]
    assert [text[p:p + 5] for p in got] == ["error", "error"]
