"""The `context` MCP server: the navigation tools of `tools/context.py`.

MCP wiring only: each tool is registered wrapped in `servers.errors.readable_errors`,
so Loci's errors reach the model as readable `is_error` results (an unknown
id, a range outside the object, a regular expression that does not compile
or runs too long) and anything else stays a crash logged on the server.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from servers.errors import readable_errors
from tools.context import ContextTools

__all__ = ["TOOL_NAMES", "build_context_server"]

TOOL_NAMES = ("context_list", "context_outline", "context_read", "context_search", "context_ask", "context_map")

INSTRUCTIONS = (
    "Browse the loaded documents and the agent's own history by id and range: list, outline, "
    "search, then read only the lines you need; ask or map a question over a span to recurse."
)


def build_context_server(tools: ContextTools) -> MCPServer:
    server = MCPServer(name="context", instructions=INSTRUCTIONS)
    for name in TOOL_NAMES:
        server.add_tool(readable_errors(getattr(tools, name)))
    return server
