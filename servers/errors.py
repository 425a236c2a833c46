"""The error seam between Loci's tools and MCP.

The MCP SDK passes the text of its own `ToolError` to the client but hides
any other exception behind "Error executing tool". Each built-in tool is
wrapped with `readable_errors`, which re-raises Loci's errors as the SDK's
`ToolError`: the model reads what went wrong (an unknown id, a bad range)
and can correct itself; so is text that is not valid Unicode (a lone
surrogate, which JSON can carry). The store turns a broken home (read-only,
damaged) into a `StoreError` whose text names the file and the cause, so the
client reads that too; an sqlite3 error the store did not translate is
passed on as its message rather than "Error executing tool". Anything else
stays a crash, logged on the server.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError as MCPToolError

from loci.memory.errors import LociError

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
        except sqlite3.Error as exc:
            raise MCPToolError(f"the Loci home failed: {exc}") from exc

    return wrapper
