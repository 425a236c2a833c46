"""A stdio server that answers at once: the handshake and the tool list before the MCP SDK has loaded.

A client launches `loci serve` for each session and waits for `initialize`
and `tools/list` before the session can start; importing the MCP SDK and the
runtime behind the tools takes seconds on a loaded machine. So the process
answers those from what it already knows while the real server loads in a
worker thread, and then hands the connection over.

What it knows is a listing (`ready.json`, beside this module): the result the
real server gives to `initialize` for each protocol version a client may ask
for (`"*"` for any other), with `serverInfo.version` left for the caller to
fill in, and the tools of each tool set. It is written from the real server
(`runtime/cli/listing.py`) and a test holds it equal to what that server
answers now, so the early answers are the ones the server would give.

`Front` reads the client's lines while the server loads. It answers
`initialize` (when the listing has a result for the version asked), `ping`,
and, once initialized, `tools/list` without a cursor; every other line waits.
When the server is ready it is given, in order, the client's `initialize`
(whose second answer is dropped: the client has its answer), the
`notifications/initialized`, the lines that waited, and then every later line
as it comes. A client that opens with anything but `initialize` (the
stateless protocol's `server/discover`, say) is simply answered by the real
server once it has loaded. Answers may leave in another order than their
requests came, which JSON-RPC allows.

The client's lines are read and the answers written by `servers/pipes.py`:
on the event loop when they are pipes (no thread hop per line), else by
threads; either way a server that fails (a home it cannot open) ends the
process at once, not at the client's next line. While it serves, fd 0 reads
from the null device and fd 1 writes to stderr, as the SDK's own stdio
transport arranges, so a child process or a stray print cannot read the
client's input or write into its replies; the wire is private duplicates of
the two. This module imports only the standard library, anyio and
`servers/pipes.py`.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from servers.pipes import Sink, claim_stdio

__all__ = ["ANY_VERSION", "LISTING_PATH", "Front", "Lines", "Listing", "Serve", "Wire", "serve_ready"]

LISTING_PATH = Path(__file__).with_name("ready.json")
ANY_VERSION = "*"


@dataclass(frozen=True)
class Listing:
    """The answers the real server gives before it is asked anything else (see the module docstring)."""

    initialize: dict[str, dict[str, Any] | None]
    tools: dict[str, list[dict[str, Any]]]

    @classmethod
    def load(cls, path: Path = LISTING_PATH) -> Listing:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(data["initialize"], data["tools"])

    def to_json(self) -> dict[str, Any]:
        return {"initialize": self.initialize, "tools": self.tools}

    def handshake(self, requested: object, version: str) -> dict[str, Any] | None:
        """The `initialize` result for a client asking for `requested`, or None when the listing cannot say."""
        result = self.initialize.get(requested if isinstance(requested, str) else ANY_VERSION)
        if result is None and isinstance(requested, str) and requested not in self.initialize:
            result = self.initialize.get(ANY_VERSION)
        if result is None:
            return None
        return {**result, "serverInfo": {**result["serverInfo"], "version": version}}


@dataclass
class Front:
    """Answers what the listing can while the server loads; keeps the rest, in order, for the server."""

    listing: Listing
    tool_sets: Sequence[str]
    version: str
    opening: str | None = None  # the client's `initialize`, answered here
    opening_id: Any = None
    initialized: str | None = None
    waiting: list[str] = field(default_factory=list)

    def take(self, line: str) -> str | None:
        """The answer to `line` when the front can give it (the line is then done), else None (it waits)."""
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self.waiting.append(line)
            return None
        method, ident = message.get("method"), message.get("id")
        result: dict[str, Any] | None = None
        if method == "initialize" and ident is not None and self.opening is None and not self.waiting:
            params = message.get("params")
            requested = params.get("protocolVersion") if isinstance(params, dict) else None
            result = self.listing.handshake(requested, self.version)
            if result is not None:
                self.opening, self.opening_id = line, ident
        elif self.opening is not None and method == "notifications/initialized" and self.initialized is None:
            self.initialized = line
            return ""
        elif self.opening is not None and ident is not None and method == "ping":
            result = {}
        elif self.initialized is not None and ident is not None and method == "tools/list" and not _cursor(message):
            result = {"tools": [tool for name in self.tool_sets for tool in self.listing.tools[name]]}
        if result is None:
            self.waiting.append(line)
            return None
        return json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}, ensure_ascii=False)

    def handover(self) -> list[str]:
        """The lines the server must read first: the opening, the client's `initialized`, what waited."""
        opening = [line for line in (self.opening, self.initialized) if line is not None]
        return [*opening, *self.waiting]

    def is_echo(self, line: str) -> bool:
        """Whether `line`, written by the server, is its answer to the opening the front already answered."""
        if self.opening is None:
            return False
        try:
            message = json.loads(line)
        except ValueError:
            return False
        return isinstance(message, dict) and message.get("id") == self.opening_id and "method" not in message


def _cursor(message: dict[str, Any]) -> object:
    params = message.get("params")
    return params.get("cursor") if isinstance(params, dict) else None


class Wire:
    """The client's end: lines written whole, one writer at a time, echoes of the opening dropped once."""

    def __init__(self, out: Sink, front: Front) -> None:
        self.out, self.front = out, front
        self.lock = anyio.Lock()
        self.echoed = False
        self.pending = ""

    async def send(self, line: str) -> None:
        async with self.lock:
            await self.out.put(line.encode("utf-8") + b"\n")

    async def write(self, text: str) -> None:
        """The server's side of the wire (the SDK's stdio transport writes a line, then flushes)."""
        self.pending += text
        while "\n" in self.pending:
            line, self.pending = self.pending.split("\n", 1)
            if not self.echoed and self.front.is_echo(line):
                self.echoed = True
                continue
            await self.send(line)

    async def flush(self) -> None:
        return None


class Lines:
    """The server's input: the handed-over lines, then the client's as they come."""

    def __init__(self, receive: anyio.abc.ObjectReceiveStream[str]) -> None:
        self.receive = receive

    def __aiter__(self) -> AsyncIterator[str]:
        return self.receive.__aiter__()


# `load()` runs in a worker thread (the imports), and returns how to serve: `serve(lines, wire)` runs the real
# server on them until its input ends.
Serve = Callable[[Lines, Wire], Awaitable[None]]


async def serve_ready(listing: Listing, tool_sets: Sequence[str], version: str, load: Callable[[], Serve]) -> None:
    """Serve MCP on stdio: early answers from `listing`, then the server `load()` builds (see the docstring)."""
    front = Front(listing, tool_sets, version)
    send, receive = anyio.create_memory_object_stream[str](math.inf)
    state = {"ready": False, "ended": False}
    with claim_stdio() as (source, sink):
        wire = Wire(sink, front)
        try:
            async with anyio.create_task_group() as group:

                async def real() -> None:
                    serve = await anyio.to_thread.run_sync(load, abandon_on_cancel=True)
                    for line in front.handover():
                        send.send_nowait(line)
                    state["ready"] = True
                    if state["ended"]:
                        send.close()
                    with receive:
                        await serve(Lines(receive), wire)
                    group.cancel_scope.cancel()

                group.start_soon(real)
                async for raw in source.lines():
                    line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                    if not line.strip():
                        continue
                    if state["ready"]:
                        await send.send(line)
                    elif answer := front.take(line):
                        await wire.send(answer)
                state["ended"] = True
                if state["ready"]:
                    send.close()
                elif not front.waiting:
                    group.cancel_scope.cancel()  # the client left with every question answered: nothing to load
        except BaseExceptionGroup as failed:
            if len(failed.exceptions) == 1:  # one failure (the home cannot be opened, say): raise it as itself
                raise failed.exceptions[0] from None
            raise
