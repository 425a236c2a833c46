"""The error seam between Loci's tools and MCP.

The MCP SDK passes the text of its own `ToolError` to the client but hides
any other exception behind "Error executing tool". Each built-in tool is
wrapped with `readable_errors`, which re-raises Loci's errors as the SDK's
`ToolError`: the model reads what went wrong (an unknown id, a bad range)
and can correct itself; so is text that is not valid Unicode (a lone
surrogate, which JSON can carry). Anything else stays a crash, logged on the
server.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError as MCPToolError

from memory.errors import LociError

__all__ = ["readable_errors"]


def readable_errors(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        except LociError as exc:
            raise MCPToolError(str(exc)) from exc
        except UnicodeEncodeError as exc:  # JSON can carry a lone surrogate ("\ud800"), which no text column takes
            raise MCPToolError(f"the arguments hold text that is not valid Unicode ({exc.reason})") from exc

    return wrapper
