"""The thin path over HTTP: a modern hot call answered in line, as the SDK's single-exchange entry answers it.

See servers/transports/thin.py for why a thin path exists and what it must match. Over
HTTP, `ThinHttp` reads a POST's body once, and when it is a plain modern
`tools/call` of a hot tool (`hot_call`) answers it the way the SDK's entry
(`handle_modern_request`, in the mode the app's session manager serves) would,
with the same checks in the same order: the transport's security check (Host, Origin, Content-Type),
the Accept header, the JSON-RPC envelope, duplicated routing headers, the
header/envelope ladder (`classify_inbound_request`), then `serve_one` and
the entry's own reply writer. It skips only what the entry would do again
for nothing: reading and parsing the body a second time, building the
security check anew for each request, and walking the tool's input schema
for `Mcp-Param-*` declarations when the request has no such header and the
tool declares none (known once per tool, since a server's tools are fixed
when it is built). A request that any of those checks would refuse, or one
with a `Mcp-Param-*` header, or for a tool that declares one, goes to the
entry itself, which answers it as it always does; every other request goes
to the wrapped app with its body as it came. Every POST's body is read here
first (and given to the app as it came), so that a request whose id is not a
string or an integer gets, on either era and either path, the 400 and the
Invalid Request with a null id of servers/transports/request_ids.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp.server.lowlevel import Server
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from loci.servers.transports.request_ids import answer_to_invalid_id, suspect
from loci.servers.transports.thin import HOT_TOOLS, hot_call, parsed

try:  # the SDK's entry and the checks it makes, some of them private names (`thin.py` checks they exist)
    from mcp.server._streamable_http_modern import (
        _SingleExchangeDispatchContext,
        _to_jsonrpc_response,
        _write,
        handle_modern_request,
    )
    from mcp.server.connection import Connection
    from mcp.server.runner import serve_one
    from mcp.server.streamable_http import check_accept_headers
    from mcp.server.transport_security import TransportSecurityMiddleware
    from mcp.shared.inbound import (
        InboundLadderRejection,
        _annotated_positions,
        classify_inbound_request,
        find_duplicated_routing_header,
    )
    from mcp.shared.message import ServerMessageMetadata
    from mcp.shared.transport_context import TransportContext
    from mcp_types import JSONRPCRequest
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
except ImportError:  # pragma: no cover - without them HOT_TOOLS is empty and every request goes to the app
    pass

__all__ = ["ThinHttp"]

_PARAM_HEADER = b"mcp-param-"


class ThinHttp:
    """ASGI in front of a server's streamable HTTP app: a modern hot call is answered here, as the SDK's
    single-exchange entry answers it in its JSON mode; every other request goes to `app` with its body as it came.

    `server` is the low-level server whose `streamable_http_app` `app` is (its session manager holds the lifespan's
    state once `app` has started); `max_body` is that app's body limit, which a body read here obeys too; `hot` the
    tools whose calls take this path (none: every request goes to `app`)."""

    def __init__(self, app: Starlette, server: Server[Any], max_body: int, hot: frozenset[str] = HOT_TOOLS) -> None:
        self.app = app
        self.server = server
        self.max_body = max_body
        self.hot = hot
        self._security: TransportSecurityMiddleware | None = None  # the manager's settings, fixed once it is built
        self._declares: dict[str, bool] = {}  # tool -> whether its input schema declares a Mcp-Param header

    def lifespan(self) -> AbstractAsyncContextManager[Any]:
        """The wrapped app's lifespan (its session manager runs inside it)."""
        return self.app.router.lifespan_context(self.app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body, more, messages = await _read_body(receive, self.max_body)
        replay = _Replay(messages, receive)
        if not more and suspect(body) and (refused := answer_to_invalid_id(parsed(body))) is not None:
            await _refuse(send, refused)  # a session would take it for a notification: 202, and never an answer
            return
        hot = self.hot and _modern_header(scope) and not more and b'"tools/call"' in body
        message = parsed(body) if hot else None
        if not hot_call(message, self.hot):
            await self.app(scope, replay, send)
            return
        await self._answer(message, scope, replay, send)  # type: ignore[arg-type]

    async def _answer(self, message: dict[str, Any], scope: Scope, receive: Receive, send: Send) -> None:
        manager = self.server.session_manager
        state = manager._lifespan_state  # noqa: SLF001 - the state the manager's own entry passes on
        if self._security is None:
            self._security = TransportSecurityMiddleware(manager.security_settings)
        request = Request(scope, receive)
        refused = await self._security.validate_request(request, is_post=True)
        if refused is not None:
            await refused(scope, receive, send)
            return
        verdict = self._plain(request, message, manager.json_response)
        if verdict is None:  # the entry answers it: a refusal, or a header to check against the tool's schema
            entry = handle_modern_request
            await entry(self.server, manager.security_settings, manager.json_response, state, scope, receive, send)
            return
        req, route = verdict
        connection = Connection.from_envelope(route.protocol_version, route.client_info, route.client_capabilities)
        dctx = _SingleExchangeDispatchContext(
            transport=TransportContext(kind="streamable-http", can_send_request=False, headers=request.headers),
            request_id=req.id,
            message_metadata=ServerMessageMetadata(request_context=request),
        )
        reply = serve_one(self.server, dctx, req.method, req.params, connection=connection, lifespan_state=state)
        await _write(await _to_jsonrpc_response(req.id, reply), scope, receive, send)

    def _plain(
        self, request: Request, message: dict[str, Any], json_response: bool
    ) -> tuple[JSONRPCRequest, Any] | None:
        """The request and its route when the entry would pass every check before dispatch; else None. The entry
        takes a request that accepts JSON and, in its streaming mode (`json_response` False, the manager's), SSE
        too; a call it takes is answered in JSON either way (a hot tool sends no notification to stream)."""
        has_json, has_sse = check_accept_headers(request)
        if not has_json or not (json_response or has_sse):
            return None
        try:
            req = JSONRPCRequest.model_validate(message)
        except ValidationError:
            return None
        if find_duplicated_routing_header(request.headers.items()) is not None:
            return None
        route = classify_inbound_request(message, headers=dict(request.headers))
        if isinstance(route, InboundLadderRejection):
            return None
        if any(name.startswith(_PARAM_HEADER) for name, _ in request.scope["headers"]):
            return None
        if self._declares_header(message["params"]["name"]):
            return None
        return req, route

    def _declares_header(self, tool: str) -> bool:
        if tool not in self._declares:
            lookup = self.server.get_tool_input_schema
            schema = lookup(tool) if lookup is not None else None
            self._declares[tool] = lookup is None or next(iter(_annotated_positions(schema)), None) is not None
        return self._declares[tool]


async def _refuse(send: Send, answer: str) -> None:
    """A 400 whose body is `answer`, a JSON-RPC error, as the SDK's entry answers a body that is not a request."""
    body = answer.encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _modern_header(scope: Scope) -> bool:
    for name, value in scope.get("headers") or ():
        if name == b"mcp-protocol-version":
            return value.decode("latin-1") in MODERN_PROTOCOL_VERSIONS
    return False


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, bool, list[Mapping[str, Any]]]:
    """The request's body (up to `limit` bytes), whether more was left unread, and the messages read."""
    messages: list[Mapping[str, Any]] = []
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return b"", True, messages
        chunk = message.get("body", b"")
        parts.append(chunk)
        size += len(chunk)
        if size > limit:  # the app answers it (413), from the messages read here
            return b"", True, messages
        if not message.get("more_body", False):
            return b"".join(parts), False, messages


class _Replay:
    """An ASGI `receive` that gives back the messages already read, then reads on."""

    def __init__(self, messages: list[Mapping[str, Any]], receive: Receive) -> None:
        self.messages = messages
        self.receive = receive

    async def __call__(self) -> Any:
        if self.messages:
            return self.messages.pop(0)
        return await self.receive()
