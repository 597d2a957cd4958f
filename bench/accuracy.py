"""How often gpusleuth names the right layer on real incidents, in every rendition, and how often it cries wolf.

    python bench/accuracy.py                 # the table: tuned and held-out incidents apart, healthy cases
    python bench/accuracy.py --misses        # also each incident whose first root cause is on another layer
    python bench/accuracy.py --json out.json # every answer, for comparing two revisions

The corpus is tests/cases/incidents/<slug>/ (incident.toml with the real layer, and three renditions: full/,
telling/, words.txt) and tests/cases/healthy/<slug>/full/. A third of the incidents is held out of tuning:
those whose slug hashes to 0 mod 3 (sha256), a rule nobody can bend to flatter the score. Their figure is
reported apart; nobody changes gpusleuth while looking at them.

Scores, per rendition: top-1 (the first root cause is on the incident's layer or one of its also_layers),
top-3 (one of the first three root causes is), and the answers that tell a user nothing is wrong or nothing
can be said (HEALTHY, NO VERDICT) on an incident that is failing. On healthy cases: false alarms (BROKEN or
FAILING). Runs on any revision whose `diagnose` returns a Report (older revisions said "unknown" for NO VERDICT).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases"
RENDITIONS = ("full", "telling", "words")


def held_out(slug: str) -> bool:
    return int(hashlib.sha256(slug.encode()).hexdigest(), 16) % 3 == 0


@dataclass
class Answer:
    slug: str
    rendition: str
    held_out: bool
    expected: list[str]
    verdict: str
    layers: list[str]  # the root causes' layers, in report order
    first: str | None  # code and title of the first root cause

    @property
    def top1(self) -> bool:
        return bool(self.layers) and self.layers[0] in self.expected

    @property
    def top3(self) -> bool:
        return any(layer in self.expected for layer in self.layers[:3])

    @property
    def silent(self) -> bool:
        return self.verdict in ("healthy", "no-verdict", "unknown")


def _source(folder: Path, rendition: str):
    from gpusleuth.sources.loose import read_directory, read_file

    if rendition == "words":
        return read_file(folder / "words.txt")
    return read_directory(folder / rendition)


def answer(folder: Path, rendition: str) -> Answer:
    from gpusleuth.analysis.diagnose import diagnose

    meta = tomllib.loads((folder / "incident.toml").read_text(encoding="utf-8"))
    report = diagnose(_source(folder, rendition))
    roots = list(report.root_causes)
    return Answer(folder.name, rendition, held_out(folder.name), [meta["layer"], *meta.get("also_layers", [])], report.verdict,
                  [f.layer.value for f in roots], f"{roots[0].code} {roots[0].title}" if roots else None)


def incidents() -> list[Path]:
    return sorted(p for p in (CASES / "incidents").iterdir() if (p / "incident.toml").is_file())


def healthy_cases() -> list[Path]:
    folder = CASES / "healthy"
    return sorted(p for p in folder.iterdir() if (p / "incident.toml").is_file()) if folder.is_dir() else []


def run() -> tuple[list[Answer], list[Answer]]:
    failing = [answer(f, r) for f in incidents() for r in RENDITIONS if (f / ("words.txt" if r == "words" else r)).exists()]
    healthy = [answer(f, "full") for f in healthy_cases()]
    return failing, healthy


def score(answers: list[Answer]) -> dict:
    n = len(answers)
    return {"n": n, "top1": sum(a.top1 for a in answers), "top3": sum(a.top3 for a in answers),
            "healthy": sum(a.verdict == "healthy" for a in answers),
            "no_verdict": sum(a.verdict in ("no-verdict", "unknown") for a in answers)}


def table(failing: list[Answer], healthy: list[Answer]) -> str:
    rows = ["| set | rendition | incidents | top-1 layer | top-3 layer | HEALTHY | NO VERDICT |", "|---|---|---|---|---|---|---|"]
    for name, held in (("tuned", False), ("held out", True)):
        for r in (*RENDITIONS, "all"):
            s = score([a for a in failing if a.held_out == held and (r == "all" or a.rendition == r)])
            if s["n"]:
                rows.append(f"| {name} | {r} | {s['n']} | {s['top1']} ({s['top1'] / s['n']:.0%}) | {s['top3']} ({s['top3'] / s['n']:.0%}) "
                            f"| {s['healthy']} | {s['no_verdict']} |")
    alarms = [a for a in healthy if a.verdict in ("broken", "failing")]
    rows.append("")
    rows.append(f"Healthy cases: {len(healthy)}, answered HEALTHY {sum(a.verdict == 'healthy' for a in healthy)}, "
                f"false alarms (BROKEN/FAILING) {len(alarms)}" + (": " + ", ".join(f"{a.slug} ({a.first})" for a in alarms) if alarms else ""))
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--misses", action="store_true", help="list the tuned incidents whose first root cause is on another layer")
    ap.add_argument("--held-out-misses", action="store_true",
                    help="list the held-out ones too (for the acceptance report only: nobody tunes on them)")
    ap.add_argument("--json", metavar="FILE", help="write every answer as JSON")
    args = ap.parse_args(argv)
    failing, healthy = run()
    print(table(failing, healthy))
    if args.misses:
        print()
        for a in failing:
            if not a.top1 and (not a.held_out or args.held_out_misses):
                print(f"{'H ' if a.held_out else '  '}{a.slug} [{a.rendition}] want {'/'.join(a.expected)}: {a.verdict} "
                      f"{a.layers[:3]} {a.first or ''}"[:220])
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(a) | {"top1": a.top1, "top3": a.top3} for a in failing + healthy], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
