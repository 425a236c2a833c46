"""`loci serve`: Loci's tools as an MCP server, over stdio or streamable HTTP.

    loci serve                      context and memory tools, plus run_task, on stdio
    loci serve memory --compat      a drop-in for @modelcontextprotocol/server-memory
    loci serve --http --port 8765 --token SECRET

`run_task` runs the whole agent on a task (the model is loaded on first use,
from `--model`) and reports progress after each turn. Files it is given must
lie under a `--root`; without roots it reads only what is already loaded.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context

from memory.context import ContextStore
from memory.errors import UsageError
from memory.paths import Roots
from memory.store import Store, default_db_path
from runtime.cli_run import as_json
from runtime.model import Model
from runtime.run import Limits, RunConfig, TurnTrace
from runtime.session import open_session
from runtime.specs import DEFAULT_SPEC, load_model
from servers.app import build_app
from servers.transport import serve_http, serve_stdio

__all__ = ["TaskRunner", "register"]

PARTS = ("context", "memory")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("serve", help="serve Loci's tools over MCP (stdio or HTTP)")
    parser.add_argument("parts", nargs="*", default=[], metavar="PART", help="context, memory (default: both)")
    parser.add_argument("--compat", action="store_true", help="with `memory`: the reference memory server's tool set")
    parser.add_argument("--db", default=None, help="the SQLite home (default $LOCI_HOME/loci.db)")
    parser.add_argument("--model", default=DEFAULT_SPEC, help="model spec for run_task")
    parser.add_argument("--root", action="append", default=[], help="a directory run_task may read files from")
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--token", default=os.environ.get("LOCI_TOKEN"), help="bearer token for HTTP (default $LOCI_TOKEN)")
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        raise UsageError(f"unknown part {', '.join(sorted(unknown))}; choose from {', '.join(PARTS)}")
    if args.compat and args.parts != ["memory"]:
        raise UsageError("--compat serves the memory part alone: loci serve memory --compat")
    db = Path(args.db) if args.db else default_db_path()
    async with await Store.open(db) as store:
        if args.compat:
            from servers.memory_compat import build_compat_server

            server = build_compat_server(store)
        else:
            roots = [Path(r).resolve() for r in args.root]
            server = build_app(store, tuple(args.parts or PARTS), contexts=ContextStore(store, roots=roots or None))
            runner = TaskRunner(args.model, db, roots)
            server.add_tool(runner.run_task)
        try:
            if args.http:
                await serve_http(server, host=args.host, port=args.port, token=args.token)
            else:
                await serve_stdio(server)
        finally:
            if not args.compat:
                await runner.aclose()
    return 0


class TaskRunner:
    """The `run_task` tool: one model, loaded on first use, one task at a time."""

    def __init__(self, spec: str, db: Path, roots: list[Path]) -> None:
        self.spec, self.db = spec, db
        self.roots = Roots(roots) if roots else None
        self._model: Model | None = None
        self._lock = anyio.Lock()

    async def run_task(self, task: str, ctx: Context, files: list[str] | None = None, max_turns: int = 8) -> dict[str, Any]:
        """Run the Loci agent on a task: it browses the given files with its tools and answers with evidence.

        files: paths under the server's --root directories. max_turns: turns before it must answer."""
        paths = [self._allowed(name) for name in files or []]
        async with self._lock:
            if self._model is None:
                self._model = await load_model(self.spec)

            async def progress(trace: TurnTrace) -> None:
                await ctx.report_progress(trace.turn, max_turns, f"turn {trace.turn}")

            async with open_session(self._model, self.db, RunConfig(limits=Limits(max_turns=max_turns)), files=paths, on_turn=progress) as session:
                result = await session.agent.run(task)
        return as_json(result)

    def _allowed(self, name: str) -> Path:
        if self.roots is None:
            raise UsageError(f"cannot read {name}: this server reads files only under a --root")
        return self.roots.resolve(name)

    async def aclose(self) -> None:
        if self._model is not None:
            await self._model.aclose()

