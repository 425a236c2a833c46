"""Serving over stdio, where every request gets an answer, a line the SDK cannot read included.

The SDK's stdio transport parses each line into a JSON-RPC message; a line
it cannot parse (nested past the JSON parser's depth limit, not JSON, not a
JSON-RPC shape) reaches the session as an exception, which it logs and
drops, so a client waiting on that request's id waits forever, while over
HTTP the same body gets a 400. `Answering` sits between the transport and
the server: for each such line it writes the JSON-RPC error response
itself, with the request's id when the line names one (read from the line
with a depth-bounded parse, or, when the line is too deep to parse, from
its head or its last member), else with a null id, as JSON-RPC 2.0 says
for a parse error.
Everything else passes through untouched, in order.

Each answer counts in a `Backlog` (servers/transports/pipes.py) while it waits to be
written, the SDK's through `Counted`, the thin path's in its writer, and no
further line is read while too many wait: a client that sends and never
reads fills its pipe instead of the server's memory.

`serve_lines` serves one connection on text lines in and a text stream out:
the hot tool calls of the modern era are answered by servers/transports/thin.py in
line, everything else by the SDK's stdio transport and serving loop (what
the SDK's `Server.run` does: the server's lifespan around the dual-era
loop). `serve_stdio` gives it the ends of `servers/transports/pipes.py` (read and
written on the event loop when they are pipes) instead of the SDK's own,
which spend a worker thread's hop on every line read, written and flushed;
`loci serve` gives it the lines `servers/transports/ready.py` hands over.

Once the server's lifespan has opened the home, `serve_lines` freezes what
the process holds (`gc.freeze`: the imports, the SDK's models, the store):
the cyclic collector's full collections walked all of it, about 95,000
objects, some 70 ms every few thousand calls, a pause in the middle of a
call; the objects each call makes are collected as before.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import AsyncIterable
from types import TracebackType
from typing import Any, Self

import anyio
from anyio import EndOfStream
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import serve_dual_era_loop
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from loci.servers.transports.pipes import Backlog, TextLines, TextWriter, claim_stdio
from loci.servers.transports.thin import HOT_TOOLS, TextOut, ThinLines, lowlevel_of

__all__ = ["Answering", "Counted", "error_reply", "serve_lines", "serve_stdio"]

# The id of a request whose line is too deep to parse: a top-level "id" before anything nested, or the last member
# of the line's object (what the line's closing brace closes is the top level).
_HEAD_ID = re.compile(r'^\s*\{[^{}\[\]]*?"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')
_TAIL_ID = re.compile(r'[,{]\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*\}\s*$')
_TAIL_CHARS = 300


def _request_id(raw: object) -> str | int | None:
    """The id a raw line (or its parsed dict) names, when it names one."""
    if isinstance(raw, dict):
        found = raw.get("id")
        return found if isinstance(found, str | int) and not isinstance(found, bool) else None
    if not isinstance(raw, str | bytes):
        return None
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    try:
        return _request_id(json.loads(text))
    except (ValueError, RecursionError):
        pass
    if match := _HEAD_ID.match(text) or _TAIL_ID.search(text[-_TAIL_CHARS:]):
        found = json.loads(match.group(1))  # a string or an integer, by the pattern
        return found if isinstance(found, str | int) else None
    return None


def error_reply(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error response for a line the transport could not read (`exc`, the SDK's `ValidationError`)."""
    found: str | int | None = None
    code, message = PARSE_ERROR, f"the request could not be read: {exc}"
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        invalid_json = any(error["type"] == "json_invalid" for error in errors)
        code = PARSE_ERROR if invalid_json else INVALID_REQUEST
        first = errors[0] if errors else {}
        why = str(first.get("msg") or "not a JSON-RPC message")
        message = f"{'not readable JSON' if invalid_json else 'not a valid JSON-RPC request'}: {why}"
        found = next((i for error in errors if (i := _request_id(error.get("input"))) is not None), None)
    return JSONRPCError(jsonrpc="2.0", id=found, error=ErrorData(code=code, message=message[:500]))


class Answering:
    """A read stream that answers, on `write`, each line the transport failed to read, and yields the rest."""

    def __init__(self, read: Any, write: Any) -> None:
        self.read = read
        self.write = write

    async def receive(self) -> Any:
        while True:
            item = await self.read.receive()
            if not isinstance(item, Exception):
                return item
            await self.write.send(SessionMessage(error_reply(item)))

    async def aclose(self) -> None:
        await self.read.aclose()

    def __aiter__(self) -> Self:
        return self

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item, where the transport's stream keeps one (the SDK reads it)."""
        return getattr(self.read, "last_context", None)

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class Counted:
    """The SDK's write stream, each message counted in `backlog` while it waits to be taken (`pipes.py`)."""

    def __init__(self, write: Any, backlog: Backlog) -> None:
        self.write = write
        self.backlog = backlog

    async def send(self, item: Any) -> None:
        with self.backlog.answer():
            await self.write.send(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.write, name)

    async def __aenter__(self) -> Self:
        await self.write.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.write.__aexit__(exc_type, exc, tb)


async def serve_lines(
    server: Server[Any] | MCPServer, lines: AsyncIterable[str], out: TextOut, *, hot: frozenset[str] = HOT_TOOLS
) -> None:
    """Serve `server` on `lines` (the client's, in order), writing the answers to `out`, until the lines end; the
    calls of the tools in `hot` on the thin path (servers/transports/thin.py)."""
    lowlevel = lowlevel_of(server)
    async with lowlevel.lifespan(lowlevel) as state, anyio.create_task_group() as calls:
        gc.freeze()  # what the startup built is never garbage: no full collection walks it again
        backlog = Backlog()
        thin = ThinLines(lowlevel, state, lines, out, hot, backlog)
        async with stdio_server(stdin=thin.lines(calls), stdout=thin.writer) as (read, sdk_write):  # type: ignore[arg-type]
            write = Counted(sdk_write, backlog)
            await serve_dual_era_loop(
                lowlevel,
                Answering(read, write),
                write,
                lifespan_state=state,
                init_options=lowlevel.create_initialization_options(),
            )


async def serve_stdio(server: Server[Any] | MCPServer, *, hot: frozenset[str] = HOT_TOOLS) -> None:
    """Serve `server` on this process's stdin and stdout until the client closes stdin."""
    with claim_stdio() as (source, sink):
        await serve_lines(server, TextLines(source), TextWriter(sink), hot=hot)
