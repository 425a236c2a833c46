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
and, once initialized, `tools/list` without a cursor (no parameters, or a
`_meta` holding only a progress token, as Codex sends), and only in the
plainest shape the SDK accepts (JSON-RPC 2.0, an integer or string id, an
`initialize` with a string `protocolVersion`, `capabilities` and a
`clientInfo` with `name` and `version`); every other line waits, so a line
the SDK would refuse is refused by the SDK, with the answer it gets with
`LOCI_SERVE_EARLY=0`; a request whose id is not a string or an integer is
answered at once with the Invalid Request the server gives it
(servers/transports/request_ids.py). A line is read with memory/json_input.py's bounded
parse: one nested too deep waits for the server like any other it cannot
read. At most `MAX_WAITING` lines wait; past that, reading waits until the
server serves, and from then on a line is read only when the server takes
one (its own bound, servers/transports/stdio.py, then holds the reading back).
When the server is ready it is given, in order, the client's `initialize`
(whose second answer is dropped: the client has its answer), the
`notifications/initialized`, the lines that waited, and then every later line
as it comes. A client that opens with anything but `initialize` (the
stateless protocol's `server/discover`, say) is simply answered by the real
server once it has loaded. Answers may leave in another order than their
requests came, which JSON-RPC allows.

The client's lines are read and the answers written by `servers/transports/pipes.py`:
on the event loop when they are pipes (no thread hop per line), else by
threads; either way a server that fails (a home it cannot open) ends the
process at once, not at the client's next line. While it serves, fd 0 reads
from the null device and fd 1 writes to stderr, as the SDK's own stdio
transport arranges, so a child process or a stray print cannot read the
client's input or write into its replies; the wire is private duplicates of
the two. This module imports only the standard library, anyio,
`servers/transports/pipes.py`, `servers/transports/request_ids.py` and `memory/json_input.py`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from loci.memory.json_input import loads
from loci.servers.transports.pipes import Sink, claim_stdio
from loci.servers.transports.request_ids import answer_to_invalid_id, valid_id

__all__ = ["ANY_VERSION", "LISTING_PATH", "MAX_WAITING", "Front", "Lines", "Listing", "Serve", "Wire", "serve_ready"]

LISTING_PATH = Path(__file__).with_name("ready.json")
ANY_VERSION = "*"
MAX_WAITING = 256  # lines kept for the server while it loads; past that, reading waits until it serves


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
            message = loads(line)
        except ValueError:  # not JSON, or nested past the bound (`TooDeep`): the server answers it
            message = None
        if (refused := answer_to_invalid_id(message)) is not None:
            return refused  # what the server answers it (servers/transports/request_ids.py), and it changes nothing
        if not _plain(message):
            self.waiting.append(line)
            return None
        method, ident, params = message["method"], message.get("id"), message.get("params")
        result: dict[str, Any] | None = None
        opened = self.opening is not None and self.initialized is None and not self.waiting
        if ident is None:
            if opened and method == "notifications/initialized" and not params:
                self.initialized = line
                return ""
        elif method == "initialize" and self.opening is None and not self.waiting and _handshake(params):
            result = self.listing.handshake(params["protocolVersion"], self.version)
            if result is not None:
                self.opening, self.opening_id = line, ident
        elif self.opening is not None and method == "ping" and not params:
            result = {}
        elif self.initialized is not None and method == "tools/list" and _listing_request(params):
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
            message = loads(line)
        except ValueError:
            return False
        return isinstance(message, dict) and message.get("id") == self.opening_id and "method" not in message


# What the early answers take: only what the real server certainly accepts, and answers the same (anything else
# waits for the server, which answers it as it answers it without the early answers).
_MESSAGE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_HANDSHAKE_KEYS = frozenset({"protocolVersion", "capabilities", "clientInfo"})
_CLIENT_INFO_KEYS = frozenset({"name", "version", "title", "description", "websiteUrl"})
_NESTED_CAPABILITIES = frozenset({"sampling", "elicitation", "tasks", "experimental", "extensions"})


def _plain(message: object) -> bool:
    """Whether `message` is a JSON-RPC 2.0 request (an integer or string id) or notification, and nothing more."""
    if not isinstance(message, dict) or message.keys() - _MESSAGE_KEYS or message.get("jsonrpc") != "2.0":
        return False
    return isinstance(message.get("method"), str) and valid_id(message.get("id", 0))


def _listing_request(params: object) -> bool:
    """Whether `params` asks `tools/list` for the whole list: none, `{}`, or only a progress token in `_meta`.

    Codex sends `{"_meta": {"progressToken": 0}}`; the server answers it as it answers no parameters (a list sends
    no progress). A cursor, or any other `_meta` key (the 2026-07-28 envelope), waits for the server.
    """
    if not params:
        return params is None or params == {}
    if not isinstance(params, dict) or params.keys() != {"_meta"} or not isinstance(params["_meta"], dict):
        return False
    meta = params["_meta"]
    token = meta.get("progressToken", 0)
    return meta.keys() <= {"progressToken"} and isinstance(token, int | str) and not isinstance(token, bool)


def _handshake(params: object) -> bool:
    """Whether `params` is an `initialize` request's parameters of the plainest shape the server takes."""
    if not isinstance(params, dict) or params.keys() != _HANDSHAKE_KEYS:
        return False
    if not isinstance(params["protocolVersion"], str):
        return False
    info, capabilities = params["clientInfo"], params["capabilities"]
    if not isinstance(info, dict) or info.keys() - _CLIENT_INFO_KEYS or not {"name", "version"} <= info.keys():
        return False
    if not all(isinstance(value, str) for value in info.values()) or not isinstance(capabilities, dict):
        return False
    roots = capabilities.get("roots", {})
    if not isinstance(roots, dict) or roots.keys() - {"listChanged"}:
        return False
    if not isinstance(roots.get("listChanged", True), bool):
        return False
    nested = (value for name, value in capabilities.items() if name != "roots")
    return capabilities.keys() - {"roots"} <= _NESTED_CAPABILITIES and all(_objects(value) for value in nested)


def _objects(value: object) -> bool:
    """Whether `value` is an object whose members are objects, all the way down (the capabilities' plain shape)."""
    return isinstance(value, dict) and all(_objects(member) for member in value.values())


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

    def __init__(self, handed: list[str], receive: anyio.abc.ObjectReceiveStream[str]) -> None:
        self.handed = handed
        self.receive = receive

    async def __aiter__(self) -> AsyncIterator[str]:
        for line in self.handed:
            yield line
        self.handed = []
        with self.receive:
            async for line in self.receive:
                yield line


# `load()` runs in a worker thread (the imports), and returns how to serve: `serve(lines, wire)` runs the real
# server on them until its input ends.
Serve = Callable[[Lines, Wire], Awaitable[None]]


async def serve_ready(listing: Listing, tool_sets: Sequence[str], version: str, load: Callable[[], Serve]) -> None:
    """Serve MCP on stdio: early answers from `listing`, then the server `load()` builds (see the docstring)."""
    front = Front(listing, tool_sets, version)
    # No buffer: once the server serves, a line is read from the client only when the server takes one, so the
    # server's own bound on answers waiting for the client (servers/transports/stdio.py) holds the reading back.
    send, receive = anyio.create_memory_object_stream[str](0)
    loaded = anyio.Event()
    state = {"ended": False}
    with claim_stdio() as (source, sink):
        wire = Wire(sink, front)
        try:
            async with anyio.create_task_group() as group:

                async def real() -> None:
                    serve = await anyio.to_thread.run_sync(load, abandon_on_cancel=True)
                    lines = Lines(front.handover(), receive)
                    loaded.set()
                    if state["ended"]:
                        send.close()
                    await serve(lines, wire)
                    group.cancel_scope.cancel()

                group.start_soon(real)
                async for raw in source.lines():
                    line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                    if not line.strip():
                        continue
                    if loaded.is_set():
                        await send.send(line)
                        continue
                    if answer := front.take(line):
                        await wire.send(answer)
                    if len(front.waiting) >= MAX_WAITING:
                        await loaded.wait()  # the client wrote ahead of the loading server: read on once it serves
                state["ended"] = True
                if loaded.is_set():
                    send.close()
                elif not front.waiting:
                    group.cancel_scope.cancel()  # the client left with every question answered: nothing to load
        except BaseExceptionGroup as failed:
            if len(failed.exceptions) == 1:  # one failure (the home cannot be opened, say): raise it as itself
                raise failed.exceptions[0] from None
            raise
