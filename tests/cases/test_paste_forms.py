"""The same artifacts pasted the ways people paste them (accuracy.PASTE_FORMS: quoted, between sentences fenced or not,
CRLF, HTML-escaped, in a wiki block, indented, with typographic quotes, in chat fences, in <details>, with terminal
colours, numbered by cat -n, with no-break or zero-width spaces, with trailing blanks; every text file of every
rendition re-pasted) get the answer the plain paste gets: a class must fire on the evidence, not on the
rendition. Tuned incidents only; bench/accuracy.py --pastes reports the held-out ones."""

from __future__ import annotations

import pytest
from corpus import accuracy

TUNED = [f for f in accuracy.incidents() if not accuracy.held_out(f.name)]


@pytest.mark.parametrize("rendition", accuracy.RENDITIONS)
@pytest.mark.parametrize("folder", TUNED, ids=lambda f: f.name)
def test_every_paste_form_gets_the_plain_pastes_answer(folder, rendition):
    got = accuracy.pasted_forms(folder, rendition)
    if got is None:
        pytest.skip(f"no {rendition} rendition")
    plain, forms = got
    for name, a in forms.items():
        assert (a.layers[:1], a.verdict) == (plain.layers[:1], plain.verdict), (name, plain.first, a.first)
