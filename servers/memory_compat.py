"""A drop-in for the reference MCP memory server, over Loci's memory graph.

`build_compat_server` serves the nine tools of `tools/memory_compat.py`
under the reference's names, titles and hints. Run it over stdio with
`python -m loci.servers.memory_compat --db PATH` or
`loci serve memory --compat --db PATH`. Its home follows the rule of every
`loci` command: `--db`, else `$LOCI_DB` when it is set, else
`$LOCI_HOME/loci.db`; it is a SQLite file (the entities' substring search
is SQLite's FTS5), and a connection string is refused in one line, exit 2.
Either way it is served on `servers/transports/stdio.py`'s ends (lines read and written
on the event loop, the search and create calls on the thin path of
servers/transports/thin.py), not the SDK's threaded stdio.
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from loci.memory.engines.sqlite.store import Store, default_db_path
from loci.memory.errors import LociError
from loci.memory.graph.entities import EntityGraph
from loci.memory.location import LOCI_DB
from loci.memory.projects import DEFAULT_PROJECT
from loci.servers.errors import readable_errors
from loci.servers.quoting import QUOTED_TOOLS, quoted
from loci.servers.tracing import untraced
from loci.servers.transports.stdio import serve_stdio
from loci.tools.memory_compat import CompatTools

__all__ = ["build_compat_server", "main"]

READ_ONLY = {"read_graph", "search_nodes", "open_nodes"}
DESTRUCTIVE = {"delete_entities", "delete_observations", "delete_relations"}


def build_compat_server(source: CompatTools | Store, project: str = DEFAULT_PROJECT) -> MCPServer:
    """The compat server, from its tools or from an open store (kept open by the caller)."""
    tools = source if isinstance(source, CompatTools) else CompatTools(EntityGraph(source, project=project))
    server = untraced(MCPServer(name="memory-server"))
    for fn in tools.all():
        name = fn.__name__
        hints = ToolAnnotations(
            readOnlyHint=name in READ_ONLY,
            destructiveHint=name in DESTRUCTIVE,
            idempotentHint=name in READ_ONLY | DESTRUCTIVE,
            openWorldHint=False,
        )
        title = name.replace("_", " ").title()
        tool = quoted(fn) if name in QUOTED_TOOLS else fn  # stored text reaches the model quoted as data
        server.add_tool(readable_errors(tool), name=name, title=title, annotations=hints)
    return server


async def _serve(db: str) -> None:
    async with await Store.open(db) as store:
        await serve_stdio(build_compat_server(store))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loci.servers.memory_compat", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db", default=None, help="the Loci home, a SQLite file (default: $LOCI_DB, else $LOCI_HOME/loci.db)"
    )
    args = parser.parse_args(argv)
    try:
        anyio.run(_serve, args.db or os.environ.get(LOCI_DB) or str(default_db_path()))
    except LociError as exc:
        print(f"loci: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
