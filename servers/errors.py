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

A home whose database is unavailable (`StoreUnavailable`: PostgreSQL down or
restarting, a SQLite lock held past the busy timeout) is not the model's
mistake and not the tool's answer: nothing is wrong with the call, and the
same call may succeed in a moment. So it is a protocol error, the same on
every path and transport (`unavailable`): JSON-RPC code `STORE_UNAVAILABLE`
(-32010, in the band JSON-RPC leaves to the implementation; the MCP SDK's own
codes there, -32000 and -32001, say a connection closed or a request timed
out, which this is not), the store's one line as the message, and in `data`
the seconds to wait before trying again (`retryAfter`) and, for a write whose
commit the database never confirmed, `inDoubt: true`. The SDK passes an
`MCPError` raised by a tool through as the request's error, and Loci's thin
paths map it as the SDK does, so a client sees one answer whichever path
served it. `answers_unavailable` does the same for the server's own handlers
(resources, completions, the confirmation gate), and a token that cannot be
checked gets it too (servers/auth/scoped.py).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from mcp.server.mcpserver.exceptions import ToolError as MCPToolError
from mcp.shared.exceptions import MCPError

from loci.memory.errors import LociError, StoreUnavailable

__all__ = ["RETRY_AFTER_S", "STORE_UNAVAILABLE", "answers_unavailable", "readable_errors", "unavailable"]

STORE_UNAVAILABLE = -32010
RETRY_AFTER_S = 1  # what a client is told to wait: a PostgreSQL call waits 1 s once it has found the database away

P = ParamSpec("P")
T = TypeVar("T")


def unavailable(exc: StoreUnavailable) -> MCPError:
    """The JSON-RPC error for a request the home's database could not serve now (see the module docstring)."""
    data: dict[str, Any] = {"retryAfter": RETRY_AFTER_S}
    if exc.in_doubt:
        data["inDoubt"] = True
    return MCPError(code=STORE_UNAVAILABLE, message=str(exc), data=data)


def answers_unavailable(fn: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """`fn`, a request handler, whose `StoreUnavailable` is the request's JSON-RPC error (`unavailable`)."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await fn(*args, **kwargs)
        except StoreUnavailable as exc:
            raise unavailable(exc) from exc

    return wrapper


def readable_errors(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        except StoreUnavailable as exc:
            raise unavailable(exc) from exc
        except LociError as exc:
            raise MCPToolError(str(exc)) from exc
        except UnicodeEncodeError as exc:  # JSON can carry a lone surrogate ("\ud800"), which no text column takes
            raise MCPToolError(f"the arguments hold text that is not valid Unicode ({exc.reason})") from exc
        except sqlite3.Error as exc:
            raise MCPToolError(f"the Loci home failed: {exc}") from exc

    return wrapper
