"""`loci serve --print-config`: each client's snippet parsed as that client reads it, and launched as it would be."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from loci.runtime.cli.client_config import CLIENTS

OPEN = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "paste", "version": "0"}}


def _print_config(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "loci.runtime.cli.main", "serve", "--print-config", *args]
    env = {**os.environ, "LOCI_HOME": str(folder / "home")}
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=folder, env=env)


def _entry(client: str, text: str) -> dict:
    """The `loci` server of a snippet, read as `client` reads its file."""
    if client == "codex":
        return tomllib.loads(text)["mcp_servers"]["loci"]
    return json.loads(text)["servers" if client == "vscode" else "mcpServers"]["loci"]


def _flag(args: list[str], name: str) -> list[str]:
    return [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == name]


@pytest.mark.parametrize("client", CLIENTS)
def test_a_pasted_stdio_config_serves_this_folder_and_project(client: str, tmp_path: Path) -> None:
    folder = tmp_path / "my project"
    folder.mkdir()
    done = _print_config(folder, "--client", client, "--project", "shop")
    assert done.returncode == 0, done.stderr
    entry = _entry(client, done.stdout)
    assert entry.get("type", "stdio") == "stdio"
    assert _flag(entry["args"], "--root") == [str(folder.resolve())]
    assert _flag(entry["args"], "--project") == ["shop"]
    assert _flag(entry["args"], "--db") == [str((folder / "home" / "loci.db").resolve())]
    assert done.stderr == (
        f"loci: serves project shop of {(folder / 'home' / 'loci.db').resolve()}, loading files under"
        f" {folder.resolve()}; paste into {done.stderr.split('paste into ')[1]}"
    )
    opening = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": OPEN}) + "\n"
    launched = subprocess.run(
        [entry["command"], *entry["args"]], input=opening, capture_output=True, text=True, timeout=300
    )
    assert launched.returncode == 0, launched.stderr
    assert json.loads(launched.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "loci"


def test_the_roots_given_replace_the_folder(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    done = _print_config(tmp_path, "--root", str(one), "--root", str(two))
    assert _flag(_entry("generic", done.stdout)["args"], "--root") == [str(one), str(two)]
    assert _flag(_entry("generic", done.stdout)["args"], "--project") == ["default"]


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("given", [True, False], ids=["token-file", "no-token-given"])
def test_a_pasted_http_config_reads_the_token_from_the_environment(client: str, given: bool, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret-token-of-some-length\n", encoding="utf-8")
    flags = ["--token-file", str(token)] if given else []  # the server it reaches may use the home's tokens
    done = _print_config(tmp_path, "--client", client, "--http", "--port", "9999", *flags)
    assert done.returncode == 0, done.stderr
    entry = _entry(client, done.stdout)
    assert entry["url"] == "http://127.0.0.1:9999/mcp" and "s3cret" not in done.stdout
    if client == "codex":
        assert entry["bearer_token_env_var"] == "LOCI_TOKEN"
    else:
        variable = "${env:LOCI_TOKEN}" if client == "vscode" else "${LOCI_TOKEN}"
        assert entry["headers"] == {"Authorization": f"Bearer {variable}"}
    assert entry.get("type") == ("http" if client in ("vscode", "claude-code") else None)


@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
def test_codexs_table_approves_the_memory_tools_so_codex_exec_can_call_them(http: bool, tmp_path: Path) -> None:
    done = _print_config(tmp_path, "--client", "codex", *(["--http"] if http else []))
    entry = _entry("codex", done.stdout)
    assert entry["default_tools_approval_mode"] == "approve" and entry["startup_timeout_sec"] >= 30
