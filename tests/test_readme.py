"""The README's two commands are the contract with a newcomer; CI must run the same test command."""

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent


def _commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text(encoding="utf-8"))


def test_readme_opens_with_install_and_test_commands():
    install, test = _commands()[:2]
    assert "pip install" in install and "gpusleuth diagnose example:" in install
    assert "pytest" in test


def test_ci_runs_exactly_the_readme_test_command():
    test = _commands()[1]
    assert test in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
