"""Whole-pipeline robustness: the bundled incidents cut, shuffled, garbled and re-encoded must never make a
parser, view or check fail with an internal error (the exception model turns bad data into gaps)."""

import random

import pytest

from gpusleuth.analysis.diagnose import diagnose
from gpusleuth.sources import example_names, examples_root
from gpusleuth.sources.loose import read_directory

GARBAGE = ["\x00\x01\x02", "}}}{{{", "[[[[", "-----", "NAME", "Events:", "  State:  ", "E1121", "time=", "+ ", "\ufffd" * 20,
           "version = 3", "apiVersion: v1", "kind: Pod", "| NVIDIA-SMI", "NVRM: Xid (PCI:0000:ZZ:00): 79,", "[  ]"]


def _mangle(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(5)
        if not lines:
            break
        i = rng.randrange(len(lines))
        if op == 0:
            lines = lines[: rng.randrange(len(lines) + 1)]  # truncated paste
        elif op == 1:
            del lines[i : i + rng.randint(1, 20)]  # lost lines
        elif op == 2:
            lines.insert(i, rng.choice(GARBAGE))  # garbage line
        elif op == 3:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]  # a line cut short
        else:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]  # out of order
    out = "\n".join(lines)
    if rng.random() < 0.2:
        out = out.replace("\n", "\r\n")
    if rng.random() < 0.2:
        out = "\n".join("> " + ln for ln in out.split("\n"))
    return out


@pytest.mark.parametrize("name", example_names())
@pytest.mark.parametrize("seed", range(8))
def test_mangled_example_gives_no_internal_error(tmp_path, name, seed):
    rng = random.Random(f"{name}-{seed}")
    for path in sorted((examples_root() / name).iterdir()):
        text = path.read_text(encoding="utf-8")
        if path.name != "example.toml" and rng.random() < 0.6:
            text = _mangle(text, rng)
        (tmp_path / path.name).write_text(text, encoding="utf-8")
    report = diagnose(read_directory(tmp_path))
    errors = [c for c in report.checks if c.status == "error"]
    assert not errors, errors
    assert not [g for g in report.gaps if g.what == "gpusleuth" or "internal error" in g.why], [str(g) for g in report.gaps]
