"""The command registry: every listed command exists, and nothing is skipped in silence."""

from __future__ import annotations

import importlib

import pytest

from loci.runtime.cli import main as cli


def test_every_listed_command_module_registers_a_command() -> None:
    parser = cli.build_parser(every=True)
    commands = next(action for action in parser._actions if action.dest == "command").choices
    assert set(commands) == {
        "run",
        "models",
        "doctor",
        "serve",
        "mcp",
        "memory",
        "chat",
        "feedback",
        "digest",
        "jobs",
        "hooks",
        "hook",
        "ui",
        "tokens",
        "worker",
        "home",
        "bench",
    }
    assert set(cli.COMMANDS) == set(commands)
    for name in cli.COMMANDS.values():
        assert callable(importlib.import_module(name).register)


def test_a_listed_command_that_does_not_exist_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "COMMANDS", {**cli.COMMANDS, "nothing": "loci.runtime.cli_no_such_command"})
    with pytest.raises(ModuleNotFoundError, match="loci.runtime.cli_no_such_command"):
        cli.build_parser(every=True)
    with pytest.raises(ModuleNotFoundError, match="loci.runtime.cli_no_such_command"):
        cli.build_parser(["nothing"])


def test_a_command_line_imports_only_its_command() -> None:
    parser = cli.build_parser(["memory", "search", "x"])
    commands = next(action for action in parser._actions if action.dest == "command").choices
    assert set(commands) == {"memory"}
