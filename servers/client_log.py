"""The logging capability: `logging/setLevel`, and log messages sent to the client at or above it.

MCP clients that speak the handshake protocols set a level with
`logging/setLevel`; the server then sends `notifications/message` for what
it logs at that level or above (`run_task` logs each turn at `info`). The
2026-07-28 revision deprecates the capability in favour of a per-request
level, which the SDK applies itself; the level kept here only filters more.
The SDK's deprecation warnings are silenced at the two calls that raise them.
A line that cannot be sent never fails the tool call: a closed client's is
dropped quietly, any other failure is logged (`loci.server`).
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import anyio
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import EmptyResult, LoggingLevel, SetLevelRequestParams

__all__ = ["LEVELS", "ClientLog"]

log = logging.getLogger("loci.server")

LEVELS: tuple[LoggingLevel, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class ClientLog:
    """The level a client asked for (default `info`) and the filter it implies."""

    def __init__(self, level: LoggingLevel = "info") -> None:
        self.level: LoggingLevel = level

    async def set_level(self, ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
        self.level = params.level
        return EmptyResult()

    def wants(self, level: LoggingLevel) -> bool:
        return LEVELS.index(level) >= LEVELS.index(self.level)

    async def send(self, ctx: Context, level: LoggingLevel, message: str) -> None:
        """Send `message` to the client of `ctx` if its level asks for it; a closed client is not an error."""
        if not self.wants(level):
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            try:
                await ctx.log(level, message, logger_name="loci")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # the client went away: the call goes on
                log.debug("a log line for a closed client was dropped: %s", message)
            except Exception as exc:  # noqa: BLE001 - a log line that cannot be sent must not fail the tool call
                log.warning("could not send a log line to the client (%s: %s): %s", type(exc).__name__, exc, message)
