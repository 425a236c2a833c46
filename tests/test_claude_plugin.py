"""The Claude Code plugin in `plugin/` (listed by `.claude-plugin/marketplace.json`): it parses, ships only what it
needs, and every command it names runs Loci's, or says what is missing."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from loci.runtime.cli.hooks import CLIENTS
from loci.runtime.cli.main import VERSION, build_parser

ROOT = Path(__file__).parents[1]
PLUGIN_DIR = ROOT / "plugin"
PLUGIN = json.loads((PLUGIN_DIR / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
MARKET = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
TRANSCRIPT = ROOT / "tests" / "memory" / "imports" / "fixtures" / "claude_code.jsonl"
LAUNCHER = '"${CLAUDE_PLUGIN_ROOT}/bin/loci"'


def this_loci(folder: Path) -> Path:
    """A `loci` executable that runs this tree's CLI (what `pip install` puts in a venv's bin/)."""
    script = folder / "bin" / "loci"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        f"#!/bin/sh\nPYTHONPATH={shlex.quote(str(ROOT))} exec {shlex.quote(sys.executable)}"
        ' -m loci.runtime.cli.main "$@"\n'
    )
    script.chmod(0o755)
    return script


def _run(command: str, cwd: Path, home: Path, stdin: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A command of the plugin, run as Claude Code runs it: by the shell, `${CLAUDE_PLUGIN_ROOT}` set."""
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LOCI_HOME": str(home / ".loci"), **env}
    environ["CLAUDE_PLUGIN_ROOT"] = str(PLUGIN_DIR)
    return subprocess.run(
        ["sh", "-c", command], input=stdin, capture_output=True, text=True, timeout=300, cwd=cwd, env=environ
    )


def test_the_marketplace_lists_the_plugin_folder_which_holds_only_the_plugin() -> None:
    [entry] = MARKET["plugins"]
    assert MARKET["name"] and MARKET["owner"]["name"]
    assert (ROOT / entry["source"]).resolve() == PLUGIN_DIR.resolve()
    assert entry["name"] == PLUGIN["name"] == "loci" and entry["version"] == PLUGIN["version"] == VERSION
    shipped = sorted(str(p.relative_to(PLUGIN_DIR)) for p in PLUGIN_DIR.rglob("*") if p.is_file())
    assert shipped == [".claude-plugin/plugin.json", "bin/loci"]
    assert os.access(PLUGIN_DIR / "bin" / "loci", os.X_OK)
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["loci"] == "loci.runtime.cli.main:main"


def test_the_plugins_hooks_are_the_ones_loci_hooks_install_writes_and_they_run(tmp_path: Path) -> None:
    client = CLIENTS["claude-code"]
    hooks = PLUGIN["hooks"]
    assert set(hooks) == set(client.recall + client.capture)
    commands = {event: [h["command"] for group in groups for h in group["hooks"]] for event, groups in hooks.items()}
    assert all(commands[e] == [f"{LAUNCHER} hook recall"] for e in client.recall)
    assert all(commands[e] == [f"{LAUNCHER} hook capture"] for e in client.capture)
    home, loci = tmp_path / "home", str(this_loci(tmp_path))
    session = {"session_id": "7f0c1d2e-3a4b-4c5d-8e6f-9a0b1c2d3e4f", "transcript_path": str(TRANSCRIPT)}
    stop = json.dumps({**session, "hook_event_name": "Stop"})
    captured = _run(commands["Stop"][0], tmp_path, home, stop, LOCI_BIN=loci)
    assert (captured.returncode, captured.stdout) == (0, "")
    prompt = {"session_id": "next", "hook_event_name": "UserPromptSubmit", "prompt": "Why was the upload test flaky?"}
    recalled = _run(commands["UserPromptSubmit"][0], tmp_path, home, json.dumps(prompt), LOCI_BIN=loci)
    assert recalled.returncode == 0, recalled.stderr
    assert "port 8080" in json.loads(recalled.stdout)["hookSpecificOutput"]["additionalContext"]
    assert not (home / ".loci" / "hooks.log").exists()


def test_without_loci_a_hook_says_what_is_missing_to_the_user_and_to_loci_doctor(tmp_path: Path) -> None:
    home = tmp_path / "home"
    command = PLUGIN["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    done = _run(command, tmp_path, home, json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "x"}))
    assert done.returncode == 0  # a hook never blocks the client
    message = json.loads(done.stdout)["systemMessage"]
    assert "cannot find the loci command" in message and "LOCI_BIN" in message
    assert "cannot find the loci command" in (home / ".loci" / "hooks.log").read_text(encoding="utf-8")
    probed = _run(command, tmp_path, home, "", LOCI_HOOK_PROBE="1")
    assert probed.returncode == 127 and "LOCI_BIN" in probed.stderr
    asked = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}]
    asked.append({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    served = _run(f"{LAUNCHER} serve", tmp_path, home, "".join(json.dumps(line) + "\n" for line in asked))
    opened, listed = (json.loads(line)["result"] for line in served.stdout.splitlines())
    assert served.returncode == 0 and "cannot find the loci command" in opened["instructions"]
    assert [tool["name"] for tool in listed["tools"]] == ["loci_status"]  # a stand-in that says what is missing


def test_the_plugins_mcp_server_starts_in_the_project_and_answers(tmp_path: Path) -> None:
    [(name, server)] = PLUGIN["mcpServers"].items()
    assert name == "loci" and server["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/loci"
    build_parser(server["args"]).parse_args(server["args"])
    opening = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "0"},
    }
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": opening}) + "\n"
    command = shlex.join([server["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(PLUGIN_DIR)), *server["args"]])
    done = _run(command, tmp_path, tmp_path / "home", line, LOCI_BIN=str(this_loci(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"] == {"name": "loci", "version": VERSION}
