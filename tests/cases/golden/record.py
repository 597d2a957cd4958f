"""Re-record the golden JSON reports of the bundled examples (tests/cases/test_golden_reports.py compares).

    PYTHONPATH=src python tests/cases/golden/record.py

Run it only when a report is meant to change (a new check, a better explanation), and review the diff:
these files pin that performance work and refactors leave every result byte-identical.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/, for the golden helpers

from golden import EXAMPLES, golden_path, stable_report  # noqa: E402


def main() -> None:
    for name in EXAMPLES:
        path = golden_path(name)
        path.write_text(json.dumps(stable_report(f"example:{name}"), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
