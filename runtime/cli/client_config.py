"""`loci serve --print-config`: the snippet an MCP client needs to launch (or reach) this server, ready to paste.

Each client reads its own shape (`CLIENTS`): most (Claude Desktop, Cursor,
Windsurf, the generic form) an `mcpServers` object; Claude Code's `.mcp.json`
the same with a `type`; VS Code `servers` with a `type`; Codex a TOML table
`[mcp_servers.loci]` in its `config.toml`. The command is the absolute path
of the `loci` executable when there is one (a client launches it without the
user's shell, so without `PATH` edits), else the running Python with
`-P -m loci.runtime.cli.main` (`-P`: the folder it starts in is not on its
path). The arguments are the serve flags given on this command line, minus
the printing ones, with paths made absolute, and always
name the project (`--project`) and the folders whose files the server may
load (`--root`: those given, else the folder the command runs in), so a
pasted server can load files at once and serves the project it was printed
for. `config_note` says so in one line, and where the snippet goes.

Over HTTP the snippet holds the URL and, always, an `Authorization` header
that reads the token from the client's environment variable `LOCI_TOKEN`
(`bearer_token_env_var` for Codex), whether or not this command was given a
token: the server it reaches may need one (a `--token-file`, or the home's
`loci tokens`), and a token is never printed.

Codex runs `codex exec` with the approval policy `never`, under which an MCP
tool that asks for approval is refused, so its table sets
`default_tools_approval_mode = "approve"`: the memory tools run without a
prompt (they read and write only Loci's home); `startup_timeout_sec` gives
the server time to answer on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from loci.memory.location import shown
from loci.runtime.cli.flags import project_of

__all__ = ["CLIENTS", "client_config", "config_note", "launch_command", "render_config", "serve_roots"]

# Where each client reads the snippet from.
WHERE = {
    "generic": "the client's mcpServers settings",
    "claude-desktop": "claude_desktop_config.json (Settings > Developer > Edit Config)",
    "claude-code": ".mcp.json in the project (or `claude mcp add-json loci '<the loci entry>'`)",
    "cursor": "~/.cursor/mcp.json, or .cursor/mcp.json in the project",
    "windsurf": "~/.codeium/windsurf/mcp_config.json",
    "vscode": ".vscode/mcp.json in the workspace",
    "codex": "~/.codex/config.toml, or .codex/config.toml in a trusted project",
}
CLIENTS = tuple(WHERE)


def launch_command() -> tuple[str, list[str]]:
    """How to start `loci`: the installed script if it is on PATH, else this Python with `-m loci.runtime.cli.main`."""
    found = shutil.which("loci")
    if found:
        return str(Path(found).resolve()), []
    return sys.executable, ["-P", "-m", "loci.runtime.cli.main"]  # -P: a project's own `loci/` cannot shadow Loci's


def serve_roots(args: argparse.Namespace) -> list[str]:
    """The folders the printed server may load files from: the `--root`s given, else the current folder."""
    return [str(Path(root).expanduser().resolve()) for root in args.root or [Path.cwd()]]


def serve_args(args: argparse.Namespace, tools: tuple[str, ...], db: str | Path) -> list[str]:
    argv = ["serve"]
    if args.compat:
        argv += ["memory", "--compat"]
    elif args.tools or args.parts:
        argv += ["--tools", ",".join(tools)]
    argv += ["--db", _where(db), "--project", project_of(args)]
    if not args.compat:
        for root in serve_roots(args):
            argv += ["--root", root]
        argv += ["--model", args.model]
    if args.mcp_config:
        argv += ["--mcp-config", str(Path(args.mcp_config).resolve())]
    return argv


def client_config(args: argparse.Namespace, tools: tuple[str, ...], db: str | Path) -> dict[str, Any]:
    """The snippet for `args.client`, as the object its file holds (Codex's as the TOML table's content)."""
    name = "loci-memory" if args.compat else "loci"
    client = args.client
    if args.http:
        host = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
        entry: dict[str, Any] = {"url": f"http://{host}:{args.port}/mcp"}
        if client == "codex":
            entry["bearer_token_env_var"] = "LOCI_TOKEN"
        else:  # the client reads the token from its own environment (VS Code spells that `${env:NAME}`)
            variable = "${env:LOCI_TOKEN}" if client == "vscode" else "${LOCI_TOKEN}"
            entry["headers"] = {"Authorization": f"Bearer {variable}"}
        if client in ("vscode", "claude-code"):
            entry = {"type": "http", **entry}
    else:
        command, prefix = launch_command()
        entry = {"command": command, "args": [*prefix, *serve_args(args, tools, db)]}
        if client in ("vscode", "claude-code"):
            entry = {"type": "stdio", **entry}
    if client == "codex":
        entry |= {"default_tools_approval_mode": "approve", "startup_timeout_sec": 30}
    key = {"vscode": "servers", "codex": "mcp_servers"}.get(client, "mcpServers")
    return {key: {name: entry}}


def render_config(config: dict[str, Any], client: str) -> str:
    """The text to paste: JSON, or for Codex a TOML table (its strings written as JSON strings, which TOML reads)."""
    if client != "codex":
        return json.dumps(config, indent=2)
    [(name, entry)] = config["mcp_servers"].items()
    lines = [f"[mcp_servers.{name}]"]
    for key, value in entry.items():
        shown = "[" + ", ".join(json.dumps(v) for v in value) + "]" if isinstance(value, list) else json.dumps(value)
        lines.append(f"{key} = {shown}")
    return "\n".join(lines)


def _where(db: str | Path) -> str:
    """The home as the printed server is given it: a file's absolute path, or a connection string as given."""
    return str(db.resolve()) if isinstance(db, Path) else db


def config_note(args: argparse.Namespace, db: str | Path) -> str:
    """One line for stderr: which project and home the snippet serves, what it may load, where it goes."""
    if args.http:
        return f"loci: reaches the server `loci serve --http` runs on port {args.port}; paste into {WHERE[args.client]}"
    reads = "" if args.compat else f", loading files under {', '.join(serve_roots(args))}"
    home = db.resolve() if isinstance(db, Path) else shown(db)
    return f"loci: serves project {project_of(args)} of {home}{reads}; paste into {WHERE[args.client]}"
