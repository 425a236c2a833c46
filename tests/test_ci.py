"""CI runs exactly what the README tells a contributor to run: set-up command 2, lint first."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command_word_for_word() -> None:
    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    commands = re.findall(r"```sh\n\s*(python3 -m venv .*?)\n\s*```", readme)
    ci = [
        line for line in ROOT.joinpath(".ci/run").read_text(encoding="utf-8").splitlines() if line.startswith("python3")
    ]
    assert len(commands) >= 2 and ci == [commands[1]]
    assert "ruff check . && ruff format --check . && python -m pytest" in ci[0]
