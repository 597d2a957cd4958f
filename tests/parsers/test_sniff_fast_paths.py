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


def _containerd_sniff_as_it_was(doc):
    """containerd_config.sniff before it stopped looking for key words that could not count."""
    from gpusleuth.parsers import containerd_config as cc
    from gpusleuth.parsers.base import LIKELY, NO, SURE, WEAK

    if cc._DUMP.match(doc.command or ""):
        return SURE
    head = doc.lines[:400]
    blob = "\n".join(head)
    if "[crio" in blob and any(map(cc._CRIO_HEADER.match, head)):
        return NO
    if "plugins" in blob and any(map(cc._PLUGIN_HEADER.match, head)):
        return SURE
    versioned = "version" in blob and any(map(cc._VERSION_LINE.match, head))
    keys = any(k in blob for k in cc._CONTAINERD_KEY_WORDS) and any(map(cc._CONTAINERD_KEYS.match, head))
    if versioned and keys:
        return LIKELY
    hint = (doc.path_hint or doc.artifact).lower()
    if "containerd" in hint and hint.endswith((".toml", ".tmpl")) and (versioned or keys):
        return LIKELY
    if "containerd" in hint and hint.endswith((".toml", ".tmpl")):
        return WEAK
    return NO


def test_containerd_sniff_answers_as_before():
    from gpusleuth.model.document import Document
    from gpusleuth.parsers.containerd_config import sniff
    from gpusleuth.sources import examples_root, open_source

    docs = [d for e in sorted(examples_root().iterdir()) if e.is_dir() for d in open_source(str(e)).documents]
    rnd = random.Random(5)
    parts = ["version = 2", "version = 3", "imports = []", "[grpc]", "oom_score = 0", "[debug]", "[metrics]", "x = 1",
             "[plugins]", "[crio.runtime]", "", "# version", "[proxy_plugins]"]
    for i in range(3000):
        name = rnd.choice(["config.toml", "containerd/config.toml", "etc/containerd/config.toml.tmpl", "a.log", "x"])
        docs.append(Document(name, tuple(rnd.choice(parts) for _ in range(rnd.randint(0, 6)))))
    assert len(docs) > 3000
    for d in docs:
        assert sniff(d) == _containerd_sniff_as_it_was(d), (d.artifact, d.lines[:6])
