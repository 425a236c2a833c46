"""`loci serve --print-config`: the snippet an MCP client needs to launch (or reach) this server.

Most clients (desktop assistants, Cursor, Windsurf, the generic form) read an
`mcpServers` object; VS Code reads `servers` with a `type`. The command is
the absolute path of the `loci` executable when there is one (a client
launches it without the user's shell, so without `PATH` edits), else the
running Python with `-m runtime.cli.main`. The arguments are the serve flags given
on this command line, minus the printing ones, with paths made absolute.
Over HTTP the snippet holds the URL and an `Authorization` header that reads
the token from the client's environment: a token is never printed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

__all__ = ["CLIENTS", "client_config", "launch_command"]

CLIENTS = ("generic", "claude-desktop", "cursor", "windsurf", "vscode")


def launch_command() -> tuple[str, list[str]]:
    """How to start `loci`: the installed script if it is on PATH, else this Python with `-m runtime.cli.main`."""
    found = shutil.which("loci")
    if found:
        return str(Path(found).resolve()), []
    return sys.executable, ["-m", "runtime.cli.main"]


def serve_args(args: argparse.Namespace, tools: tuple[str, ...], db: Path) -> list[str]:
    argv = ["serve"]
    if args.compat:
        argv += ["memory", "--compat"]
    elif args.tools or args.parts:
        argv += ["--tools", ",".join(tools)]
    argv += ["--db", str(db.resolve())]
    if getattr(args, "project", None):
        argv += ["--project", args.project]
    for root in args.root:
        argv += ["--root", str(Path(root).expanduser().resolve())]
    if not args.compat:
        argv += ["--model", args.model]
    if args.mcp_config:
        argv += ["--mcp-config", str(Path(args.mcp_config).resolve())]
    return argv


def client_config(args: argparse.Namespace, tools: tuple[str, ...], db: Path, *, token: bool = False) -> dict[str, Any]:
    name = "loci-memory" if args.compat else "loci"
    if args.http:
        host = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
        entry: dict[str, Any] = {"url": f"http://{host}:{args.port}/mcp"}
        if token:  # the client reads the token from its own environment (VS Code spells that `${env:NAME}`)
            variable = "${env:LOCI_TOKEN}" if args.client == "vscode" else "${LOCI_TOKEN}"
            entry["headers"] = {"Authorization": f"Bearer {variable}"}
        if args.client == "vscode":
            entry = {"type": "http", **entry}
    else:
        command, prefix = launch_command()
        entry = {"command": command, "args": [*prefix, *serve_args(args, tools, db)]}
        if args.client == "vscode":
            entry = {"type": "stdio", **entry}
    key = "servers" if args.client == "vscode" else "mcpServers"
    return {key: {name: entry}}
