"""MCP wiring: MCPServer instances built from tools/, the merged `loci` server, and their transports.

The names are resolved when first used (memory/lazy.py): `loci serve` imports
`servers.ready` to answer a client before the MCP SDK has loaded, and that
must not import the SDK through this package.
"""

from __future__ import annotations

from loci.memory.lazy import lazy_members

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
    "BUILT_IN": "loci.servers.app",
    "build_app": "loci.servers.app",
    "build_compat_server": "loci.servers.memory_compat",
    "build_context_server": "loci.servers.context",
    "build_history_server": "loci.servers.history",
    "build_memory_server": "loci.servers.memory",
    "memory_server_for": "loci.servers.memory",
    "serve_http": "loci.servers.transports.transport",
    "serve_stdio": "loci.servers.transports.transport",
}

__getattr__ = lazy_members(__name__, _HOMES)
