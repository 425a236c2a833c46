"""Serving an MCPServer: stdio, or streamable HTTP on loopback with a bearer token.

HTTP binds to 127.0.0.1 by default. With a token, every request must carry
`Authorization: Bearer TOKEN`; anything else gets 401 before it reaches MCP.
The socket listens before the server says on stderr where it serves
(`loci: serving MCP on http://HOST:PORT/mcp`), so a client that waits for
that line connects at once; port 0 picks a free port, and the line names it.
"""

from __future__ import annotations

import hmac
import socket
import sys

from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["BearerAuth", "serve_http", "serve_stdio"]


class BearerAuth:
    """ASGI middleware: refuse HTTP requests without the right bearer token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": b'{"error": "missing or wrong bearer token"}'})
                return
        await self.app(scope, receive, send)


async def serve_stdio(server: MCPServer) -> None:
    await server.run_stdio_async()


async def serve_http(server: MCPServer, *, host: str = "127.0.0.1", port: int = 8765, token: str | None = None) -> None:
    import uvicorn

    app: ASGIApp = server.streamable_http_app(host=host)
    if token:
        app = BearerAuth(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    listening = socket.create_server((host, port))
    bound_host, bound_port = listening.getsockname()[:2]
    print(f"loci: serving MCP on http://{bound_host}:{bound_port}/mcp", file=sys.stderr, flush=True)
    await uvicorn.Server(config).serve(sockets=[listening])
