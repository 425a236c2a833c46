"""The servers without the MCP SDK's OpenTelemetry middleware.

The SDK puts one middleware on every server it builds, `OpenTelemetryMiddleware`,
which opens a span per message (its attributes, the trace context read from
`_meta`, a tracer looked up through OpenTelemetry's proxy) and records
nothing until an OpenTelemetry SDK with an exporter is installed, which Loci
never installs. It costs about a twentieth of serving a recall. The SDK's
documented way to opt out is to drop it from the server's middleware list;
`untraced` does that, once, in the factory that builds each server, before
the server is handed to anyone.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from mcp.server._otel import OpenTelemetryMiddleware

__all__ = ["untraced"]


class _WithMiddleware(Protocol):
    @property
    def middleware(self) -> list[Any]: ...


S = TypeVar("S", bound=_WithMiddleware)


def untraced(server: S) -> S:
    """`server` (a low-level `Server` or an `MCPServer`) with its OpenTelemetry middleware dropped, the rest kept."""
    server.middleware[:] = [m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)]
    return server
