"""MCP wiring: MCPServer instances built from tools/, the merged `loci` server, and their transports.

The names are resolved when first used (memory/lazy.py): `loci serve` imports
`servers.ready` to answer a client before the MCP SDK has loaded, and that
must not import the SDK through this package.
"""

from __future__ import annotations

from memory.lazy import lazy_members

__all__ = [
    "BUILT_IN",
    "build_app",
    "build_compat_server",
    "build_context_server",
    "build_history_server",
    "build_memory_server",
    "memory_server_for",
    "serve_http",
    "serve_stdio",
]

_HOMES: dict[str, str] = {
    "BUILT_IN": "servers.app",
    "build_app": "servers.app",
    "build_compat_server": "servers.memory_compat",
    "build_context_server": "servers.context",
    "build_history_server": "servers.history",
    "build_memory_server": "servers.memory",
    "memory_server_for": "servers.memory",
    "serve_http": "servers.transport",
    "serve_stdio": "servers.transport",
}

__getattr__ = lazy_members(__name__, _HOMES)
