"""A thin path for the hot tool calls: the SDK's answer, without the SDK's transport machinery around it.

Why it exists. A `memory_recall` over stdio spends about as much of the
server's CPU around the tool as in it, and most of that is not the request's
meaning but its trip through the SDK's transport: the stdio reader parses the
line into a pydantic message and hands it through an anyio stream to a task
that replays it to the dispatcher, which spawns a task for the request, whose
answer goes through another stream to a writer task that serialises it. Over
HTTP the request passes the Starlette stack (router, two exception layers,
the body limit) and runs in a task group of two tasks (the handler and a
watcher for a disconnect). For the calls a client makes most (`HOT_TOOLS`:
recall, remember, search, and the compatible server's search, open and writes)
this module (and `thin_http.py` over HTTP) does the same work in line: it reads the request once, and hands
it to the SDK's own single-request driver (`serve_one`: the same surface
validation of the request, the same lookup, the tool's arguments checked
against the same schema, the same function called, the same result sieve
and `serverInfo` stamp), and writes the answer the way the SDK's transport
writes it.

What it must match. The bytes a client reads are the SDK path's bytes, for a
result and for an error alike (a test sends the same requests both ways over
stdio and over HTTP and compares them). So the thin path takes a request
only where nothing but the answer can differ, and leaves everything else to
the SDK, untouched and in order:

- only the 2026-07-28 era (each request carries its own envelope in
  `_meta`), where a request needs no connection state: on stdio, only after
  the connection's first request opened that era, which the SDK serves (its
  loop decides the era on the first request it reads, so it must read that
  one); a handshake connection keeps the SDK's path throughout; over HTTP, only a request whose
  `MCP-Protocol-Version` header names a modern version;
- only `tools/call` of a hot tool, which takes no context argument (so it
  sends no notification or progress), without a progress token, with
  exactly the keys a plain request has, an integer or string id;
- errors map as the SDK's entries map them: on stdio the dispatcher's
  ladder (`handler_exception_to_error_data`, the modern loop's
  INTERNAL_ERROR for anything else); over HTTP the single-exchange entry's
  own handler (`handle_modern_request`, in its JSON mode: what it answers
  when the handler completes within its 15 s window without a
  notification, which a hot tool never sends).

`loci serve` takes the thin path unless `LOCI_SERVE_THIN=0` (the SDK's path
for every request: the ablation the benchmark and the tests compare with).

Every line passes here on its way to the SDK, thin path or not, so here a
request whose id is not a string or an integer, which the SDK would take for
a notification and never answer, is answered as JSON-RPC says, with an
Invalid Request and a null id (servers/transports/request_ids.py).

A client's `notifications/cancelled` naming a call on the thin path cancels
it, and, as the SDK does, the call is then never answered. When the client
closes its input, the calls under way finish and are answered; the SDK's
loop drops the requests it has not answered when its input ends, so a hot
call that opened the era, which the SDK serves, is waited for before the
SDK is told the input has ended.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any, Protocol

import anyio
import anyio.abc
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import ErrorData, JSONRPCError, JSONRPCResponse
from pydantic import ValidationError

from loci.servers.transports.pipes import Backlog
from loci.servers.transports.request_ids import answer_to_invalid_id, suspect

# The SDK's own single-request driver and entries, some of them private names: an SDK version without them
# serves every call by its own path (`HOT_TOOLS` empty), which is slower and answers the same.
try:
    from mcp.server._streamable_http_modern import _SingleExchangeDispatchContext
    from mcp.server.connection import Connection
    from mcp.server.runner import _has_modern_envelope, modern_error_data, serve_one
    from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request
    from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
    from mcp.shared.transport_context import TransportContext
except ImportError:  # pragma: no cover - the installed SDK has them (tests/servers/test_thin.py checks)
    AVAILABLE = False
else:
    AVAILABLE = True

__all__ = ["AVAILABLE", "HOT_TOOLS", "TextOut", "ThinLines", "hot_call", "lowlevel_of", "parsed"]

log = logging.getLogger("loci.server")

HOT_TOOLS = frozenset(
    {
        "memory_recall",
        "memory_remember",
        "context_search",
        "search_nodes",
        "open_nodes",
        "create_entities",
        "create_relations",
        "add_observations",
    }
    if AVAILABLE
    else ()
)
_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_CALL_KEYS = frozenset({"name", "arguments", "_meta"})


def lowlevel_of(server: Server[Any] | MCPServer) -> Server[Any]:
    """The low-level server the SDK's drivers and entries take: `server` itself, or the one an `MCPServer` wraps."""
    return server._lowlevel_server if isinstance(server, MCPServer) else server  # noqa: SLF001 - the SDK's own


def hot_call(message: object, hot: frozenset[str] = HOT_TOOLS) -> bool:
    """Whether `message` (a parsed JSON-RPC line or body) is a plain modern `tools/call` of a tool in `hot`."""
    if not isinstance(message, dict) or message.keys() - _REQUEST_KEYS or message.get("jsonrpc") != "2.0":
        return False
    ident = message.get("id")
    if isinstance(ident, bool) or not isinstance(ident, int | str) or message.get("method") != "tools/call":
        return False
    params = message.get("params")
    if not isinstance(params, dict) or params.keys() - _CALL_KEYS or params.get("name") not in hot:
        return False
    meta = params.get("_meta")
    return isinstance(meta, dict) and _has_modern_envelope(params) and "progressToken" not in meta


def parsed(text: str | bytes) -> object:
    """`text` as JSON, or None where the SDK's stricter parser might read it otherwise (NaN, Infinity) or not at all."""
    try:
        return json.loads(text, parse_constant=_refuse)
    except (ValueError, RecursionError):
        return None


def _refuse(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def _opens_modern(message: object) -> bool | None:
    """For a line read before a stdio connection's era is decided: whether it is a request that opens the modern
    era (False: a request that opens the handshake era, or a line that might be one that this module cannot read
    as the SDK does), or None when it cannot be a request (the era stays undecided)."""
    if message is None:
        return False
    if not isinstance(message, dict) or "id" not in message:
        return None
    ident, method, params = message.get("id"), message.get("method"), message.get("params", {})
    plain = message.get("jsonrpc") == "2.0" and isinstance(method, str) and isinstance(params, dict)
    if not plain or isinstance(ident, bool) or not isinstance(ident, int | str):
        return False
    return method != "initialize" and _has_modern_envelope(params)


class TextOut(Protocol):
    async def write(self, text: str) -> None: ...

    async def flush(self) -> None: ...


class ThinLines:
    """Between a stdio server's input lines and the SDK: answers the hot calls itself, passes on every other line.

    `out` is the text stream the answers go to; the SDK's stdio transport is given `writer` for its own, so a line
    written here and one written by the SDK never interleave. The SDK reads `lines(group)`; the hot calls run as tasks
    of `group`, which the caller leaves only when they are answered."""

    def __init__(
        self,
        server: Server[Any],
        lifespan_state: Any,
        source: AsyncIterable[str],
        out: TextOut,
        hot: frozenset[str] = HOT_TOOLS,
        backlog: Backlog | None = None,
    ) -> None:
        self.server = server
        self.hot = hot
        self.state = lifespan_state
        self.source = source
        self.backlog = backlog or Backlog()
        self.writer = _OneAtATime(out, self.backlog, self._written)
        self.modern: bool | None = None  # the era the connection's first request opened
        self.calls: dict[int | str, anyio.CancelScope] = {}
        self.opening: Any = None  # the id of a hot call that opened the era, which the SDK serves
        self.opened = anyio.Event()  # set once the SDK has answered it (or the client cancelled it)

    async def lines(self, group: anyio.abc.TaskGroup) -> AsyncIterator[str]:
        """The lines for the SDK, in order; the hot calls among them answered in tasks of `group`."""
        backlog = self.backlog
        async for line in self.source:
            if backlog.waiting >= backlog.limit:
                await backlog.room()  # the client reads no answers: read no more requests until it does
            if (self.calls or self.opening is not None) and '"notifications/cancelled"' in line:
                self._cancel(line)
            if suspect(line) and (answer := answer_to_invalid_id(parsed(line))) is not None:
                await self.writer.write(answer + "\n")  # the SDK would read it as a notification: never answered
                continue
            if not self.hot or self.modern is False or (self.modern and '"tools/call"' not in line):
                yield line
                continue
            message = parsed(line)
            if self.modern is None:
                self.modern = _opens_modern(message)
                if self.modern is not None:  # the SDK decides its era on the request that opens it: it must see it
                    if self.modern and hot_call(message, self.hot):
                        self.opening = message["id"]  # type: ignore[index]
                    yield line
                    continue
            if self.modern and hot_call(message, self.hot):
                scope = anyio.CancelScope()
                self.calls[message["id"]] = scope  # type: ignore[index]
                group.start_soon(self._answer, message, scope)
                continue
            yield line
        if self.opening is not None:  # the SDK drops what it has not answered when its input ends: not this one
            await self.opened.wait()

    def _written(self, text: str) -> None:
        """Note an answer to the opening call, among the lines the SDK writes, until there is one."""
        if self.opening is None or self.opened.is_set():
            return
        for line in text.splitlines():
            message = parsed(line)
            if isinstance(message, dict) and "method" not in message and message.get("id") == self.opening:
                self.opened.set()

    def _cancel(self, line: str) -> None:
        message = parsed(line)
        if not isinstance(message, dict) or message.get("method") != "notifications/cancelled":
            return
        params = message.get("params")
        if isinstance(params, dict) and self.opening is not None and params.get("requestId") == self.opening:
            self.opened.set()  # the SDK never answers a call the client cancelled
        if isinstance(params, dict):
            scope = self.calls.get(params.get("requestId"))  # type: ignore[arg-type]
            if scope is not None:
                scope.cancel()

    async def _answer(self, message: dict[str, Any], scope: anyio.CancelScope) -> None:
        ident = message["id"]
        try:
            with scope:
                reply: JSONRPCResponse | JSONRPCError = await _stdio_reply(self.server, self.state, message)
        finally:
            if self.calls.get(ident) is scope:
                del self.calls[ident]
        if scope.cancel_called:
            return  # the client cancelled it: never answered, as the SDK does
        await self.writer.write(reply.model_dump_json(by_alias=True, exclude_unset=True) + "\n")


async def _stdio_reply(server: Server[Any], state: Any, message: dict[str, Any]) -> JSONRPCResponse | JSONRPCError:
    """What the SDK's modern stdio loop answers `message`: its dispatcher's result, or its ladder's error."""
    ident, params = message["id"], message["params"]
    try:
        route = classify_inbound_request({"method": "tools/call", "params": params})
        if isinstance(route, InboundLadderRejection):
            raise MCPError(code=route.code, message=route.message, data=route.data)
        connection = Connection.from_envelope(route.protocol_version, route.client_info, route.client_capabilities)
        dctx = _SingleExchangeDispatchContext(
            transport=TransportContext(kind="jsonrpc", can_send_request=False), request_id=ident, message_metadata=None
        )
        try:
            result = await serve_one(server, dctx, "tools/call", params, connection=connection, lifespan_state=state)
        except (MCPError, ValidationError):
            raise
        except Exception as exc:
            error = modern_error_data(exc)
            raise MCPError(code=error.code, message=error.message, data=error.data) from exc
    except Exception as exc:
        found = handler_exception_to_error_data(exc)
        if found is None:
            log.exception("handler for 'tools/call' raised")
            found = ErrorData(code=0, message=str(exc))
        return JSONRPCError(jsonrpc="2.0", id=ident, error=found)
    return JSONRPCResponse(jsonrpc="2.0", id=ident, result=result)


class _OneAtATime:
    """A text stream written one whole write at a time (a pipe's write may wait for room halfway)."""

    def __init__(self, out: TextOut, backlog: Backlog, written: Callable[[str], None]) -> None:
        self.out = out
        self.backlog = backlog
        self.written = written
        self.lock = anyio.Lock(fast_acquire=True)  # taken at once when free: no turn of the loop before each write

    async def write(self, text: str) -> None:
        with self.backlog.answer():
            async with self.lock:
                await self.out.write(text)
                await self.out.flush()
            self.written(text)

    async def flush(self) -> None:
        return None
