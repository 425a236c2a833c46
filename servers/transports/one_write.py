"""HTTP responses whose head and body leave in one write: one segment, one wake-up of the client.

uvicorn writes a response's head (status line and headers) as soon as the
app sends `http.response.start`, and its body when the app sends
`http.response.body`: two writes to the socket, so two TCP segments. A
client waiting for the answer wakes on the first, finds only the head, and
sleeps again until the body comes; the server, meanwhile, is often taken off
its core at the first write by the client it woke. On a loopback call that
is a context switch and a system call each way that carry nothing.

`OneWriteHttp` is uvicorn's httptools protocol with one change: the transport
it writes to holds a response's head (a write that starts with a status
line) until the next write, and sends the two together; a head that no write
follows in the same turn of the event loop goes out at the end of that turn,
so a streamed response's head never waits for its first event. Everything
else the transport does (flow control, closing, what it reports) is the real
transport's, and the bytes on the wire are the same, in the same order.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["OneWriteHttp"]

_STATUS_LINE = b"HTTP/"


class OneWriteHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol on a transport that sends a response's head with what follows it."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_HeadHeld(transport, asyncio.get_running_loop()))  # type: ignore[arg-type]


class _HeadHeld:
    """A transport that holds a write starting with a status line until the next write or the end of the turn."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._head: bytes | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._head is not None:
            head, self._head = self._head, None
            self._transport.write(head + bytes(data))
        elif bytes(data[:5]) == _STATUS_LINE:
            self._head = bytes(data)
            self._loop.call_soon(self._flush)
        else:
            self._transport.write(data)

    def writelines(self, lines: Any) -> None:
        self.write(b"".join(lines))

    def _flush(self) -> None:
        if self._head is not None:
            head, self._head = self._head, None
            if not self._transport.is_closing():
                self._transport.write(head)

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
