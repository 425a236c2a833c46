"""The `context` MCP server: the navigation tools of `tools/context.py`."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from tools.context import ContextTools

__all__ = ["build_context_server"]


def build_context_server(tools: ContextTools) -> MCPServer:
    server = MCPServer(name="context", instructions="Browse the loaded documents and the agent's own history by id and range.")
    for fn in (tools.context_list, tools.context_read, tools.context_search):
        server.add_tool(fn)
    return server
