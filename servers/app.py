"""The `loci` MCP server: the built-in tool sets behind one endpoint.

`loci serve` offers one server whose tools are the union of the built-in
servers' (`context_*`, `memory_*`), so an MCP client configures one entry.
Each built-in server stays its own `MCPServer` (the runtime's host connects
to them one by one, in-process); this module only gathers their tools.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from memory.context import ContextStore
from memory.store import Store
from servers.context import build_context_server
from servers.memory import memory_server_for
from tools.context import ContextTools

__all__ = ["build_app", "merge"]

INSTRUCTIONS = (
    "Loci: browse loaded documents by id and range (context_*), and keep a long-term memory graph "
    "(memory_*): remember facts, recall them ranked with the reasons, link and forget them."
)


def merge(name: str, servers: list[MCPServer], instructions: str | None = None) -> MCPServer:
    """One server offering every tool of `servers`."""
    tools = [tool for server in servers for tool in server._tool_manager.list_tools()]
    return MCPServer(name=name, instructions=instructions, tools=tools)


def build_app(store: Store, parts: tuple[str, ...] = ("context", "memory"), *, contexts: ContextStore | None = None) -> MCPServer:
    servers = []
    if "context" in parts:
        servers.append(build_context_server(ContextTools(contexts or ContextStore(store))))
    if "memory" in parts:
        servers.append(memory_server_for(store))
    return merge("loci", servers, INSTRUCTIONS)
