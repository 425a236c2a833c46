"""The `context` MCP server: the navigation tools of `tools/context.py`.

MCP wiring only: each tool is registered wrapped in `servers.errors.readable_errors`,
so Loci's errors reach the model as readable `is_error` results (an unknown
id, a range outside the object, a regular expression that does not compile
or runs too long) and anything else stays a crash logged on the server.

Served to a client (`loci serve`, servers/app.py), the set also has
`context_load` and `context_forget` (tools/loading.py), so the client can
bring its own files in; `context_load` reports each file as MCP progress.
Inside a run the agent gets the navigation tools only.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from loci.servers.errors import readable_errors
from loci.tools.context import ContextTools
from loci.tools.loading import LoadingTools

__all__ = ["LOADING_TOOL_NAMES", "TOOL_NAMES", "build_context_server"]

TOOL_NAMES = ("context_list", "context_outline", "context_read", "context_search", "context_ask", "context_map")
LOADING_TOOL_NAMES = ("context_load", "context_forget")

INSTRUCTIONS = (
    "Browse the loaded documents and the agent's own history by id and range: list, outline, "
    "search, then read only the lines you need; ask or map a question over a span to recurse."
)


def build_context_server(tools: ContextTools, loading: LoadingTools | None = None) -> MCPServer:
    server = MCPServer(name="context", instructions=INSTRUCTIONS)
    for name in TOOL_NAMES:
        server.add_tool(readable_errors(getattr(tools, name)))
    if loading is not None:
        server.add_tool(readable_errors(_load_tool(loading)), name="context_load")
        server.add_tool(readable_errors(loading.context_forget))
    return server


def _load_tool(loading: LoadingTools) -> Any:
    async def context_load(path: str, ctx: Context) -> dict[str, Any]:
        async def progress(done: float, total: float | None, message: str) -> None:
            await ctx.report_progress(done, total, message)

        return await loading.context_load(path, progress)

    context_load.__doc__ = LoadingTools.context_load.__doc__
    return context_load
