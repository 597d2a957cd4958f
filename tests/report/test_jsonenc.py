"""jsonenc.dumps writes what json.dumps(indent=2, ensure_ascii=False, default=str) writes, byte for byte."""

import enum
import json
import math
import random
from datetime import datetime, timezone

import pytest

from gpusleuth.report import jsonenc


def _stdlib(o, indent=2):
    return json.dumps(o, indent=indent, ensure_ascii=False, default=str)


class Colour(str, enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Tagged(dict):
    pass


CASES = [
    {}, [], (), "", 0, -1, 2**80, 1.5, 1e16, -0.0, float("nan"), float("inf"), -math.inf, True, False, None,
    "é ✓ \u2028 \"quoted\" \\ \n\t\x00 {}[],:",
    {"a": {}, "b": [], "c": [[]], "d": [{}], "e": {"f": {"g": None}}},
    {"evidence": [{"artifact": "a/b.log", "line": 3, "text": "x"}, {"artifact": "c", "line": 4, "text": "y\"z"}]},
    {1: "int key", 2.5: "float key", True: "t", False: "f", None: "n", "s": "s"},
    {"when": datetime(2025, 6, 1, tzinfo=timezone.utc), "set": {1}, "enum": Colour.RED, "lvl": Level.HIGH},
    [Colour.RED, Level.HIGH, datetime(2025, 1, 1), {"nested": (1, 2, (3, 4))}],
    Tagged(a=1, b=[Tagged(c=2)]),
    {"mixed": [1, "two", None, [3], {"four": 4}, 5.0]},
]


@pytest.mark.parametrize("value", CASES, ids=range(len(CASES)))
def test_same_bytes_as_the_stdlib(value):
    assert jsonenc.dumps(value) == _stdlib(value)
    assert jsonenc.dumps(value, indent=4) == _stdlib(value, indent=4)


def _random(rnd, depth=0):
    kind = rnd.randrange(9 if depth < 5 else 6)
    if kind == 0:
        return rnd.choice(["", "x", "é\n", '"', "a b", "\\"])
    if kind == 1:
        return rnd.randint(-5, 10**12)
    if kind == 2:
        return rnd.choice([0.1, 2.0, -3e-7, 1e300])
    if kind == 3:
        return rnd.choice([True, False, None])
    if kind == 4:
        return rnd.choice([Colour.RED, Level.HIGH, datetime(2025, 1, 1)])
    if kind == 5:
        return rnd.choice([[], {}, ()])
    if kind in (6, 7):
        return {rnd.choice(["k", "l", "m", 1, 2.5, None]) if rnd.random() < 0.2 else f"k{i}": _random(rnd, depth + 1)
                for i in range(rnd.randint(0, 4))}
    return [_random(rnd, depth + 1) for _ in range(rnd.randint(0, 4))]


def test_random_values():
    rnd = random.Random(3)
    for _ in range(3000):
        v = _random(rnd)
        assert jsonenc.dumps(v) == _stdlib(v)


def test_unsupported_key_is_a_type_error_as_in_the_stdlib():
    for v in ({(1, 2): 1}, {"a": {(1, 2): [1]}}):
        with pytest.raises(TypeError):
            _stdlib(v)
        with pytest.raises(TypeError):
            jsonenc.dumps(v)


def test_reports_of_examples_are_the_stdlib_bytes():
    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.report.json_report import as_dict, render
    from gpusleuth.sources import examples_root, open_source

    names = sorted(d.name for d in examples_root().iterdir() if d.is_dir())[:6]
    for name in names:
        report = diagnose(open_source(str(examples_root() / name)))
        assert render(report) == _stdlib(as_dict(report)) + "\n", name


def test_end_is_appended():
    assert jsonenc.dumps({"a": [1]}, end="\n") == _stdlib({"a": [1]}) + "\n"


def test_pieces_joined_as_they_come_and_written_to_a_file(monkeypatch):
    """A text of many chunks (the chunk made tiny here) is the same bytes, returned or written to a file in pieces."""
    import io

    rnd = random.Random(5)
    values = [_random(rnd) for _ in range(400)] + [{"timeline": [{"a": i, "b": [i, {"c": "x" * i}]} for i in range(300)]}]
    for chunk in (1, 3, 4096):
        monkeypatch.setattr(jsonenc, "_CHUNK", chunk)
        for v in values:
            expected = _stdlib(v) + "\n"
            assert jsonenc.dumps(v, end="\n") == expected
            fh, writes = io.StringIO(), []
            real = fh.write
            fh.write = lambda s: writes.append(s) or real(s)
            jsonenc.write(v, fh, end="\n")
            assert fh.getvalue() == expected
            if chunk == 1 and isinstance(v, dict) and "timeline" in v:
                assert len(writes) > 300  # handed on as it was made, not at the end


def test_report_written_is_the_report_rendered(tmp_path):
    import io

    from gpusleuth.analysis.diagnose import diagnose
    from gpusleuth.report.json_report import render, write
    from gpusleuth.sources import examples_root, open_source

    name = sorted(d.name for d in examples_root().iterdir() if d.is_dir())[0]
    report = diagnose(open_source(str(examples_root() / name)))
    fh = io.StringIO()
    write(report, fh)
    assert fh.getvalue() == render(report)
