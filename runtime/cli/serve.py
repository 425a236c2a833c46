"""`loci serve`: Loci's tools as an MCP server, over stdio or streamable HTTP.

    loci serve                                  context, memory, run_task and digest on stdio
    loci serve --tools context,memory           a subset
    loci serve memory --compat                  a drop-in for @modelcontextprotocol/server-memory
    loci serve --http --port 8765               on 127.0.0.1; another --host needs --token-file or LOCI_TOKEN
    loci serve --http --host 0.0.0.0            over a home with tokens (`loci tokens`): each reaches its projects
    loci serve --http --db postgresql://…       a home on PostgreSQL (--stateless: several servers behind a balancer)
    loci serve --print-config --client vscode   the snippet an MCP client needs to launch this server

Over HTTP each request is served by the server of its token's project
(servers/auth/scoped.py): `_serve_full` hands the transport `server_for(project,
read_only)`, which builds that server over the one open home.

While it serves, a background worker runs the memory graph's refinement
jobs (`runtime.session.background`), except in the compatibility mode and
over a home this process cannot write (a read-only file, folder or mount, a
home owned by another user), which it serves for reading: each write is
refused naming the cause.

`run_task` runs the whole agent on a task (`runtime.session.task_tool`), `digest` one
long-document job (`runtime.digest.tool`); the files they and the context
tools may load must lie under a `--root`. With `--mcp-config FILE`, the
agent behind `run_task` also uses the servers of that `mcpServers` file.

The tool sets are given to the server when it is built: `tool_sets()` is the
one list of them (the built-in `context` and `memory`, and the runtime's
`run` and `digest`), and `SERVED` their names, which a test holds equal.

On stdio the process answers a client's `initialize` and `tools/list` at
once, from the listing shipped beside the server (`servers/transports/ready.py`), while
a worker thread imports the MCP SDK and the runtime; the connection is then
handed to the real server. So this module imports neither at the top, and
`serverInfo.version` is Loci's version (`runtime.cli.main.VERSION`).
`LOCI_SERVE_EARLY=0` serves without the early answers (the server answers
once it has loaded): the ablation `loci bench startup` measures.
`LOCI_SERVE_THIN=0` serves every call by the MCP SDK's own path, the hot
tool calls included (servers/transports/thin.py): the ablation `loci bench mcp` and the
tests compare the thin path with.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loci.memory.errors import UsageError
from loci.memory.location import NOT_ON_POSTGRES, is_postgres
from loci.runtime.cli.client_config import CLIENTS, client_config, config_note, render_config
from loci.runtime.cli.flags import add_project, at_least, project_of
from loci.runtime.models.specs import DEFAULT_SPEC
from loci.servers.tool_sets import parse_tools

if TYPE_CHECKING:
    from loci.servers.app import ToolSetFactory
    from loci.servers.transports.ready import Lines, Serve, Wire

__all__ = ["SERVED", "register", "tool_sets"]

log = logging.getLogger("loci.server")

SERVED = ("context", "memory", "run", "digest")
# What serving imports, loaded in the worker thread while the early answers go out (servers/transports/ready.py).
LOADED = (
    "mcp.server.stdio",
    "loci.servers.transports.stdio",
    "loci.servers.app",
    "loci.runtime.session.background",
    "loci.runtime.session.task_tool",
    "loci.runtime.digest.tool",
)


def tool_sets() -> dict[str, ToolSetFactory]:
    """Every tool set `loci serve` offers, by name, in `SERVED`'s order."""
    from loci.runtime.digest.tool import digest_set
    from loci.runtime.session.task_tool import run_task_set
    from loci.servers.app import BUILT_IN

    return {**BUILT_IN, "run": run_task_set, "digest": digest_set}


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("serve", help="serve Loci's tools over MCP (stdio or HTTP)")
    parser.add_argument("parts", nargs="*", default=[], metavar="PART", help="context, memory (default: all)")
    parser.add_argument("--tools", default=None, help=f"comma-separated tool sets to serve: {','.join(SERVED)}")
    parser.add_argument("--compat", action="store_true", help="with `memory`: the reference memory server's tool set")
    parser.add_argument(
        "--db", default=None, help="the home: a SQLite file or postgresql://... (default $LOCI_HOME/loci.db)"
    )
    parser.add_argument("--model", default=DEFAULT_SPEC, help="model spec for run_task and digest")
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
    parser.add_argument("--max-body", type=int, default=None, help="largest HTTP request body, in bytes (4 MiB)")
    parser.add_argument("--access-log", action="store_true", help="log each HTTP request (never its headers)")
    parser.add_argument("--max-sessions", type=int, default=None, help="HTTP sessions open at once (64)")
    parser.add_argument(
        "--stateless", action="store_true", help="HTTP without sessions: any of several servers answers any request"
    )
    parser.add_argument(
        "--session-idle", type=float, default=None, help="seconds before an idle HTTP session is closed (600)"
    )
    parser.add_argument(
        "--header-timeout", type=float, default=None, help="seconds an HTTP client has to send a request's headers (10)"
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=None,
        help="HTTP connections open at once (the descriptor limit less 128, at most 1024)",
    )
    parser.add_argument(
        "--token-cache",
        type=float,
        default=None,
        help="seconds a home token's check is kept; a revoked token is refused after at most this (2; 0: at once)",
    )
    parser.add_argument("--print-config", action="store_true", help="print the client config snippet and exit")
    parser.add_argument("--client", default="generic", choices=CLIENTS, help="the client --print-config is for")
    parser.set_defaults(handler=run)


def chosen_tools(args: argparse.Namespace) -> tuple[str, ...]:
    if args.parts and args.tools:
        raise UsageError("name the tool sets once: either as arguments or with --tools")
    return parse_tools(args.tools if args.tools is not None else list(args.parts), SERVED)


async def run(args: argparse.Namespace) -> int:
    if args.db and is_postgres(args.db) and args.compat:
        raise UsageError(NOT_ON_POSTGRES)  # before serving: the store opens after the client has connected
    if args.compat and (args.parts != ["memory"] or args.tools):
        raise UsageError("--compat serves the memory part alone: loci serve memory --compat")
    tools = ("memory",) if args.compat else chosen_tools(args)
    at_least(1, max_sessions=args.max_sessions, session_idle=args.session_idle, max_connections=args.max_connections)
    at_least(0.1, header_timeout=args.header_timeout)
    at_least(0, token_cache=args.token_cache)
    token = None
    if args.http or args.token or args.token_file:
        from loci.servers.transports.transport import check_bind, read_token

        token = read_token(args.token, args.token_file)
        if args.http:
            check_bind(args.host, token, home_tokens=token is None and await _home_has_tokens(args))
    if args.print_config:
        db = _home(args.db)
        print(render_config(client_config(args, tools, db), args.client))
        print(config_note(args, db), file=sys.stderr)
        return 0
    if args.mcp_config and not Path(args.mcp_config).is_file():
        raise UsageError(f"--mcp-config {args.mcp_config}: no such file")
    if args.http:
        from loci.servers.transports.transport import serve_http

        async def on_http(store: Any, server_for: Any) -> None:
            await serve_http(
                server_for,
                store=store,
                project=project_of(args),
                host=args.host,
                port=args.port,
                token=token,
                **_http_options(args),
                access_log=args.access_log,
            )

        serve = _serve_compat if args.compat else _serve_full
        await serve(args, _home(args.db), tools, on_http)
        return 0
    if args.compat:
        from loci.servers.transports.transport import serve_stdio

        # stdio needs no token: only the client that launched the process talks to it
        await _serve_compat(args, _home(args.db), tools, _on_stdio(serve_stdio, project_of(args)))
        return 0
    if os.environ.get("LOCI_SERVE_EARLY") == "0":
        from loci.servers.transports.transport import serve_stdio

        await _serve_full(args, _home(args.db), tools, _on_stdio(serve_stdio, project_of(args)))
        return 0
    from loci.runtime.cli.main import VERSION
    from loci.servers.transports.ready import Listing, serve_ready

    await serve_ready(Listing.load(), tools, VERSION, lambda: _loaded(args, tools))
    return 0


async def _home_has_tokens(args: argparse.Namespace) -> bool:
    """Whether the home has tokens of its own (then a bind off loopback needs no `--token-file`)."""
    from loci.memory.engines.select import use_engine
    from loci.memory.records.tokens import Tokens

    async with use_engine(_home(args.db)) as store:
        return await Tokens(store).any()


def _on_stdio(serve: Any, project: str) -> Any:
    """A serving callback that serves one connection the owner's server (stdio has no tokens: one client)."""

    async def on_stdio(store: Any, server_for: Any) -> None:
        await serve(server_for(project, False), **_thin())

    return on_stdio


def _loaded(args: argparse.Namespace, tools: tuple[str, ...]) -> Serve:
    """In a worker thread: import the SDK and the runtime, and say how to serve the handed-over connection."""
    for name in LOADED:
        importlib.import_module(name)
    from loci.servers.transports.stdio import serve_lines

    db = _home(args.db)

    async def serve(lines: Lines, wire: Wire) -> None:
        async def on_stdio(store: Any, server_for: Any) -> None:
            await serve_lines(server_for(project_of(args), False), lines, wire, **_thin())

        await _serve_full(args, db, tools, on_stdio)

    return serve


async def _serve_full(args: argparse.Namespace, db: str | Path, tools: tuple[str, ...], serve: Any) -> None:
    """Open the home, run the background worker of every project, and serve the merged server on it:
    `serve(store, server_for)`, where `server_for(project, read_only)` builds the server of one project."""
    from loci.memory.context.paths import Roots
    from loci.memory.engines.select import use_engine
    from loci.memory.evolution.evolution import Evolution
    from loci.memory.graph.graph import Graph
    from loci.memory.projects import ALL
    from loci.runtime.cli.main import VERSION
    from loci.runtime.session.background import background_worker
    from loci.servers.app import build_app

    roots = Roots(args.root) if args.root else Roots(None)
    options = {"model": args.model, "mcp_config": args.mcp_config}
    # The background worker refines the memory graph of every project while the server runs (a job knows its
    # project), on its own connection to the home; the tools of each server see its own project only.
    async with use_engine(db) as store:
        evolution = Evolution(Graph(store, project=ALL))

        def server_for(project: str, read_only: bool) -> Any:
            return build_app(
                store,
                tools,
                tool_sets=tool_sets(),
                roots=roots.roots or (),
                options=options,
                version=VERSION,
                project=project,
                read_only=read_only,
            )

        if store.read_only:  # reads are served; each write says why it cannot be done, and no job can run
            log.warning(
                "the Loci home %s is read-only to this process (%s): serving reads", store.location, store.read_only
            )
            await serve(store, server_for)
            return
        async with background_worker(evolution.jobs, evolution.handlers()):
            await serve(store, server_for)


async def _serve_compat(args: argparse.Namespace, db: str | Path, tools: tuple[str, ...], serve: Any) -> None:
    from loci.memory.engines.sqlite.store import Store
    from loci.servers.memory_compat import build_compat_server

    async with await Store.open(db) as store:

        def server_for(project: str, read_only: bool) -> Any:
            if read_only:
                raise UsageError("the compatible memory server has no read-only tool set: serve it without --compat")
            return build_compat_server(store, project)

        await serve(store, server_for)


def _http_options(args: argparse.Namespace) -> dict[str, Any]:
    """The HTTP limits given on the command line; the transport's own defaults for the rest."""
    given = {
        "max_body": args.max_body,
        "max_sessions": args.max_sessions,
        "session_idle": args.session_idle,
        "token_cache": args.token_cache,
        "stateless": args.stateless or None,
    }
    options = {name: value for name, value in given.items() if value is not None} | _thin()
    if args.header_timeout is not None or args.max_connections is not None:
        from loci.servers.transports.http_bounds import HttpBounds, connection_cap

        timeout = args.header_timeout or HttpBounds.header_timeout
        options["bounds"] = HttpBounds(header_timeout=timeout, max_connections=args.max_connections or connection_cap())
    return options


def _thin() -> dict[str, Any]:
    """No hot tools when `LOCI_SERVE_THIN=0` (every call on the SDK's path), else the transport's own."""
    return {"hot": frozenset()} if os.environ.get("LOCI_SERVE_THIN") == "0" else {}


def _home(db: str | None) -> str | Path:
    """The home to open: a connection string as given, a path expanded, or the default SQLite file."""
    from loci.memory.engines.sqlite.store import default_db_path

    if db and is_postgres(db):
        return db
    return Path(db).expanduser() if db else default_db_path()
