"""The Claude Code plugin in `.claude-plugin/`: its files parse, and every command they name runs as Loci's."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from runtime.cli.hooks import CLIENTS
from runtime.cli.main import VERSION, build_parser

ROOT = Path(__file__).parents[1]
PLUGIN = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
MARKET = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
TRANSCRIPT = ROOT / "tests" / "memory" / "imports" / "fixtures" / "claude_code.jsonl"


def _loci(command: list[str], cwd: Path, home: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    """A command the plugin names, run with this tree's `loci` (the `loci` script runs the same `main`)."""
    assert command[0] == "loci"
    env = {**os.environ, "LOCI_HOME": str(home)}
    argv = [sys.executable, "-m", "runtime.cli.main", *command[1:]]
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


def test_the_marketplace_lists_this_folder_as_the_plugin() -> None:
    [entry] = MARKET["plugins"]
    assert MARKET["name"] and MARKET["owner"]["name"]
    assert (ROOT / entry["source"] / ".claude-plugin" / "plugin.json").resolve() == (
        ROOT / ".claude-plugin" / "plugin.json"
    ).resolve()
    assert entry["name"] == PLUGIN["name"] == "loci" and entry["version"] == PLUGIN["version"] == VERSION
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["loci"] == "runtime.cli.main:main"


def test_the_plugins_hooks_are_the_ones_loci_hooks_install_writes_and_they_run(tmp_path: Path) -> None:
    client = CLIENTS["claude-code"]
    hooks = PLUGIN["hooks"]
    assert set(hooks) == set(client.recall + client.capture)
    commands = {event: [h["command"] for group in groups for h in group["hooks"]] for event, groups in hooks.items()}
    assert all(commands[e] == ["loci hook recall"] for e in client.recall)
    assert all(commands[e] == ["loci hook capture"] for e in client.capture)
    home = tmp_path / "home"
    session = {"session_id": "7f0c1d2e-3a4b-4c5d-8e6f-9a0b1c2d3e4f", "transcript_path": str(TRANSCRIPT)}
    captured = _loci(
        shlex.split(commands["Stop"][0]), tmp_path, home, json.dumps({**session, "hook_event_name": "Stop"})
    )
    assert (captured.returncode, captured.stdout) == (0, "")
    prompt = {"session_id": "next", "hook_event_name": "UserPromptSubmit", "prompt": "Why was the upload test flaky?"}
    recalled = _loci(shlex.split(commands["UserPromptSubmit"][0]), tmp_path, home, json.dumps(prompt))
    assert (
        recalled.returncode == 0
        and "port 8080" in json.loads(recalled.stdout)["hookSpecificOutput"]["additionalContext"]
    )
    assert not (home / "hooks.log").exists()


def test_the_plugins_mcp_server_starts_in_the_project_and_answers(tmp_path: Path) -> None:
    [(name, server)] = PLUGIN["mcpServers"].items()
    assert name == "loci" and server["command"] == "loci"
    build_parser(server["args"]).parse_args(server["args"])
    opening = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "0"},
    }
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": opening}) + "\n"
    done = _loci([server["command"], *server["args"]], tmp_path, tmp_path / "home", line)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"] == {"name": "loci", "version": VERSION}
