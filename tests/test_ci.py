"""CI runs exactly what the README tells a contributor to run: set-up command 2, system packages first."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", readme, re.S)]


def test_ci_runs_the_readme_test_command_word_for_word() -> None:
    command = readme_commands()[1]
    lines = ROOT.joinpath(".ci/run").read_text(encoding="utf-8").splitlines()
    runs = [line for line in lines if line and not line.startswith(("#", "set ", "cd "))]
    assert runs == [command]


def test_the_test_command_installs_every_system_package_the_tests_drive() -> None:
    command = readme_commands()[1]
    installs = re.search(r"apt-get install -y -qq ([^&]+)", command)
    assert installs is not None
    assert {"chromium", "postgresql"} <= set(installs.group(1).split())
    assert "ruff check . && ruff format --check . && python -m pytest" in command
