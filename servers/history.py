"""The `history` MCP server: `history_prune` over the agent's own window."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from loci.servers.errors import readable_errors
from loci.tools.history import HistoryTools

__all__ = ["build_history_server"]


def build_history_server(tools: HistoryTools) -> MCPServer:
    server = MCPServer(name="history", instructions="Prune turns from the agent's window, leaving a note.")
    server.add_tool(readable_errors(tools.history_prune))
    return server
