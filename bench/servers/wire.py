"""A load generator's MCP client: streamable HTTP written and read by hand on one kept-alive connection.

`loci bench team` holds each server to a quarter of a core, so the clients
must cost little beside a server's call or they, not the servers, become
what limits the load. An httpx client spends about 1.3 ms of CPU on a call
(its request and response objects, header models, the connection pool),
about a third of what the server spends answering it. `WireClient` spends a
fraction of that: it writes each request's bytes from a template, reads the
status line and headers up to the blank line, then the body by its
`Content-Length` or its chunks, and takes the JSON-RPC message from the
last `data:` line of a server-sent event (or the body itself, as JSON). It
speaks only what `loci serve --http` answers (HTTP/1.1, keep-alive), which
is all a benchmark needs; anything else is a `WireError`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = ["WireClient", "WireError"]

PROTOCOL = "2025-06-18"
HEAD_LIMIT = 65_536


class WireError(Exception):
    """A call that got no usable answer: a refused status, a closed connection or a malformed reply."""


class WireClient:
    """One MCP session over streamable HTTP on one connection: `open` (initialize), then `call(tool, arguments)`
    for its result (`structuredContent`, `isError`)."""

    def __init__(self, stream: anyio.abc.ByteStream, host: str, path: str, token: str | None) -> None:
        self.stream = stream
        self.reader = BufferedByteReceiveStream(stream)
        self.head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json, text/event-stream\r\n"
            "Content-Type: application/json\r\n" + (f"Authorization: Bearer {token}\r\n" if token else "")
        )
        self._next = 0

    @classmethod
    @asynccontextmanager
    async def connect(cls, url: str, token: str | None = None) -> AsyncIterator[WireClient]:
        """A client on a new connection to `url` (http://HOST:PORT/PATH), closed after the block."""
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname is None or parts.port is None:
            raise WireError(f"{url}: an http://HOST:PORT/PATH address")
        async with await anyio.connect_tcp(parts.hostname, parts.port) as stream:
            yield cls(stream, parts.netloc, parts.path or "/", token)

    async def open(self) -> None:
        params = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench-team", "version": "1"}}
        headers, _ = await self._post({"jsonrpc": "2.0", "id": self._id(), "method": "initialize", "params": params})
        extra = f"mcp-protocol-version: {PROTOCOL}\r\n"
        if "mcp-session-id" in headers:  # none from a stateless server
            extra += f"mcp-session-id: {headers['mcp-session-id']}\r\n"
        self.head += extra
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's result, or a `WireError` when the call got no answer."""
        params = {"name": tool, "arguments": arguments}
        body = {"jsonrpc": "2.0", "id": self._id(), "method": "tools/call", "params": params}
        _, message = await self._post(body)
        try:
            return message["result"]
        except (KeyError, TypeError) as exc:
            raise WireError(f"no result in the answer: {str(message)[:200]}") from exc

    def _id(self) -> int:
        self._next += 1
        return self._next

    async def _post(self, message: dict[str, Any]) -> tuple[dict[str, str], Any]:
        body = json.dumps(message, separators=(",", ":")).encode()
        try:
            await self.stream.send(f"{self.head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            headers = await self._head()
            payload = await self._body(headers)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.DelimiterNotFound) as exc:
            raise WireError(f"the connection ended mid-answer ({type(exc).__name__})") from exc
        except ValueError as exc:  # a chunk size or a length that is not a number
            raise WireError(f"a malformed answer: {exc}") from exc
        return headers, _message(headers.get("content-type", ""), payload)

    async def _head(self) -> dict[str, str]:
        lines = (await self.reader.receive_until(b"\r\n\r\n", HEAD_LIMIT)).decode("latin-1").split("\r\n")
        status = lines[0].split(" ", 2)
        if len(status) < 2 or not status[1].startswith("2"):
            raise WireError(f"refused: {lines[0]}")
        fields = (line.split(":", 1) for line in lines[1:] if ":" in line)
        return {name.strip().lower(): value.strip() for name, value in fields}

    async def _body(self, headers: dict[str, str]) -> bytes:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while size := int((await self.reader.receive_until(b"\r\n", 1_024)).split(b";", 1)[0], 16):
                chunks.append(await self.reader.receive_exactly(size))
                await self.reader.receive_exactly(2)
            await self.reader.receive_until(b"\r\n", HEAD_LIMIT)  # the end of the (empty) trailers
            return b"".join(chunks)
        length = int(headers.get("content-length", "0"))
        return await self.reader.receive_exactly(length) if length else b""


def _message(content_type: str, payload: bytes) -> Any:
    """The JSON-RPC message in a body sent as JSON or as server-sent events (the last `data:` line's), or None."""
    if not payload:
        return None
    try:
        if content_type.startswith("text/event-stream"):
            data = [line[5:] for line in payload.split(b"\n") if line.startswith(b"data:")]
            return json.loads(data[-1]) if data else None
        return json.loads(payload)
    except ValueError as exc:
        raise WireError(f"a malformed answer: {payload[:200]!r}") from exc
