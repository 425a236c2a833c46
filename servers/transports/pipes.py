"""Lines in and out of a stdio server's pipes, on the event loop: no worker thread per line.

A stdio server reads one line per request and writes one per answer. Read
and written through worker threads (a thread that reads the client's lines
and hands each to the loop, a thread hop per written line), each line costs
a hop between threads, a tenth of a millisecond apiece on a busy machine,
and more than the rest of the transport. An MCP client gives its server
sockets (asyncio and libuv make a child's stdin a socket pair) or pipes.
A socket is read and written with `MSG_DONTWAIT` on each call; a pipe
`open_pipe` reopens through `/proc/self/fd` as a new open file description
of the same pipe, made non-blocking. Either way the descriptor the process
was given keeps its mode, so the client, or a wrapper that shares it, never
sees a change. The loop then reads what has arrived once the end is
readable (`anyio.wait_readable`) and writes what fits, waiting for room
when it is full (`anyio.wait_writable`). Anything else (a terminal, a
regular file, no `/proc`) gets the threaded `Threaded` ends, which read
with a daemon thread (a blocked read never holds up the process's exit) and
write in a worker thread.

`TextLines` and `TextWriter` give the SDK's `stdio_server` the same ends as
the text streams it reads and writes (`stdin=`, `stdout=`).

`Backlog` is the bound on what a client that stops reading can make the
server hold: each answer counts while it waits to be written (for the pipe
to have room, or for the writer before it), and the server reads no further
line while `MAX_ANSWERS_WAITING` answers wait. The client's own writes then
block on a full pipe, which is the backpressure a pipe gives; once it reads
again the answers drain and reading resumes.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import stat
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import BinaryIO, Protocol

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread

__all__ = [
    "MAX_ANSWERS_WAITING",
    "Backlog",
    "LineSource",
    "Pipe",
    "Sink",
    "Socket",
    "TextLines",
    "TextWriter",
    "Threaded",
    "claim_stdio",
    "open_pipe",
]

READ_BYTES = 64 * 1024
MAX_ANSWERS_WAITING = 64


class Backlog:
    """The answers waiting to be written, counted; `room()` waits while `limit` of them wait."""

    def __init__(self, limit: int = MAX_ANSWERS_WAITING) -> None:
        self.limit = limit
        self.waiting = 0
        self._drained: anyio.Event | None = None

    @contextlib.contextmanager
    def answer(self) -> Iterator[None]:
        """Count one answer while the block that writes it runs."""
        self.waiting += 1
        try:
            yield
        finally:
            self.waiting -= 1
            if self._drained is not None and self.waiting < self.limit:
                self._drained.set()
                self._drained = None

    async def room(self) -> None:
        """Return once fewer than `limit` answers wait (at once when they do)."""
        while self.waiting >= self.limit:
            if self._drained is None:
                self._drained = anyio.Event()
            await self._drained.wait()


class LineSource(Protocol):
    def lines(self) -> AsyncIterator[bytes]: ...

    def close(self) -> None: ...


class Sink(Protocol):
    async def put(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class Pipe:
    """A non-blocking descriptor of its own on a pipe: read and written on the loop."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def lines(self) -> AsyncIterator[bytes]:
        """Each line as it arrives (with its newline; the last one may have none), until the pipe's end."""
        parts: list[bytes] = []  # the line being read, in the pieces it came in (a long line costs no re-copying)
        while True:
            try:
                chunk = self._read()
            except BlockingIOError:
                await anyio.wait_readable(self.fd)
                continue
            if not chunk:
                break
            if b"\n" not in chunk:
                parts.append(chunk)
                continue
            *whole, rest = chunk.split(b"\n")
            whole[0] = b"".join([*parts, whole[0]])
            parts = [rest] if rest else []
            for line in whole:
                yield line + b"\n"
        if parts:
            yield b"".join(parts)

    async def put(self, data: bytes) -> None:
        """Write all of `data`, waiting for room while the pipe is full."""
        view = memoryview(data)
        while view:
            try:
                view = view[self._write(view) :]
            except BlockingIOError:
                await anyio.wait_writable(self.fd)

    def _read(self) -> bytes:
        return os.read(self.fd, READ_BYTES)

    def _write(self, data: memoryview) -> int:
        return os.write(self.fd, data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class Socket(Pipe):
    """A socket (what asyncio and libuv give a child for its stdin): read and written on the loop, each call
    non-blocking by its flags (`MSG_DONTWAIT`), so the descriptor's own mode is never changed."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock.fileno())
        self.sock = sock

    def _read(self) -> bytes:
        return self.sock.recv(READ_BYTES, socket.MSG_DONTWAIT)

    def _write(self, data: memoryview) -> int:
        return self.sock.send(data, socket.MSG_DONTWAIT)

    def close(self) -> None:
        self.sock.detach()
        super().close()


class Threaded:
    """The ends for what is not a pipe: a daemon thread reads, a worker thread writes."""

    def __init__(self, file: BinaryIO) -> None:
        self.file = file

    async def lines(self) -> AsyncIterator[bytes]:
        send, receive = anyio.create_memory_object_stream[bytes](math.inf)
        token = anyio.lowlevel.current_token()

        def pump() -> None:
            # The loop ended (nobody reads on), or the wire was closed under the read: either way, stop.
            with contextlib.suppress(anyio.RunFinishedError, RuntimeError, ValueError, OSError):
                for raw in iter(self.file.readline, b""):
                    anyio.from_thread.run_sync(send.send_nowait, raw, token=token)
                anyio.from_thread.run_sync(send.close, token=token)

        threading.Thread(target=pump, name="loci stdin", daemon=True).start()
        async with receive:
            async for raw in receive:
                yield raw

    async def put(self, data: bytes) -> None:
        await anyio.to_thread.run_sync(self._write, data)

    def _write(self, data: bytes) -> None:
        self.file.write(data)
        self.file.flush()

    def close(self) -> None:
        return None  # the file is its owner's to close


def open_pipe(file: BinaryIO, *, write: bool) -> Pipe | Threaded:
    """Loop-driven ends on `file` when it is a socket, or a pipe that can be reopened non-blocking, else threaded
    ones."""
    try:
        fd = file.fileno()
        mode = os.fstat(fd).st_mode
        if stat.S_ISSOCK(mode):
            return Socket(socket.socket(fileno=os.dup(fd)))
        if not stat.S_ISFIFO(mode):
            return Threaded(file)
        flags = (os.O_WRONLY if write else os.O_RDONLY) | os.O_NONBLOCK | os.O_CLOEXEC
        return Pipe(os.open(f"/proc/self/fd/{fd}", flags))
    except (OSError, ValueError):  # no /proc, no descriptor, or the other end is gone already
        return Threaded(file)


class TextLines:
    """A pipe's lines as the text lines the SDK's stdio transport iterates (`stdio_server(stdin=...)`)."""

    def __init__(self, source: LineSource) -> None:
        self.source = source

    async def __aiter__(self) -> AsyncIterator[str]:
        async for raw in self.source.lines():
            yield raw.decode("utf-8", errors="replace")


class TextWriter:
    """The text stream the SDK's stdio transport writes (`stdio_server(stdout=...)`): each write goes out whole."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    async def write(self, text: str) -> None:
        await self.sink.put(text.encode("utf-8"))

    async def flush(self) -> None:
        return None


@contextmanager
def claim_stdio() -> Iterator[tuple[LineSource, Sink]]:
    """The client's ends on private duplicates of stdin and stdout; meanwhile fd 0 reads the null device and fd 1
    goes to stderr, so a child process or a stray print cannot read the client's lines or write into the replies."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    stdin, stdout = os.fdopen(wire_in, "rb"), os.fdopen(wire_out, "wb")
    source, sink = open_pipe(stdin, write=False), open_pipe(stdout, write=True)
    try:
        yield source, sink
    finally:  # a reading thread may still be in a read of `stdin`, whose lock a close would wait on: left open
        for end in (source, sink):
            end.close()
        os.dup2(stdin.fileno(), 0)
        os.dup2(stdout.fileno(), 1)
        stdout.close()
