"""Every bundled example's JSON report is exactly the recorded one (tests/cases/golden/, re-recorded only on
purpose with tests/cases/golden/record.py): speed-ups and refactors must not change a single result."""

import json

import pytest
from golden import EXAMPLES, golden_path, stable_report


@pytest.mark.parametrize("name", EXAMPLES)
def test_report_is_identical_to_the_golden_one(name):
    expected = json.loads(golden_path(name).read_text(encoding="utf-8"))
    assert stable_report(f"example:{name}") == expected
