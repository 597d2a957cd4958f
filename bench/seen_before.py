"""How long does matching a source against the public incidents take, and which line similarity to use?

Builds the synthetic must-gather of bench/bench_diagnose.py (N GPU nodes, default 20), reads it into facts
once, and times in the same run:

  baseline-substring  every corpus line looked for verbatim in every query line (`line in text`): what a
                      plain search of the corpus would cost, and the floor any matcher is compared with
  query               gathering the query from views the checks build anyway (error lines, logs, versions):
                      normalising the error lines and the lines logs end with
  match-rapidfuzz     analysis/seen_before.py match() with rapidfuzz's partial alignment (the one shipped)
  match-own           the same ranking with token_dice, a word-set similarity in a few lines of our own
  diagnose (scale)    the whole diagnosis of the bundle, matching included, for scale
  paste               one pasted error line matched against the whole corpus (acceptance: under 50 ms)

and, for both similarities, self-retrieval over the corpus: how often an incident's own lines, with their
variable parts changed, rank it first; then a leave-one-out run (each incident's own entry removed before
matching it, and kept: retrieval off and on): how often a match is shown at all and the best one is on the incident's layer, component or failure class. Timings vary on shared 2-core machines: compare within one run.
Usage: python bench/seen_before.py [--nodes 20] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_diagnose import best, build  # noqa: E402

from gpusleuth.analysis.diagnose import build_facts  # noqa: E402
from gpusleuth.analysis.seen_before import Query, index, match, query_of, similarity, token_dice  # noqa: E402
from gpusleuth.knowledge.incidents import incidents  # noqa: E402
from gpusleuth.model.evidence import Evidence  # noqa: E402
from gpusleuth.sources import open_source  # noqa: E402

PASTE = "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory"


def varied(line: str, n: int) -> str:
    """The line as another cluster would print it: its placeholders filled with other values."""
    return line.replace("…", str(1000 + n))


def self_retrieval(scorer) -> tuple[float, float]:
    """Share of incidents whose own (re-varied) lines rank them first, and in the top three."""
    first = top3 = total = 0
    for n, inc in enumerate(incidents().incidents):
        if not inc.lines:
            continue
        total += 1
        q = Query.from_lines([(varied(ln, n), Evidence("q", 1, ln)) for ln in inc.lines])
        ranked = [m.incident for m in match(q, limit=0, minimum=0, scorer=scorer)]
        first += bool(ranked) and ranked[0] is inc
        top3 += inc in ranked[:3]
    return first / total, top3 / total


def classes() -> dict[str, frozenset[str]]:
    """Each incident's failure classes: the checks whose references name its thread, and its own `class`."""
    from gpusleuth.checks import all_checks

    by_link: dict[str, set[str]] = {}
    for c in all_checks():
        for ref in c.references or ():
            by_link.setdefault(ref.rstrip("/"), set()).add(c.code)
    out = {}
    for inc in incidents().incidents:
        codes = set(by_link.get(inc.link, ())) | ({inc.klass} if inc.klass else set())
        if codes:
            out[inc.id] = frozenset(codes)
    return out


def leave_one_out(retrieval: bool = False) -> dict:
    """Each incident matched against the corpus, its lines' variable parts changed. Retrieval off (the default):
    its own entry removed first, so the answer cannot be the memorised thread; is the best remaining match on
    the same layer, about the same component, of the same failure class (the incidents a check's references
    name)? Retrieval on: its own entry kept, the ceiling. Only the matches a report would show (score >= 0.5)
    count; and the time per match of a whole corpus."""
    corpus = incidents().incidents
    cls = classes()
    n = layer1 = layer3 = comp1 = answered = nc = class1 = class3 = 0
    spent = 0.0
    for i, inc in enumerate(corpus):
        if not inc.lines:
            continue
        n += 1
        rest = corpus if retrieval else corpus[:i] + corpus[i + 1:]
        q = Query.from_lines([(varied(ln, i), Evidence("q", 1, ln)) for ln in inc.lines])
        index(rest)
        t = time.perf_counter()
        ranked = [m.incident for m in match(q, corpus=rest, limit=3)]
        spent += time.perf_counter() - t
        index.cache_clear()
        answered += bool(ranked)
        layer1 += bool(ranked) and ranked[0].layer is inc.layer
        layer3 += any(r.layer is inc.layer for r in ranked)
        comp1 += bool(ranked) and ranked[0].component == inc.component
        if inc.id in cls:
            nc += 1
            hits = [bool(cls.get(r.id, frozenset()) & cls[inc.id]) for r in ranked]
            class1 += bool(hits) and hits[0]
            class3 += any(hits)
    return {"incidents": n, "answered": answered / n, "layer first": layer1 / n, "layer in top 3": layer3 / n,
            "component first": comp1 / n, "with a class": nc, "class first": class1 / max(nc, 1),
            "class in top 3": class3 / max(nc, 1), "ms per match": spent / n * 1000}


def loo_line(loo: dict) -> str:
    return ", ".join(f"{k} {v}" if isinstance(v, int) else f"{k} {v:.2f}" if k == "ms per match" else f"{k} {v:.1%}"
                     for k, v in loo.items())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    corpus_lines = [ln.lower() for inc in incidents().incidents for ln in inc.lines]
    index()  # load the corpus once, outside the timings
    with tempfile.TemporaryDirectory(prefix="gpusleuth-seen-") as tmp:
        root = Path(tmp)
        size = build(root, args.nodes)
        facts = build_facts(open_source(str(root)))
        from gpusleuth.facts import ErrorLines, Logs
        from gpusleuth.facts.inuse import VersionsInUse

        for view in (ErrorLines, Logs, VersionsInUse):  # built for the checks anyway: not matching's cost
            facts.get(view)
        query = query_of(facts)
        texts = [q.text for q in query.lines]

        def baseline():
            return sum(1 for t in texts for c in corpus_lines if c in t)

        timings = {
            "baseline-substring": best(baseline, args.repeat),
            "query": best(lambda: query_of(facts), args.repeat),
            "match-rapidfuzz": best(lambda: match(query), args.repeat),
            "match-own": best(lambda: match(query, scorer=token_dice), args.repeat),
        }
        from gpusleuth.analysis.diagnose import diagnose

        timings["diagnose (scale)"] = best(lambda: diagnose(open_source(str(root))), 1)
        paste = Query.from_lines([(PASTE, Evidence("paste.txt", 1, PASTE))])
        timings["paste"] = best(lambda: match(paste), args.repeat * 4)
    print(f"bundle: {args.nodes} nodes, {size / 1e6:.1f} MB; query: {len(query.lines)} distinct lines; "
          f"corpus: {len(incidents().incidents)} incidents, {len(corpus_lines)} lines")
    for name, t in timings.items():
        ratio = f"  ({t / timings['baseline-substring']:.2f}x baseline)" if name != "baseline-substring" else ""
        print(f"  {name:20s} {t * 1000:8.1f} ms{ratio}")
    for name, scorer in (("rapidfuzz", similarity), ("own", token_dice)):
        f1, f3 = self_retrieval(scorer)
        print(f"  self-retrieval {name:10s} first {f1:.1%}  top-3 {f3:.1%}")
    for on in (False, True):
        print(f"  leave-one-out, retrieval {'on (own entry kept)' if on else 'off (own entry removed)'}: "
              + loo_line(leave_one_out(on)))
    top = [(m.incident.id, round(m.score, 2)) for m in match(query)]
    print("  best matches on the bundle:", top)


if __name__ == "__main__":
    main()
