"""Serving the `loci` server: stdio, or streamable HTTP, safe by default.

HTTP binds 127.0.0.1 unless told otherwise, and a bind to any other address
refuses to start without a token: anyone who can reach the port could
otherwise run tasks and read what lies under the roots. The token rules are
servers/auth/bearer.py's, which the page (`loci ui`) runs too: with a token, every
request must carry `Authorization: Bearer TOKEN` (the scheme in any case,
RFC 7235), compared in constant time; anything else gets 401 before it
reaches MCP. Off loopback the token must have at least `MIN_TOKEN_CHARS`
characters (`check_bind`). The token is the server's own (`--token-file`),
or, once the home has tokens (`loci tokens add`), one of those: the request
is then served by the app of the token's project only (servers/auth/scoped.py),
and off loopback a server without a token of its own starts only over a
home that has tokens. On loopback the SDK validates the Host header's
name against DNS rebinding (loopback names only), and `SameOrigin` refuses
(403) a browser's Origin that is not this server's scheme, host and port;
off loopback they are not checked (the names a client may use for this
machine are not known here), and the bearer token is the guard. Request
bodies over `MAX_BODY_BYTES` get 413. Sessions are capped: at most
`MAX_SESSIONS` open at once (`--max-sessions`; one more gets 503) and a
session with no request in flight for `SESSION_IDLE_S` (`--session-idle`)
is closed, so clients that initialize and never close cannot grow the
server without bound. With `--stateless` there are no sessions: each
request is answered on its own (no server-to-client requests, notifications
only), so several servers over one home behind a load balancer need no
affinity. The access log is off unless asked for, and it never
shows a token: tokens travel only in a header, which it does not print.

uvicorn parses the requests with httptools (a dependency), which it picks
when it is installed, over the pure-Python h11: about a sixteenth of the
server's CPU time per call. Its protocol is servers/transports/http_bounds.py's, which
bounds what a client holds before its request reaches the token check (a
head must arrive within `--header-timeout` seconds and be at most 64 KiB;
at most `--max-connections` connections, by default what the descriptor
limit leaves room for) and logs a client's reset in one line; it sends a
response's head and body in one write (servers/transports/one_write.py: one segment,
one wake-up of the client), and once the app's lifespan has started, `FrozenAfterStartup`
freezes what the process holds (`gc.freeze`, as servers/transports/stdio.py does), so
the collector's full collections no longer pause a call to walk it.

Stdio is servers/transports/stdio.py's (re-exported here as `serve_stdio`).

The socket listens before the server says on stderr where it serves
(`loci: serving MCP on http://HOST:PORT/mcp`), so a client that waits for
that line connects at once; port 0 picks a free port, and the line names it.
"""

from __future__ import annotations

import copy
import functools
import gc
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from loci.memory.engines.base import Engine
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.projects import check_project
from loci.memory.regular import read_regular
from loci.servers.auth.bearer import MIN_TOKEN_CHARS, check_bind, is_loopback, same_origin
from loci.servers.auth.principals import TOKEN_CACHE_S, Principal, Principals
from loci.servers.auth.scoped import ProjectApps
from loci.servers.transports.http_bounds import ACCEPT_BACKLOG, BoundedHttp, HttpBounds, QuietResets, connection_cap
from loci.servers.transports.stdio import serve_stdio
from loci.servers.transports.thin import HOT_TOOLS, lowlevel_of
from loci.servers.transports.thin_http import ThinHttp

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_SESSIONS",
    "MIN_TOKEN_CHARS",
    "SESSION_IDLE_S",
    "FrozenAfterStartup",
    "TOKEN_CACHE_S",
    "SameOrigin",
    "ServerFor",
    "check_bind",
    "http_app",
    "is_loopback",
    "read_token",
    "serve_http",
    "serve_stdio",
]

MAX_BODY_BYTES = 4 * 1024 * 1024
MAX_TOKEN_FILE_BYTES = 64 * 1024
MAX_SESSIONS = 64
SESSION_IDLE_S = 600.0


def read_token(token: str | None = None, token_file: str | Path | None = None) -> str | None:
    """The bearer token: from `token_file` if given (first line), else `token`, else `$LOCI_TOKEN`."""
    if token_file is not None:
        try:
            text = read_regular(token_file, MAX_TOKEN_FILE_BYTES).decode("utf-8", "replace").strip()
        except OSError as exc:
            raise UsageError(f"cannot read the token file {token_file}: {exc.strerror}") from exc
        except NotFoundError as exc:
            raise NotFoundError(f"cannot read the token file {token_file}: no such file") from exc
        if not text:
            raise UsageError(f"the token file {token_file} is empty")
        return text.splitlines()[0].strip()
    return token or os.environ.get("LOCI_TOKEN") or None


class SameOrigin:
    """ASGI middleware on loopback: a browser's Origin must be this server's scheme, host and port, else 403."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not same_origin(dict(scope.get("headers") or [])):
            body = b'{"error": "requests from another origin are refused"}'
            await send(
                {"type": "http.response.start", "status": 403, "headers": [(b"content-type", b"application/json")]}
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


class FrozenAfterStartup:
    """ASGI: once the app's lifespan has started, everything it and the imports made is moved out of the cyclic
    garbage collector's sight (`gc.freeze`), so no full collection walks it again while the server serves."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def started(message: Message) -> None:
            if message["type"] == "lifespan.startup.complete":
                gc.freeze()
            await send(message)

        await self.app(scope, receive, started)


def security_for(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection on loopback (loopback names only); none elsewhere, where the token guards."""
    if is_loopback(host):
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    return None


ServerFor = Callable[[str, bool], "Server[Any] | MCPServer"]


def http_app(
    server_for: ServerFor,
    *,
    store: Engine,
    project: str,
    host: str,
    token: str | None,
    token_cache: float = TOKEN_CACHE_S,
    max_body: int = MAX_BODY_BYTES,
    max_sessions: int | None = MAX_SESSIONS,
    session_idle: float | None = SESSION_IDLE_S,
    stateless: bool = False,
    hot: frozenset[str] = HOT_TOOLS,
) -> ASGIApp:
    """The ASGI app `serve_http` runs: each request's principal (servers/auth/principals.py) served by the MCP app of
    its project, `server_for(project, read_only)` (servers/auth/scoped.py), and the origin check on loopback. Each app
    holds at most `max_sessions` sessions (a new one past that gets 503), and closes a session with no request in
    flight for `session_idle` seconds (None: no cap, no expiry). A `stateless` app keeps no sessions: each request
    is answered on its own, so any of several servers over one home answers any request. The calls of the tools in
    `hot` take the thin path (servers/transports/thin.py)."""
    check_project(project)

    def make(chosen: str, read_only: bool) -> ThinHttp:
        server = server_for(chosen, read_only)
        lowlevel = lowlevel_of(server)
        app = server.streamable_http_app(
            host=host,
            transport_security=security_for(host),
            max_request_body_size=max_body,
            max_sessions=max_sessions,
            session_idle_timeout=session_idle,
            stateless_http=stateless,
        )
        return ThinHttp(app, lowlevel, max_body, hot)

    # Off loopback a request always needs a token: the server's own, or one of the home's.
    open_without_token = token is None and is_loopback(host)
    owner = Principal("owner", (project,))
    principals = Principals(store, owner, token=token, open_without_token=open_without_token, expiry=token_cache)
    app: ASGIApp = ProjectApps(principals, make)
    return SameOrigin(app) if is_loopback(host) else app


async def serve_http(
    server_for: ServerFor,
    *,
    store: Engine,
    project: str,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    token_cache: float = TOKEN_CACHE_S,
    max_body: int = MAX_BODY_BYTES,
    access_log: bool = False,
    max_sessions: int | None = MAX_SESSIONS,
    session_idle: float | None = SESSION_IDLE_S,
    stateless: bool = False,
    hot: frozenset[str] = HOT_TOOLS,
    bounds: HttpBounds | None = None,
) -> None:
    import uvicorn

    app = http_app(
        server_for,
        store=store,
        project=project,
        host=host,
        token=token,
        token_cache=token_cache,
        max_body=max_body,
        max_sessions=max_sessions,
        session_idle=session_idle,
        stateless=stateless,
        hot=hot,
    )
    app = FrozenAfterStartup(app)
    # uvicorn's access line (at info, on stderr like every log) is the client, method, path and status: never a header.
    level = "info" if access_log else "warning"
    logs = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    logs["handlers"]["access"]["stream"] = "ext://sys.stderr"
    bounds = bounds or HttpBounds(max_connections=connection_cap())
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=level,
        access_log=access_log,
        log_config=logs,
        lifespan="on",
        backlog=ACCEPT_BACKLOG,
        http=functools.partial(BoundedHttp, bounds=bounds),  # type: ignore[arg-type]
    )
    QuietResets.install()
    listening = socket.create_server((host, port))
    # Accepted sockets inherit this: without it each streamed response waits out a delayed ACK (~40 ms on Linux).
    listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    bound_host, bound_port = listening.getsockname()[:2]
    print(f"loci: serving MCP on http://{bound_host}:{bound_port}/mcp", file=sys.stderr, flush=True)
    await uvicorn.Server(config).serve(sockets=[listening])
