"""The `memory` MCP server: the memory verbs of `tools/memory.py`.

Loci's errors are the model's to read: a `LociError` raised by a tool (an
empty text, an unknown id) is re-raised as the SDK's `ToolError`, whose
message reaches the client in an `is_error` result. Anything else is a crash,
which the SDK reports without its details.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as MCPToolError

from memory.embed import Embedder
from memory.errors import LociError
from memory.graph import Graph
from memory.store import Store
from tools.memory import MemoryTools

__all__ = ["build_memory_server", "memory_server_for", "readable_errors"]

INSTRUCTIONS = (
    "A long-term memory graph of facts (semantic), episodes (episodic) and procedures (procedural). "
    "Recall before you answer, remember what you learn, link what belongs together."
)


def readable_errors(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """The tool `fn`, with Loci's errors turned into messages the client reads."""

    @functools.wraps(fn)
    async def tool(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        except LociError as exc:
            raise MCPToolError(str(exc)) from exc

    return tool


def build_memory_server(tools: MemoryTools) -> MCPServer:
    server = MCPServer(name="memory", instructions=INSTRUCTIONS)
    for fn in tools.all():
        server.add_tool(readable_errors(fn), name=fn.__name__)
    return server


def memory_server_for(store: Store, embedder: Embedder | None = None) -> MCPServer:
    """The memory server over an open store (kept open by the caller for the server's lifetime)."""
    return build_memory_server(MemoryTools(Graph(store, embedder)))
