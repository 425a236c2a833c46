"""MCP wiring: MCPServer instances built from tools/, the merged `loci` server, and their transports."""

from servers.app import build_app, register_tool_set
from servers.context import build_context_server
from servers.history import build_history_server
from servers.memory import build_memory_server, memory_server_for
from servers.memory_compat import build_compat_server
from servers.transport import serve_http, serve_stdio

__all__ = [
    "build_app",
    "build_compat_server",
    "build_context_server",
    "build_history_server",
    "build_memory_server",
    "memory_server_for",
    "register_tool_set",
    "serve_http",
    "serve_stdio",
]
