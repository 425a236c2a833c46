"""Serving the `loci` server: stdio, or streamable HTTP, safe by default.

HTTP binds 127.0.0.1 unless told otherwise, and a bind to any other address
refuses to start without a token: anyone who can reach the port could
otherwise run tasks and read what lies under the roots. With a token, every
request must carry `Authorization: Bearer TOKEN` (the scheme in any case,
RFC 7235), compared in constant time; anything else gets 401 before it
reaches MCP. Off loopback the token must have at least `MIN_TOKEN_CHARS`
characters (`check_bind`). On loopback the SDK validates Host and Origin
against DNS rebinding (loopback names only); off loopback they are not
checked (the names a client may use for this machine are not known here),
and the bearer token is the guard. Request bodies over `MAX_BODY_BYTES` get
413. The access log is off unless asked for, and it
never shows a token: tokens travel only in a header, which it does not print.

The socket listens before the server says on stderr where it serves
(`loci: serving MCP on http://HOST:PORT/mcp`), so a client that waits for
that line connects at once; port 0 picks a free port, and the line names it.
"""

from __future__ import annotations

import copy
import hmac
import ipaddress
import os
import socket
import sys
from pathlib import Path
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from memory.errors import UsageError
from memory.regular import read_regular
from servers.stdio import serve_stdio

__all__ = [
    "MAX_BODY_BYTES",
    "MIN_TOKEN_CHARS",
    "BearerAuth",
    "check_bind",
    "is_loopback",
    "read_token",
    "serve_http",
    "serve_stdio",
]

MAX_BODY_BYTES = 4 * 1024 * 1024
MIN_TOKEN_CHARS = 16
MAX_TOKEN_FILE_BYTES = 64 * 1024
LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token(token: str | None = None, token_file: str | Path | None = None) -> str | None:
    """The bearer token: from `token_file` if given (first line), else `token`, else `$LOCI_TOKEN`."""
    if token_file is not None:
        try:
            text = read_regular(token_file, MAX_TOKEN_FILE_BYTES).decode("utf-8", "replace").strip()
        except OSError as exc:
            raise UsageError(f"cannot read the token file {token_file}: {exc.strerror}") from exc
        if not text:
            raise UsageError(f"the token file {token_file} is empty")
        return text.splitlines()[0].strip()
    return token or os.environ.get("LOCI_TOKEN") or None


class BearerAuth:
    """ASGI middleware: refuse HTTP requests without the right bearer token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.authorized(scope):
            body = b'{"error": "missing or wrong bearer token"}'
            headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def authorized(self, scope: Scope) -> bool:
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        scheme, _, credentials = given.strip().partition(b" ")
        # Compare even when the scheme is wrong, so the time taken says nothing about the token.
        same = hmac.compare_digest(credentials.strip(), self.expected)
        return scheme.lower() == b"bearer" and same


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve a non-loopback `host` without a token, or with one short enough to guess."""
    if is_loopback(host):
        return
    if token is None:
        raise UsageError(f"refusing to serve {host} without a token: pass --token-file FILE or set LOCI_TOKEN")
    if len(token) < MIN_TOKEN_CHARS:
        raise UsageError(
            f"refusing to serve {host} with a {len(token)}-character token: use at least {MIN_TOKEN_CHARS} "
            "(python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )


def security_for(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection on loopback (loopback names only); none elsewhere, where the token guards."""
    if is_loopback(host):
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    return None


def http_app(
    server: Server[Any] | MCPServer, *, host: str, token: str | None, max_body: int = MAX_BODY_BYTES
) -> ASGIApp:
    """The ASGI app `serve_http` runs: MCP at /mcp, behind the token check when there is a token."""
    check_bind(host, token)
    app: ASGIApp = server.streamable_http_app(
        host=host, transport_security=security_for(host), max_request_body_size=max_body
    )
    return BearerAuth(app, token) if token else app


async def serve_http(
    server: Server[Any] | MCPServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    max_body: int = MAX_BODY_BYTES,
    access_log: bool = False,
) -> None:
    import uvicorn

    app = http_app(server, host=host, token=token, max_body=max_body)
    # uvicorn's access line (at info, on stderr like every log) is the client, method, path and status: never a header.
    level = "info" if access_log else "warning"
    logs = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    logs["handlers"]["access"]["stream"] = "ext://sys.stderr"
    config = uvicorn.Config(
        app, host=host, port=port, log_level=level, access_log=access_log, log_config=logs, lifespan="on"
    )
    listening = socket.create_server((host, port))
    # Accepted sockets inherit this: without it each streamed response waits out a delayed ACK (~40 ms on Linux).
    listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    bound_host, bound_port = listening.getsockname()[:2]
    print(f"loci: serving MCP on http://{bound_host}:{bound_port}/mcp", file=sys.stderr, flush=True)
    await uvicorn.Server(config).serve(sockets=[listening])
