"""Bounds on what an HTTP client can hold before it is even authenticated: time, header bytes, connections.

A request's token is checked by the app, once its head (request line and
headers) has been read; everything before that is the HTTP server's. uvicorn
bounds none of it: a connection that sends nothing, or a header a byte at a
time, stays open for ever (its keep-alive timeout starts only after a first
response); llhttp, under httptools, accumulates a header of any size in
memory (four requests with a 64 MiB header cost 263 MB); and connections
are accepted until the process runs out of file descriptors, when the event
loop stops accepting for a second at a time, so a few hundred idle sockets
keep a real client out.

Where the bound lives. uvicorn's own settings do not give it: `h11`'s
`h11_max_incomplete_event_size` caps a head, but only on the pure-Python
parser (about a sixteenth more CPU per call than httptools, which
`loci serve` uses), and there is no header-read timeout in either;
`limit_concurrency` answers 503 only after a head has been read, holding the
connection meanwhile. A guard at the socket, ahead of uvicorn, would have
to parse HTTP again to know where a head ends. The protocol object already
sees each byte before the parser does and is told when the head is
complete, so `BoundedHttp` is uvicorn's httptools protocol (with
servers/transports/one_write.py's one-write responses) with three additions, none of
which touches the app:

- a head must be complete within `header_timeout` seconds of the
  connection's opening, or of the next request's first byte on a kept-alive
  connection (408, then closed); waiting for an answer, or idle between
  requests (uvicorn's keep-alive timeout), is not timed here;
- a head is fed to the parser only up to `max_header_bytes`: a longer one
  gets 431 and the connection is closed, so at most that much (and one
  read, 256 KiB, after a pipelined request) is ever buffered for it;
- at most `max_connections` connections are open: one more closes the
  connection that has been open longest among those with no request being
  answered (reading a head, or idle between requests), or, when every
  connection has a request under way, is itself answered 503 and closed.
  The default leaves `RESERVED_FDS` file descriptors of the process's limit
  for a burst of accepts (at most `ACCEPT_BACKLOG` at a time), the home, the
  regular-expression scans' pipes and the logs, so an accept does not fail
  for want of a descriptor.

A client that resets its connection while its request is read or answered
used to end in a logged traceback (the SDK's "Error handling POST request",
uvicorn's "Exception in ASGI application"); `QuietResets` turns such a
record into one line that names what happened.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.requests import ClientDisconnect

from loci.servers.transports.one_write import OneWriteHttp

__all__ = [
    "ACCEPT_BACKLOG",
    "FULL",
    "HEADER_TIMEOUT_S",
    "MAX_CONNECTIONS",
    "MAX_HEADER_BYTES",
    "RESERVED_FDS",
    "RESET_LOGGERS",
    "TOO_BIG",
    "TOO_SLOW",
    "BoundedHttp",
    "HttpBounds",
    "QuietResets",
    "connection_cap",
]

HEADER_TIMEOUT_S = 10.0
MAX_HEADER_BYTES = 64 * 1024
MAX_CONNECTIONS = 1024
RESERVED_FDS = 128
# Accepted at a time when connections come in a burst: each may need a descriptor before the cap closes another.
ACCEPT_BACKLOG = 64
# What a refused connection is told, in plain text (docs/troubleshooting.md quotes each, a test holds them equal).
FULL = "the server has as many connections as it takes; try again shortly"
TOO_BIG = "the request's headers are over {max_header_bytes} bytes"
TOO_SLOW = "the request's headers did not arrive within {header_timeout:g} s"
RESET_LOGGERS = ("uvicorn.error", "mcp.server.streamable_http", "mcp.server.streamable_http_manager")
_RESETS = (ConnectionError, ClientDisconnect, anyio.BrokenResourceError, anyio.ClosedResourceError)


def connection_cap(reserved: int = RESERVED_FDS, ceiling: int = MAX_CONNECTIONS) -> int:
    """The connections to allow at once: the process's descriptor limit less `reserved`, at most `ceiling`."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return ceiling
    return max(8, min(ceiling, soft - reserved))


@dataclass(frozen=True)
class HttpBounds:
    """What a connection may take before its request reaches the app (see the module docstring)."""

    header_timeout: float = HEADER_TIMEOUT_S
    max_header_bytes: int = MAX_HEADER_BYTES
    max_connections: int = MAX_CONNECTIONS


class BoundedHttp(OneWriteHttp):
    """uvicorn's httptools protocol with a head-read deadline, a head-size cap and a cap on connections.

    uvicorn builds one per connection with its config and state; `bounds` is bound beforehand
    (`functools.partial`, the `http=` given to `uvicorn.Config`)."""

    def __init__(self, *args: Any, bounds: HttpBounds, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bounds = bounds
        self.in_head = True  # reading a request's head (none answered on this connection since)
        self.head_bytes = 0
        self.opened = 0.0
        self.head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.opened = self.loop.time()
        if len(self.connections) > self.bounds.max_connections and not self._make_room():
            self._refuse(503, FULL)
            return
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.in_head:
            self._arm()
            room = self.bounds.max_header_bytes - self.head_bytes
            if len(data) > room:
                head, data = data[:room], data[room:]
                self.head_bytes += len(head)
                if head:
                    super().data_received(head)
                if self.in_head:
                    self._refuse(431, TOO_BIG.format(max_header_bytes=self.bounds.max_header_bytes))
                    return
            else:
                self.head_bytes += len(data)
        if data and not self.transport.is_closing():
            super().data_received(data)

    def on_headers_complete(self) -> None:
        self.in_head = False
        self._disarm()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.in_head, self.head_bytes = True, 0  # what comes next is the next request's head

    def idle(self) -> bool:
        """Whether no request is being answered on this connection (its head is still coming, or none is)."""
        return self.cycle is None or self.cycle.response_complete

    def _make_room(self) -> bool:
        """Close the longest-open idle connection to admit this one; False when every other one is busy."""
        idle = [c for c in self.connections if c is not self and isinstance(c, BoundedHttp) and c.idle()]
        idle = [c for c in idle if not c.transport.is_closing()]
        if not idle:
            return False
        min(idle, key=lambda c: c.opened).transport.close()
        return True

    def _arm(self) -> None:
        if self.head_deadline is None:
            self.head_deadline = self.loop.call_later(self.bounds.header_timeout, self._head_timed_out)

    def _disarm(self) -> None:
        if self.head_deadline is not None:
            self.head_deadline.cancel()
            self.head_deadline = None

    def _head_timed_out(self) -> None:
        self.head_deadline = None
        if self.in_head and not self.transport.is_closing():
            self._refuse(408, TOO_SLOW.format(header_timeout=self.bounds.header_timeout))

    def _refuse(self, status: int, why: str) -> None:
        """Answer `status` with `why` and close, before any request reaches the app."""
        self._disarm()
        self.in_head = False
        body = why.encode("ascii")
        phrase = {408: b"Request Timeout", 431: b"Request Header Fields Too Large", 503: b"Service Unavailable"}
        head = b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\n" % (status, phrase[status])
        head += b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)
        if not self.transport.is_closing():
            self.transport.write(head + body)
            self.transport.close()


class QuietResets(logging.Filter):
    """On the HTTP loggers (`RESET_LOGGERS`): a failure that is only the client going away is one line, not a
    traceback."""

    @classmethod
    def install(cls) -> None:
        for name in RESET_LOGGERS:
            logger = logging.getLogger(name)
            if not any(isinstance(existing, cls) for existing in logger.filters):
                logger.addFilter(cls())

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and _is_reset(exc):
            record.msg, record.args = (
                "a client closed its connection before it was answered (%s)",
                (type(_reset_of(exc)).__name__,),
            )
            record.exc_info = record.exc_text = None
        return True


def _reset_of(exc: BaseException) -> BaseException:
    """The reset inside `exc` (itself, or the one a group of exceptions carries)."""
    if isinstance(exc, BaseExceptionGroup):
        return next(_reset_of(inner) for inner in exc.exceptions if _is_reset(inner))
    return exc


def _is_reset(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return any(_is_reset(inner) for inner in exc.exceptions)
    return isinstance(exc, _RESETS)
