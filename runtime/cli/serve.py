"""`loci serve`: Loci's tools as an MCP server, over stdio or streamable HTTP.

    loci serve                                  context, memory and run_task on stdio
    loci serve --tools context,memory           a subset
    loci serve memory --compat                  a drop-in for @modelcontextprotocol/server-memory
    loci serve --http --port 8765               on 127.0.0.1; another --host needs --token-file or LOCI_TOKEN
    loci serve --print-config --client vscode   the snippet an MCP client needs to launch this server

While it serves, a background worker runs the memory graph's refinement
jobs (`runtime.background`), except in the compatibility mode.

`run_task` runs the whole agent on a task (`runtime.task_tool`); the files
it and the context tools may load must lie under a `--root`. With
`--mcp-config FILE`, the agent behind `run_task` also uses the servers of
that `mcpServers` file. The tool sets are those of `servers.app.TOOL_SETS`:
the built-in ones, and those runtime modules register on import (`run`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer

import runtime.digest.tool  # noqa: F401  (registers the `digest` tool set)
import runtime.task_tool  # noqa: F401  (registers the `run` tool set: run_task)
from memory.context.paths import Roots
from memory.errors import UsageError
from memory.evolution.evolution import Evolution
from memory.graph.graph import Graph
from memory.projects import ALL
from memory.store import Store, default_db_path
from runtime.background import background_worker
from runtime.cli.client_config import CLIENTS, client_config
from runtime.cli.flags import add_project, at_least, project_of
from runtime.models.specs import DEFAULT_SPEC
from servers.app import TOOL_SETS, build_app, parse_tools
from servers.transport import (
    MAX_BODY_BYTES,
    MAX_SESSIONS,
    SESSION_IDLE_S,
    check_bind,
    read_token,
    serve_http,
    serve_stdio,
)

__all__ = ["SERVED", "register"]

# The tool sets `--tools` chooses from: the built-in ones and those the runtime registers (`run`: run_task).
SERVED = tuple(TOOL_SETS)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("serve", help="serve Loci's tools over MCP (stdio or HTTP)")
    parser.add_argument("parts", nargs="*", default=[], metavar="PART", help="context, memory (default: all)")
    parser.add_argument("--tools", default=None, help=f"comma-separated tool sets to serve: {','.join(SERVED)}")
    parser.add_argument("--compat", action="store_true", help="with `memory`: the reference memory server's tool set")
    parser.add_argument("--db", default=None, help="the SQLite home (default $LOCI_HOME/loci.db)")
    parser.add_argument("--model", default=DEFAULT_SPEC, help="model spec for run_task")
    add_project(parser)
    parser.add_argument(
        "--root", action="append", default=[], help="a directory whose files may be loaded (repeatable)"
    )
    parser.add_argument("--mcp-config", default=None, help="an mcpServers JSON file whose tools run_task's agent uses")
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--token", default=None, help="bearer token for HTTP (prefer --token-file or $LOCI_TOKEN)")
    parser.add_argument("--token-file", default=None, help="a file whose first line is the bearer token")
    parser.add_argument("--max-body", type=int, default=MAX_BODY_BYTES, help="largest HTTP request body, in bytes")
    parser.add_argument("--access-log", action="store_true", help="log each HTTP request (never its headers)")
    parser.add_argument(
        "--max-sessions", type=int, default=MAX_SESSIONS, help=f"HTTP sessions open at once (default {MAX_SESSIONS})"
    )
    parser.add_argument(
        "--session-idle", type=float, default=SESSION_IDLE_S, help="seconds before an idle HTTP session is closed"
    )
    parser.add_argument("--print-config", action="store_true", help="print the client config snippet and exit")
    parser.add_argument("--client", default="generic", choices=CLIENTS, help="the client --print-config is for")
    parser.set_defaults(handler=run)


def chosen_tools(args: argparse.Namespace) -> tuple[str, ...]:
    if args.parts and args.tools:
        raise UsageError("name the tool sets once: either as arguments or with --tools")
    return parse_tools(args.tools if args.tools is not None else list(args.parts), SERVED)


async def run(args: argparse.Namespace) -> int:
    if args.compat and (args.parts != ["memory"] or args.tools):
        raise UsageError("--compat serves the memory part alone: loci serve memory --compat")
    tools = ("memory",) if args.compat else chosen_tools(args)
    at_least(1, max_sessions=args.max_sessions, session_idle=args.session_idle)
    db = Path(args.db).expanduser() if args.db else default_db_path()
    roots = Roots(args.root) if args.root else Roots(None)
    token = read_token(args.token, args.token_file)
    if args.http:
        check_bind(args.host, token)
    if args.print_config:
        print(json.dumps(client_config(args, tools, db, token=token is not None), indent=2))
        return 0
    if args.mcp_config and not Path(args.mcp_config).is_file():
        raise UsageError(f"--mcp-config {args.mcp_config}: no such file")
    if args.compat:
        return await _serve_compat(args, db, token)
    options = {"model": args.model, "mcp_config": args.mcp_config}
    project = project_of(args)
    # The background worker refines the memory graph of every project while the server runs (a job knows its
    # project), on its own connection to the home; the tools see `project` only.
    async with await Store.open(db) as store:
        evolution = Evolution(Graph(store, project=ALL))
        async with background_worker(evolution.jobs, evolution.handlers()):
            app = build_app(store, tools, roots=roots.roots or (), options=options, project=project)
            await _serve(app, args, token)
    return 0


async def _serve_compat(args: argparse.Namespace, db: Path, token: str | None) -> int:
    from servers.memory_compat import build_compat_server

    async with await Store.open(db) as store:
        await _serve(build_compat_server(store, project_of(args)), args, token)
    return 0


async def _serve(server: Server[Any] | MCPServer, args: argparse.Namespace, token: str | None) -> None:
    if args.http:
        await serve_http(
            server,
            host=args.host,
            port=args.port,
            token=token,
            max_body=args.max_body,
            access_log=args.access_log,
            max_sessions=args.max_sessions,
            session_idle=args.session_idle,
        )
    else:  # stdio needs no token: only the client that launched the process talks to it
        await serve_stdio(server)
